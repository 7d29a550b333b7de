// `wisp portals ...`: captive portals, each on a network of its own account.
import type { Command } from "commander";
import type { PortalInput } from "../core/portals/service.ts";
import { ValidationError } from "../core/shared/errors.ts";
import { positiveInteger, type WithCore } from "./main.ts";
import { namedAccount } from "./networks.ts";
import { jsonOption, printList } from "./output.ts";

interface PortalOptions {
  name?: string;
  network?: number;
  successUrl?: string;
  account?: string;
}

function inputOf(options: PortalOptions): PortalInput {
  return { name: options.name, network_id: options.network, success_url: options.successUrl };
}

export function registerPortalCommands(program: Command, withCore: WithCore): void {
  const portals = program.command("portals").description("manage captive portals (guest login pages)");
  const accountOption = "only act if the portal belongs to this account";

  portals
    .command("create")
    .description("create a captive portal on a network of the account")
    .requiredOption("--name <name>", "what guests see it called")
    .requiredOption("--network <network-id>", "the network it serves (same account)", positiveInteger)
    .option("--success-url <url>", "where guests go after logging in (http or https)")
    .option("--account <name>", "the owning account (default: the account named default)")
    .action((options: PortalOptions) =>
      withCore(async (core) => {
        const input = inputOf(options);
        // Refuse bad input before anything is written, even the default account.
        core.portals.validateNew(input);
        const account = await core.accounts.resolve(options.account);
        const portal = await core.portals.create(account.id, input);
        console.log(
          `created captive portal ${portal.id} "${portal.name}" on network ${portal.network_id} ` +
            `for account ${account.name}; login URL ${portal.login_url}`,
        );
      }),
    );

  jsonOption(portals.command("list").description("list captive portals"))
    .option("--account <name>", "only this account's portals")
    .option("--network <network-id>", "only this network's portals", positiveInteger)
    .action((options: { account?: string; network?: number; json?: boolean }) =>
      withCore(async (core) => {
        const rows = await core.portals.listAll(await namedAccount(core, options.account), options.network);
        printList(
          options.json,
          rows,
          ["ID", "ACCOUNT", "NAME", "NETWORK", "LOGIN URL", "SUCCESS URL", "CREATED"],
          (p) => [p.id, p.account, p.name, p.network_id, p.login_url, p.success_url, p.created],
        );
      }),
    );

  portals
    .command("update")
    .description("change a captive portal (--success-url '' removes it)")
    .argument("<portal-id>", "the portal's id (see portals list)", positiveInteger)
    .option("--name <name>", "what guests see it called")
    .option("--network <network-id>", "move it to another network of its account", positiveInteger)
    .option("--success-url <url>", "where guests go after logging in (http or https)")
    .option("--account <name>", accountOption)
    .action((id: number, options: PortalOptions) =>
      withCore(async (core) => {
        const input = inputOf(options);
        if (Object.values(input).every((value) => value === undefined)) {
          throw new ValidationError("nothing to change: give --name, --network or --success-url");
        }
        const owner = await core.portals.locate(id, await namedAccount(core, options.account));
        const portal = await core.portals.update(owner.account_id, id, input);
        console.log(`updated captive portal ${portal.id} "${portal.name}" on network ${portal.network_id}`);
      }),
    );

  portals
    .command("delete")
    .description("delete a captive portal")
    .argument("<portal-id>", "the portal's id (see portals list)", positiveInteger)
    .option("--account <name>", accountOption)
    .action((id: number, options: { account?: string }) =>
      withCore(async (core) => {
        const owner = await core.portals.locate(id, await namedAccount(core, options.account));
        const portal = await core.portals.delete(owner.account_id, id);
        console.log(`deleted captive portal ${portal.id} "${portal.name}"`);
      }),
    );
}
