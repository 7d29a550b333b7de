// `wisp import freeradius`: an existing FreeRADIUS / daloRADIUS database into one Wisp account.
// Phases in order: networks (nas), groups, users (radcheck, radreply, radusergroup, userinfo), and
// with history radacct and radpostauth. Each chunk is read from the source, checked whole, compared
// with what the account holds, and written in one transaction with the phase's progress, so a run
// that stops resumes after its last committed chunk. What the account already holds identically is
// left unchanged, so a second run changes nothing. A dry run does all of it but the writes.

import type { NetworkPrefixLimits } from "../networks/rules.ts";
import { shortnameOf } from "../networks/rules.ts";
import { claimAddress } from "../networks/service.ts";
import { ConflictError, ValidationError } from "../shared/errors.ts";
import { isoNow } from "../shared/time.ts";
import {
  type Bundle,
  checkGroup,
  checkUser,
  type PlannedGroup,
  type PlannedUser,
  sameItems,
  sameMemberships,
} from "./check.ts";
import { attemptRow, type HistoryContext, sessionRow } from "./history.ts";
import { checkNas, sameSecret } from "./networks.ts";
import type { Existing, ImportRepo, Phase } from "./repo.ts";
import type { SourceRow } from "./source-db.ts";
import { type FreeradiusSource, GROUP_SOURCES, type NamedSource, USER_SOURCES } from "./source-repo.ts";

export type PhaseName = "networks" | "groups" | "users" | "radacct" | "radpostauth";
export const PHASES: PhaseName[] = ["networks", "groups", "users", "radacct", "radpostauth"];

export interface Skipped {
  phase: PhaseName;
  /** The user, group or network name, or the source row for history. */
  name: string;
  reasons: string[];
}

export interface PhaseCount {
  /** Items this run read (for history, rows after where the last run stopped). */
  read: number;
  created: number;
  unchanged: number;
  skipped: number;
}

export interface ImportListener {
  /** A phase begins: how many items it will read; `before`: items a previous, unfinished run did. */
  phase?(phase: PhaseName, total: number, before: number): void;
  progress?(phase: PhaseName, done: number): void;
  skipped?(item: Skipped): void;
  note?(text: string): void;
}

export interface ImportRequest {
  accountId: number;
  dryRun: boolean;
  history: boolean;
  /** Users or groups per chunk (default 500). */
  chunkSize?: number;
  /** History rows per chunk (default 5000). */
  historyChunkSize?: number;
}

export interface ImportSummary {
  source: string;
  dryRun: boolean;
  counts: Record<PhaseName, PhaseCount>;
  notes: number;
}

