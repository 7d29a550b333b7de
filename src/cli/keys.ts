import type { Command } from "commander";
import { jsonOption, printList } from "./output.ts";
import { positiveInteger, type WithCore } from "./program.ts";

export function registerKeyCommands(program: Command, withCore: WithCore): void {
  const keys = program.command("keys").description("manage API keys");

  keys
    .command("create")
    .description("create an API key and print it (alone on stdout; it cannot be shown again)")
    .requiredOption("--name <label>", "what the key is for")
    .option("--account <name>", "the account the key acts for (default: the account named default)")
    .option(
      "--permissions <grants>",
      "full, read, or a list like users:read,vouchers:write (scim:write: a SCIM token for Entra ID or Okta)",
      "full",
    )
    .option("--allow-ip <cidrs>", "comma-separated IPv4/IPv6 addresses or CIDRs the key may be used from")
    .option("--rate-limit <per-minute>", "requests per minute (default: the server's)", positiveInteger)
    .action(
      (options: {
        name: string;
        account?: string;
        permissions: string;
        allowIp?: string;
        rateLimit?: number;
      }) =>
        withCore(async (core) => {
          const request = {
            name: options.name,
            permissions: options.permissions,
            allowIps: options.allowIp,
            rateLimit: options.rateLimit,
          };
          // Refuse bad options before anything is written, even the default account.
          core.keys.normalize(request);
          const account = await core.accounts.resolve(options.account);
          const { key, row } = await core.keys.create(account, request);
          console.error(
            `created API key ${row.id} "${row.name}" for account ${account.name}; store it now, it is not shown again`,
          );
          console.log(key);
        }),
    );

  jsonOption(keys.command("list").description("list API keys (masked)"))
    .option("--account <name>", "only this account's keys")
    .action((options: { account?: string; json?: boolean }) =>
      withCore(async (core) => {
        const accountId =
          options.account === undefined ? undefined : (await core.accounts.get(options.account)).id;
        const rows = await core.keys.list(accountId);
        printList(
          options.json,
          rows,
          [
            "ID",
            "ACCOUNT",
            "NAME",
            "KEY",
            "PERMISSIONS",
            "ALLOW-IP",
            "RATE",
            "CREATED",
            "LAST USED",
            "REVOKED",
          ],
          (k) => [
            k.id,
            k.account,
            k.name,
            k.masked,
            k.permissions.join(","),
            k.allowIps.join(","),
            k.rateLimit,
            k.created,
            k.lastUsed,
            k.revoked,
          ],
        );
      }),
    );

  keys
    .command("revoke")
    .description("revoke an API key; it stops working on the next request")
    .argument("<key-id>", "the key's id (see keys list)", positiveInteger)
    .action((id: number) =>
      withCore(async (core) => {
        await core.keys.revoke(id);
        console.log(`revoked API key ${id}`);
      }),
    );
}
