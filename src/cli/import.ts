// `wisp import freeradius <source>`: an existing FreeRADIUS / daloRADIUS database into one account.
// What is skipped, and why, goes to stdout a line each as it is found (or into --json's document);
// progress goes to stderr (a bar on a terminal, a line now and then otherwise); the summary ends
// stdout. A run that stops says what it committed; the same command resumes it.
import type { Command } from "commander";
import { DEFAULT_ACCOUNT } from "../core/accounts/service.ts";
import {
  ImportInterrupted,
  type ImportListener,
  type ImportSummary,
  PHASES,
  type PhaseName,
  type Skipped,
} from "../core/imports/service.ts";
import { openSource, parseSourceUrl } from "../core/imports/source-db.ts";
import { FreeradiusSource } from "../core/imports/source-repo.ts";
import type { Core } from "../core/index.ts";
import { NotFoundError, ValidationError } from "../core/shared/errors.ts";
import { printTable, readStdin } from "./output.ts";
import { positiveInteger, type WithCore } from "./program.ts";

interface ImportOptions {
  account?: string;
  dryRun?: boolean;
  history?: boolean;
  strict?: boolean;
  passwordStdin?: boolean;
  chunkSize?: number;
  json?: boolean;
}

/** At most this many skipped items and notes are kept for --json (the counts stay exact). */
const JSON_LIMIT = 10_000;

/** Progress on stderr: a bar redrawn in place on a terminal, else a line every few seconds. */
class ProgressBar {
  private total = 0;
  private before = 0;
  private started = 0;
  private lastLine = 0;
  private readonly tty = process.stderr.isTTY === true;

  start(phase: PhaseName, total: number, before: number) {
    this.total = total + 0;
    this.before = before;
    this.started = Date.now();
    this.lastLine = 0;
    if (!this.tty)
      console.error(`wisp: ${phase}: ${total} to read${before ? ` (${before} done before)` : ""}`);
  }

  update(phase: PhaseName, done: number) {
    const now = Date.now();
    const elapsed = Math.max(0.001, (now - this.started) / 1000);
    const rate = Math.round(done / elapsed);
    const shown = Math.min(this.total, done + this.before);
    const share = this.total > 0 ? shown / this.total : 1;
    if (this.tty) {
      const width = 30;
      const bar = "#".repeat(Math.round(share * width)).padEnd(width, ".");
      process.stderr.write(`\r${phase.padEnd(11)} [${bar}] ${shown}/${this.total} ${rate}/s `);
      if (shown >= this.total) process.stderr.write("\n");
    } else if (now - this.lastLine > 5000 || shown >= this.total) {
      this.lastLine = now;
      console.error(`wisp: ${phase}: ${shown}/${this.total} (${Math.round(share * 100)}%, ${rate}/s)`);
    }
  }
}

function skippedLine(item: Skipped): string {
  const what = {
    networks: "network",
    groups: "group",
    users: "user",
    radacct: "session",
    radpostauth: "attempt",
  }[item.phase];
  return `skipped ${what} "${item.name}": ${item.reasons.join("; ")}`;
}

function printSummary(summary: ImportSummary, account: string, seconds: number) {
  console.log(
    `${summary.dryRun ? "dry run (nothing written): " : ""}${summary.source} into account ${account} in ${seconds.toFixed(1)} s`,
  );
  printTable(
    ["", summary.dryRun ? "WOULD CREATE" : "CREATED", "UNCHANGED", "SKIPPED", "READ"],
    PHASES.map((p) => [
      p,
      summary.counts[p].created,
      summary.counts[p].unchanged,
      summary.counts[p].skipped,
      summary.counts[p].read,
    ]),
  );
  if (summary.notes > 0) console.log(`${summary.notes} note(s) above: details carried over differently`);
}

/**
 * The account a dry run compares with, never created: the default account of a fresh install does
 * not exist yet, and then holds nothing (id 0 matches no row). Any other account must exist.
 */