/** Thrown when a run stops part-way: what it committed is kept and named, and the next run resumes. */
export class ImportInterrupted extends Error {
  constructor(
    readonly phase: PhaseName,
    readonly summary: ImportSummary,
    override readonly cause: unknown,
  ) {
    super(`the import stopped during ${phase}: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

const FREERADIUS_TABLES = ["radcheck", "radreply", "radgroupcheck", "radgroupreply", "radusergroup", "nas"];

const zero = (): PhaseCount => ({ read: 0, created: 0, unchanged: 0, skipped: 0 });

/** One run: its source, request, listener and counts. */
class Run {
  readonly counts = Object.fromEntries(PHASES.map((p) => [p, zero()])) as Record<PhaseName, PhaseCount>;
  notes = 0;
  userDuplicates = new Map<string, string[]>();
  groupDuplicates = new Map<string, string[]>();
  /** Groups skipped (lower-case name -> why): their members are skipped too. Groups are few. */
  readonly skippedGroups = new Map<string, string>();
  readonly at = isoNow();

  constructor(
    readonly source: FreeradiusSource,
    readonly request: ImportRequest,
    readonly listener: ImportListener,
  ) {}

  get write(): boolean {
    return !this.request.dryRun;
  }

  skip(phase: PhaseName, name: string, reasons: string[]) {
    this.counts[phase].skipped++;
    this.listener.skipped?.({ phase, name, reasons });
  }

  note(text: string) {
    this.notes++;
    this.listener.note?.(text);
  }

  summary(): ImportSummary {
    return { source: this.source.label, dryRun: this.request.dryRun, counts: this.counts, notes: this.notes };
  }
}

/** Names an import's audit row lists, at most (the count is always whole). */
const AUDITED_NAMES = 100;

/**
 * One audit row per committed chunk that created something, in the chunk's transaction: the
 * import's rows bypass the services that audit one change at a time, so it says what it added here
 * (the phase, how many, their names; never a secret).
 */
async function auditChunk(
  repo: ImportRepo,
  run: Run,
  phase: PhaseName,
  names: string[],
  count = names.length,
) {
  if (count === 0) return;
  await repo.audit({
    accountId: run.request.accountId,
    resource: "import",
    id: run.source.label,
    action: "import",
    after: { phase, created: count, names: names.slice(0, AUDITED_NAMES) },
  });
}

export class ImportService {
  constructor(
    private readonly repo: ImportRepo,
    private readonly minPrefix: NetworkPrefixLimits,
  ) {}

  async run(
    source: FreeradiusSource,
    request: ImportRequest,
    listener: ImportListener = {},
  ): Promise<ImportSummary> {
    await source.inspect();
    if (!FREERADIUS_TABLES.some((table) => source.has(table))) {
      throw new ValidationError(
        `${source.label} is not a FreeRADIUS database: it has none of the tables ${FREERADIUS_TABLES.join(", ")}`,
      );
    }
    const run = new Run(source, request, listener);
    let phase: PhaseName = "networks";
    try {
      await this.blankNames(run);
      run.userDuplicates = await source.caseDuplicates(source.present(USER_SOURCES));
      run.groupDuplicates = await source.caseDuplicates(source.present(GROUP_SOURCES));
      await this.networks(run);
      phase = "groups";
      await this.groups(run);
      phase = "users";
      await this.users(run);
      if (request.history) {
        phase = "radacct";
        await this.history(run, "radacct");
        phase = "radpostauth";
        await this.history(run, "radpostauth");
      }
    } catch (error) {
      if (error instanceof ValidationError) throw error;
      throw new ImportInterrupted(phase, run.summary(), error);
    }
    return run.summary();
  }

  /** Rows whose user or group name is empty belong to no one: said, and left out. */
  private async blankNames(run: Run) {
    for (const [table, column] of [
      ...run.source.present(USER_SOURCES),
      ...run.source.present(GROUP_SOURCES),
    ]) {
      const blank = await run.source.blankNames(table, column);
      if (blank > 0)
        run.note(
          `${table}: ${blank} row(s) with an empty ${column} left out (FreeRADIUS never matches them)`,
        );
    }
  }

  // ---- networks ------------------------------------------------------------------------------

  private async networks(run: Run) {
    const total = await run.source.count("nas");
    run.listener.phase?.("networks", total, 0);
    /** Addresses this run has planned (a dry run writes none); the nas table is small. */
    const planned = new Map<string, string>();
    let after = 0;
    let index = 0;
    for (;;) {
      const rows = await run.source.nasRows(after, 500);
      if (rows.length === 0) break;
      for (const row of rows) {
        await this.network(run, row, index++, planned);
        run.counts.networks.read++;
        run.listener.progress?.("networks", run.counts.networks.read);
      }
      after = Number(rows.at(-1)!.id);
    }
  }

  private async network(run: Run, row: SourceRow, index: number, planned: Map<string, string>) {
    const name = String(row.nasname ?? "");
    const checked = checkNas(row, index, this.minPrefix);
    if (Array.isArray(checked)) return run.skip("networks", name, checked);
    const { accountId } = run.request;
    const decide = async (repo: ImportRepo) => {
      const networks = repo.networks();
      await networks.lockAddresses();
      const existingId = await networks.idByNasname(checked.nasIp);
      const same = (secret: string) => (sameSecret(secret, checked.secret) ? "unchanged" : "another secret");
      if (existingId !== undefined) {
        const own = await networks.findById(accountId, existingId);
        return own ? same(own.secret) : "another account";
      }
      const plannedSecret = planned.get(checked.nasIp);
      if (plannedSecret !== undefined) return same(plannedSecret);
      try {
        const range = await claimAddress(networks, accountId, checked.nasIp);
        if (run.write) {
          await networks.insert({
            account_id: accountId,
            nasname: checked.nasIp,
            ...range,
            shortname: shortnameOf(checked.name),
            secret: checked.secret,
            description: checked.description,
            name: checked.name,
            nas_identifier: "",
            require_message_authenticator: 0,
            created: run.at,
            updated: run.at,
          });
          await auditChunk(repo, run, "networks", [checked.nasIp]);
        }
        planned.set(checked.nasIp, checked.secret);
        return "created";
      } catch (error) {
        if (error instanceof ConflictError) return error.message;
        throw error;
      }
    };
    const outcome = run.write ? await this.repo.transaction(decide) : await decide(this.repo);
    const where = `nas id ${row.id}`;
    if (outcome === "created") {
      run.counts.networks.created++;
      for (const note of checked.notes) run.note(note);
    } else if (outcome === "unchanged") run.counts.networks.unchanged++;
    else if (outcome === "another secret") {
      run.skip("networks", name, [
        `${where}: ${checked.nasIp} is already a network of this account, with another secret`,
      ]);
    } else if (outcome === "another account") {
      run.skip("networks", name, [`${where}: ${checked.nasIp} is already used by another account's network`]);
    } else run.skip("networks", name, [`${where}: ${outcome}`]);
  }

