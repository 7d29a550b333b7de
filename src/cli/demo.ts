// `wisp demo seed`: fills an account with realistic demo data, once. What was made goes to stdout;
// progress (it can take a while for many days or users) goes to stderr.
import type { Command } from "commander";
import { checkDemoOptions, createDemoSeeder, type DemoSummary } from "../core/reports/demo.ts";
import { positiveInteger, type WithCore } from "./program.ts";

interface SeedOptions {
  account?: string;
  days: number;
  users: number;
  aps: number;
}

function printSummary(s: DemoSummary): void {
  const lines: [string, number, string][] = [
    ["networks", s.networks, `${s.access_points} access points`],
    ["users", s.users, `${s.disabled_users} disabled`],
    ["vouchers", s.vouchers, `${s.used_vouchers} used`],
    ["auth requests", s.auth_requests, `${s.rejected} rejected`],
    ["sessions", s.sessions, `${s.open_sessions} still open`],
  ];
  for (const [label, count, note] of lines) {
    console.log(`  ${label.padEnd(14)} ${String(count).padStart(8)}  (${note})`);
  }
}

export function registerDemoCommands(program: Command, withCore: WithCore): void {
  const demo = program.command("demo").description("demo data, to try Wisp's reports and console");

  demo
    .command("seed")
    .description(
      "fill an account with users, vouchers, authentication requests and sessions of the last days " +
        "(once per account: a second run adds nothing)",
    )
    .option("--account <name>", "the account to fill (default: the account named default)")
    .option("--days <n>", "days of history, ending now", positiveInteger, 30)
    .option("--users <n>", "how many users", positiveInteger, 2000)
    .option("--aps <n>", "how many access points (about ten per network)", positiveInteger, 40)
    .action((options: SeedOptions) =>
      withCore(async (core) => {
        const settings = { days: options.days, users: options.users, aps: options.aps };
        // Refuse bad numbers before anything is written, even the default account.
        checkDemoOptions(settings);
        const account = await core.accounts.resolve(options.account);
        const started = performance.now();
        const outcome = await createDemoSeeder(core.database).seed(account.id, settings, (message) =>
          console.error(`demo seed: ${message}`),
        );
        if (!outcome.seeded) {
          console.log(
            `account ${account.name} already holds demo data (seeded ${outcome.created}); nothing added`,
          );
          if (outcome.summary) printSummary(outcome.summary);
          return;
        }
        const s = outcome.summary;
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        console.log(
          `seeded account ${account.name} with ${s.days} days of demo data ` +
            `(${s.from} to ${s.to}) in ${seconds} s:`,
        );
        printSummary(s);
      }),
    );
}
