// `wisp admins`: console users from the command line (the first one, or a lost password), the same
// service the console's first-run setup uses.
import type { Command } from "commander";
import type { WithCore } from "./main.ts";
import { printTable } from "./table.ts";

/** A generated password goes alone on stdout (for scripts), what happened on stderr. */
function report(message: string, password: string, generated: boolean): void {
  if (generated) {
    console.error(`${message}; its generated password is printed below, once: store it now`);
    console.log(password);
  } else {
    console.log(message);
  }
}

export function registerAdminCommands(program: Command, withCore: WithCore): void {
  const admins = program.command("admins").description("manage console users (who log in to /console)");

  admins
    .command("create")
    .description("create a console user; without --password a strong one is generated and printed once")
    .requiredOption("--email <email>", "the user's email, used to log in")
    .option("--account <name>", "the account the user manages (default: the account named default)")
    .option(
      "--password <password>",
      "the password (at least 12 characters); visible to other local users in ps",
    )
    .action((options: { email: string; account?: string; password?: string }) =>
      withCore(async (core) => {
        // Refuse bad options before anything is written, even the default account.
        core.admins.validate({ email: options.email, password: options.password });
        const account = await core.accounts.resolve(options.account);
        const { admin, password } = await core.admins.create(account, {
          email: options.email,
          password: options.password,
        });
        const message = `created console user ${admin.email} (id ${admin.id}) for account ${account.name}`;
        report(message, password, options.password === undefined);
      }),
    );

  admins
    .command("list")
    .description("list console users")
    .option("--account <name>", "only this account's users")
    .action((options: { account?: string }) =>
      withCore(async (core) => {
        const accountId =
          options.account === undefined ? undefined : (await core.accounts.get(options.account)).id;
        const rows = await core.admins.list(accountId);
        printTable(
          ["ID", "EMAIL", "ACCOUNT", "CREATED", "LAST LOGIN"],
          rows.map((a) => [a.id, a.email, a.account, a.created, a.last_login]),
        );
      }),
    );

  admins
    .command("reset-password")
    .description(
      "set a new password (generated and printed once without --password); ends the user's sessions",
    )
    .requiredOption("--email <email>", "the console user's email")
    .option("--password <password>", "the new password (at least 12 characters)")
    .action((options: { email: string; password?: string }) =>
      withCore(async (core) => {
        const { admin, password } = await core.admins.resetPassword(options.email, options.password);
        report(
          `set a new password for console user ${admin.email}`,
          password,
          options.password === undefined,
        );
      }),
    );
}