  // ---- groups and users ----------------------------------------------------------------------

  /**
   * Every name of the sources in chunks: each chunk's rows from every table, by name. `after`:
   * where a previous run stopped. fn gets the bundles and the chunk's last name.
   */
  private async eachChunk(
    run: Run,
    sources: NamedSource,
    after: string,
    fn: (bundles: Map<string, Bundle>, upTo: string) => Promise<void>,
  ) {
    const size = run.request.chunkSize ?? 500;
    let cursor = after;
    for (;;) {
      const names = await run.source.nextNames(sources, cursor, size);
      if (names.length === 0) return;
      const upTo = names.at(-1)!;
      const bundles = new Map<string, Bundle>();
      for (const [table, column] of sources) {
        for (const row of await run.source.rowsInRange(table, column, cursor, upTo)) {
          const name = String(row[column]);
          const bundle = bundles.get(name) ?? new Map<string, SourceRow[]>();
          bundles.set(name, bundle);
          const rows = bundle.get(table) ?? [];
          bundle.set(table, rows);
          rows.push(row);
        }
      }
      await fn(bundles, upTo);
      cursor = upTo;
    }
  }

  private async groups(run: Run) {
    const sources = run.source.present(GROUP_SOURCES);
    run.listener.phase?.("groups", await run.source.countNames(sources), 0);
    await this.eachChunk(run, sources, "", async (bundles) => {
      const planned: PlannedGroup[] = [];
      for (const [name, bundle] of bundles) {
        const checked = checkGroup(name, bundle, run.groupDuplicates);
        if (Array.isArray(checked)) {
          run.skippedGroups.set(name.toLowerCase(), "a row of it cannot be imported");
          run.skip("groups", name, checked);
        } else planned.push(checked);
      }
      const { fresh, verdicts } = await this.compareAndWrite(run, "group", planned, async (repo, groups) => {
        await repo.insertGroups(run.request.accountId, groups, run.at);
        await auditChunk(
          repo,
          run,
          "groups",
          groups.map((g) => g.name),
        );
      });
      for (const group of fresh) for (const note of group.notes) run.note(note);
      this.tally(run, "groups", bundles.size, fresh.length, verdicts);
      for (const [name] of verdicts.filter(([, v]) => v !== "unchanged")) {
        run.skippedGroups.set(name.toLowerCase(), "it is not imported");
      }
    });
  }