async function dryRunAccount(core: Core, name: string | undefined): Promise<{ id: number; name: string }> {
  if (name !== undefined && name !== DEFAULT_ACCOUNT) return core.accounts.get(name);
  return core.accounts.get(DEFAULT_ACCOUNT).catch((error) => {
    if (error instanceof NotFoundError) return { id: 0, name: DEFAULT_ACCOUNT };
    throw error;
  });
}

async function importFreeradius(core: Core, url: string, options: ImportOptions) {
  const location = parseSourceUrl(url);
  const password = options.passwordStdin ? await readStdin() : undefined;
  const account = options.dryRun
    ? await dryRunAccount(core, options.account)
    : await core.accounts.resolve(options.account);
  const db = await openSource(location, password);
  const source = new FreeradiusSource(db);
  const skipped: Skipped[] = [];
  const notes: string[] = [];
  const bar = new ProgressBar();
  const listener: ImportListener = {
    phase: (phase, total, before) => bar.start(phase, total, before),
    progress: (phase, done) => bar.update(phase, done),
    skipped: (item) =>
      options.json ? skipped.length < JSON_LIMIT && skipped.push(item) : console.log(skippedLine(item)),
    note: (text) =>
      options.json ? notes.length < JSON_LIMIT && notes.push(text) : console.log(`note: ${text}`),
  };
  const request = { accountId: account.id, history: options.history === true, chunkSize: options.chunkSize };
  const began = Date.now();
  try {
    if (options.strict && !options.dryRun) {
      const plan = await core.imports.run(
        source,
        { ...request, dryRun: true },
        { ...listener, progress: undefined, phase: undefined },
      );
      const refused = PHASES.reduce((n, p) => n + plan.counts[p].skipped, 0);
      if (refused > 0)
        throw new ValidationError(
          `--strict: ${refused} item(s) would be skipped (listed above); nothing was written`,
        );
    }
    const summary = await core.imports.run(source, { ...request, dryRun: options.dryRun === true }, listener);
    const seconds = (Date.now() - began) / 1000;
    if (options.json)
      console.log(JSON.stringify({ ...summary, account: account.name, seconds, skipped, notes }, null, 2));
    else printSummary(summary, account.name, seconds);
  } catch (error) {
    if (!(error instanceof ImportInterrupted)) throw error;
    const done = PHASES.map((p) => `${p} ${error.summary.counts[p].created}`).join(", ");
    throw new Error(
      `${error.message}\nwhat was committed stays: created ${done}; run the same command again to resume`,
    );
  } finally {
    await db.close();
  }
}

export function registerImportCommands(program: Command, withCore: WithCore): void {
  const imports = program
    .command("import")
    .description("bring in users, groups and networks from another system");
  imports
    .command("freeradius")
    .description(
      "import a FreeRADIUS / daloRADIUS SQL database (radcheck, radreply, radgroupcheck, radgroupreply, radusergroup, nas, userinfo; with --history radacct and radpostauth) into one account",
    )
    .argument(
      "<source>",
      "mysql://user:password@host:port/database (or mariadb://), postgres://user:password@host/database, or sqlite:/path/radius.db",
    )
    .option("--account <name>", "the account to import into (default: the account named default)")
    .option("--dry-run", "say what would be created and what skipped, and why; write nothing")
    .option(
      "--history",
      "also import accounting sessions (radacct) and authentication attempts (radpostauth)",
    )
    .option("--strict", "write nothing if any user, group, network or history row would be skipped")
    .option("--password-stdin", "read the source database's password from standard input")
    .option("--chunk-size <n>", "users or groups per transaction (default 500)", positiveInteger)
    .option("--json", "print the summary, skipped items and notes as one JSON document")
    .action((url: string, options: ImportOptions) =>
      withCore((core) => importFreeradius(core, url, options)),
    );
}
