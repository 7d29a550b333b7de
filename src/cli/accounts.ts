import type { Command } from "commander";
import { jsonOption, printList } from "./output.ts";
import type { WithCore } from "./program.ts";

export function registerAccountCommands(program: Command, withCore: WithCore): void {
  const accounts = program.command("accounts").description("manage accounts (tenants)");

  accounts
    .command("create <name>")
    .description("create an account")
    .action((name: string) =>
      withCore(async (core) => {
        const account = await core.accounts.create(name);
        console.log(`created account ${account.name} (id ${account.id})`);
      }),
    );

  jsonOption(accounts.command("list").description("list accounts")).action((options: { json?: boolean }) =>
    withCore(async (core) => {
      const rows = await core.accounts.list();
      printList(options.json, rows, ["ID", "NAME", "CREATED"], (a) => [a.id, a.name, a.created]);
    }),
  );
}