  private async users(run: Run) {
    const sources = run.source.present(USER_SOURCES);
    const { accountId } = run.request;
    const previous = run.write ? await this.repo.progress(accountId, run.source.label, "users") : undefined;
    const resume = previous && !previous.finished ? previous : undefined;
    let done = resume?.rows_done ?? 0;
    if (resume) run.note(`users: resuming after "${resume.cursor}" (${done} users done by an earlier run)`);
    run.listener.phase?.("users", await run.source.countNames(sources), done);
    await this.eachChunk(run, sources, resume?.cursor ?? "", async (bundles, upTo) => {
      const planned: PlannedUser[] = [];
      for (const [name, bundle] of bundles) {
        const checked = checkUser(name, bundle, run.userDuplicates, run.skippedGroups);
        if (Array.isArray(checked)) run.skip("users", name, checked);
        else planned.push(checked);
      }
      done += bundles.size;
      const { fresh, verdicts } = await this.compareAndWrite(run, "user", planned, async (repo, users) => {
        await repo.insertUsers(accountId, users, run.at);
        await auditChunk(
          repo,
          run,
          "users",
          users.map((u) => u.username),
        );
        await repo.saveProgress(
          accountId,
          run.source.label,
          "users",
          { cursor: upTo, finished: false, rows_done: done },
          run.at,
        );
      });
      for (const user of fresh) for (const note of user.notes) run.note(note);
      this.tally(run, "users", bundles.size, fresh.length, verdicts);
    });
    if (run.write) {
      await this.repo.saveProgress(
        accountId,
        run.source.label,
        "users",
        { cursor: "", finished: true, rows_done: done },
        run.at,
      );
    }
  }

  /**
   * Compares planned users or groups with the account's, in the chunk's transaction, and writes the
   * new ones (unless a dry run). Verdicts: [name, "unchanged" | why it is skipped].
   */
  private async compareAndWrite<T extends PlannedUser | PlannedGroup>(
    run: Run,
    kind: "user" | "group",
    planned: T[],
    write: (repo: ImportRepo, fresh: T[]) => Promise<void>,
  ): Promise<{ fresh: T[]; verdicts: [string, string][] }> {
    const work = async (repo: ImportRepo) => {
      const names = planned.map((p) => ("username" in p ? p.username : p.name));
      const existing = await repo.existing(run.request.accountId, kind, names);
      const fresh: T[] = [];
      const verdicts: [string, string][] = [];
      for (const item of planned) {
        const name = "username" in item ? item.username : item.name;
        const found = existing.get(name.toLowerCase());
        if (found) verdicts.push([name, verdictOf(kind, name, item, found)]);
        else fresh.push(item);
      }
      if (run.write) await write(repo, fresh);
      return { fresh, verdicts };
    };
    return run.write ? this.repo.transaction(work) : work(this.repo);
  }

  private tally(
    run: Run,
    phase: "users" | "groups",
    read: number,
    created: number,
    verdicts: [string, string][],
  ) {
    const counts = run.counts[phase];
    counts.read += read;
    counts.created += created;
    for (const [name, verdict] of verdicts) {
      if (verdict === "unchanged") counts.unchanged++;
      else run.skip(phase, name, [verdict]);
    }
    run.listener.progress?.(phase, counts.read);
  }

  // ---- history -------------------------------------------------------------------------------

