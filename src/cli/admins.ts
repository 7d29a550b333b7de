// `wisp admins`: console users from the command line (the first one, or a lost password), the same
// service the console's first-run setup uses.
import type { Command } from "commander";
import { ROLE_LIST } from "../core/admins/roles.ts";
import { jsonOption, printList, secretOption } from "./output.ts";
import type { WithCore } from "./program.ts";

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
      "the password (at least 12 characters); visible to other local users in ps: prefer --password-stdin",
    )
    .option("--password-stdin", "read the password from standard input")
    .option("--role <role>", `what the user may do in the console: ${ROLE_LIST} (default owner)`)
    .action(
      (options: {
        email: string;
        account?: string;
        password?: string;
        passwordStdin?: boolean;
        role?: string;
      }) =>
        withCore(async (core) => {
          const given = await secretOption(options.password, options.passwordStdin, "--password");
          const input = { email: options.email, password: given, role: options.role };
          // Refuse bad options before anything is written, even the default account.
          core.admins.validate(input);
          const account = await core.accounts.resolve(options.account);
          const { admin, password } = await core.admins.create(account, input);
          const message = `created console user ${admin.email} (id ${admin.id}, ${admin.role}) for account ${account.name}`;
          report(message, password, given === undefined);
        }),
    );

  jsonOption(admins.command("list").description("list console users"))
    .option("--account <name>", "only this account's users")
    .action((options: { account?: string; json?: boolean }) =>
      withCore(async (core) => {
        const accountId =
          options.account === undefined ? undefined : (await core.accounts.get(options.account)).id;
        const rows = await core.admins.list(accountId);
        printList(options.json, rows, ["ID", "EMAIL", "ACCOUNT", "ROLE", "CREATED", "LAST LOGIN"], (a) => [
          a.id,
          a.email,
          a.account,
          a.role,
          a.created,
          a.last_login,
        ]);
      }),
    );

  admins
    .command("reset-password")
    .description(
      "set a new password (generated and printed once without --password); ends the user's sessions",
    )
    .requiredOption("--email <email>", "the console user's email")
    .option("--password <password>", "the new password (at least 12 characters)")
    .option("--password-stdin", "read the new password from standard input")
    .action((options: { email: string; password?: string; passwordStdin?: boolean }) =>
      withCore(async (core) => {
        const given = await secretOption(options.password, options.passwordStdin, "--password");
        const { admin, password } = await core.admins.resetPassword(options.email, given);
        report(`set a new password for console user ${admin.email}`, password, given === undefined);
      }),
    );

  admins
    .command("reset-second-factor")
    .description(
      "remove a console user's authenticator app, passkeys and recovery codes (all lost); ends their sessions",
    )
    .requiredOption("--email <email>", "the console user's email")
    .action((options: { email: string }) =>
      withCore(async (core) => {
        const admin = await core.admins.resetSecondFactors(options.email);
        console.log(
          `removed the second factors of console user ${admin.email}; if the account requires one, ` +
            "they set a new one up at their next login",
        );
      }),
    );
}