  private async history(run: Run, table: Phase & ("radacct" | "radpostauth")) {
    const { accountId } = run.request;
    if (!run.source.has(table, table === "radacct" ? "radacctid" : "id")) {
      run.note(`${table}: not in the source; no history to import`);
      return;
    }
    const previous = await this.repo.progress(accountId, run.source.label, table);
    let after = Number(previous?.cursor || 0);
    let done = previous?.rows_done ?? 0;
    const idColumn = table === "radacct" ? "radacctid" : "id";
    if (after > 0)
      run.note(
        `${table}: continuing after source id ${after} (rows up to it were imported by an earlier run)`,
      );
    run.listener.phase?.(table, await run.source.count(table, `where ${idColumn} > ?`, [after]), 0);
    const networkIds = await this.repo.networkIds(accountId);
    const size = run.request.historyChunkSize ?? 5000;
    for (;;) {
      const rows =
        table === "radacct"
          ? await run.source.radacctRows(after, size)
          : await run.source.radpostauthRows(after, size);
      if (rows.length === 0) break;
      const last = String(rows.at(-1)![idColumn]);
      const write = async (repo: ImportRepo) => {
        const context: HistoryContext = {
          dialect: repo.dialect,
          accountId,
          networkIds,
          userIds: await repo.userIds(
            accountId,
            rows.map((r) => String(r.username ?? "")),
          ),
        };
        const made =
          table === "radacct"
            ? await this.sessions(run, repo, rows, context)
            : this.attempts(run, rows, context);
        if (run.write) {
          if (table === "radacct") await repo.insertSessions(made as never);
          else await repo.insertAttempts(made as never);
          await auditChunk(repo, run, table, [], made.length);
          await repo.saveProgress(
            accountId,
            run.source.label,
            table,
            { cursor: last, finished: true, rows_done: done + rows.length },
            run.at,
          );
        }
        return made.length;
      };
      const created = run.write ? await this.repo.transaction(write) : await write(this.repo);
      done += rows.length;
      run.counts[table].read += rows.length;
      run.counts[table].created += created;
      run.listener.progress?.(table, run.counts[table].read);
      after = Number(last);
    }
  }

  /** Sessions to insert; a key the database already holds is this account's (unchanged) or another's (skipped). */
  private async sessions(run: Run, repo: ImportRepo, rows: SourceRow[], context: HistoryContext) {
    const made = [];
    const keys = new Set<string>();
    for (const row of rows) {
      const session = sessionRow(row, context);
      if (typeof session === "string") run.skip("radacct", `radacct id ${row.radacctid}`, [session]);
      else if (keys.has(session.acctuniqueid!)) {
        run.skip("radacct", `radacct id ${row.radacctid}`, [
          `acctuniqueid ${session.acctuniqueid} is twice in the source`,
        ]);
      } else {
        keys.add(session.acctuniqueid!);
        made.push(session);
      }
    }
    const existing = await repo.sessionKeys([...keys]);
    return made.filter((session) => {
      const owner = existing.get(session.acctuniqueid!);
      if (owner === undefined) return true;
      if (owner === context.accountId) run.counts.radacct.unchanged++;
      else
        run.skip("radacct", `acctuniqueid ${session.acctuniqueid}`, [
          "a session of another account (or of none) has this acctuniqueid",
        ]);
      return false;
    });
  }

  private attempts(run: Run, rows: SourceRow[], context: HistoryContext) {
    const made = [];
    for (const row of rows) {
      const attempt = attemptRow(row, context);
      if (typeof attempt === "string") run.skip("radpostauth", `radpostauth id ${row.id}`, [attempt]);
      else made.push(attempt);
    }
    return made;
  }
}

/** "unchanged" when the account holds the same user or group, else why it is skipped. */
function verdictOf(
  kind: "user" | "group",
  name: string,
  planned: PlannedUser | PlannedGroup,
  found: Existing,
): string {
  if (found.name !== name) {
    return `the account has a ${kind} "${found.name}"; names are unique ignoring case (rename one)`;
  }
  if (!found.registered) {
    return `the account already has FreeRADIUS rows for "${name}" without a Wisp ${kind} (written outside Wisp)`;
  }
  const same =
    sameItems(planned.check, found.check) &&
    sameItems(planned.reply, found.reply) &&
    (!("groups" in planned) || sameMemberships(planned.groups, found.groups));
  return same
    ? "unchanged"
    : `the account already has a ${kind} "${name}" with other attributes or groups; left as it is (delete it in Wisp to import this one)`;
}
