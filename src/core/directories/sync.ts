// A directory's sync (scheduled, `wisp directory sync`, the API, the console): every user of the
// user search, page by page (RFC 2696 paged results, one page in memory), becomes or updates its
// shadow; a shadow the finished search did not see is disabled and its sessions disconnected. The
// members of mapped groups are read first (only mapped groups are kept). A search that fails part
// way disables nobody.
import { isoNow } from "../shared/time.ts";
import type { DirectoriesRepo } from "./repo.ts";
import { SYNC_PAGE_SIZE } from "./rules.ts";
import type { ShadowOutcome, ShadowResult } from "./shadows.ts";
import { writeShadows } from "./shadows.ts";
import { type DirectorySource, values } from "./source.ts";

/** Changes listed in a report at most (the counts cover them all). */
const MAX_LISTED = 1000;

export interface SyncReport {
  directory: string;
  started: string;
  finished: string;
  ok: boolean;
  error?: string;
  seen: number;
  counts: Record<ShadowOutcome | "removed", number>;
  /** What changed, user by user (unchanged users are not listed), up to MAX_LISTED. */
  changes: { username: string; change: ShadowOutcome | "removed"; why?: string }[];
  /** How many changes the list left out. */
  more: number;
}

/** lower-case member value (DN or name) -> the Wisp groups its mapped directory groups give. */
async function mappedMembers(source: DirectorySource): Promise<Map<string, Set<string>>> {
  const r = source.row;
  const members = new Map<string, Set<string>>();
  if (!r.group_base || source.managed.length === 0) return members;
  const spec = {
    base: r.group_base,
    scope: "sub" as const,
    filter: r.group_filter,
    attributes: [r.group_name_attribute, r.group_member_attribute],
  };
  for await (const page of source.client.pages(spec, SYNC_PAGE_SIZE)) {
    for (const group of page) {
      const wisp = source.mapGroups([group.dn, ...values(group, r.group_name_attribute)]);
      if (wisp.length === 0) continue;
      for (const member of values(group, r.group_member_attribute)) {
        const key = member.toLowerCase();
        const set = members.get(key) ?? new Set<string>();
        for (const g of wisp) set.add(g);
        members.set(key, set);
      }
    }
  }
  return members;
}

function emptyReport(directory: string): SyncReport {
  const counts = {
    created: 0,
    updated: 0,
    disabled: 0,
    enabled: 0,
    unchanged: 0,
    conflict: 0,
    skipped: 0,
    removed: 0,
  };
  return { directory, started: isoNow(), finished: "", ok: false, seen: 0, counts, changes: [], more: 0 };
}

type Change = Pick<ShadowResult, "username" | "why"> & { outcome: ShadowOutcome | "removed" };

function tally(report: SyncReport, results: readonly Change[]): void {
  for (const r of results) {
    report.counts[r.outcome]++;
    if (r.outcome === "unchanged") continue;
    if (report.changes.length < MAX_LISTED)
      report.changes.push({ username: r.username, change: r.outcome, ...(r.why ? { why: r.why } : {}) });
    else report.more++;
  }
}

export async function syncDirectory(repo: DirectoriesRepo, source: DirectorySource): Promise<SyncReport> {
  const { account_id: accountId, id, name } = source.row;
  const report = emptyReport(name);
  const run = Date.now();
  try {
    const members = await mappedMembers(source);
    for await (const page of source.client.pages(source.userSearch(), SYNC_PAGE_SIZE)) {
      const users = page.map((entry) => {
        const user = source.toUser(entry, undefined, []);
        const groups = members.get(source.memberValue(entry.dn, user.username).toLowerCase());
        return { ...user, groups: groups ? [...groups].sort() : [] };
      });
      report.seen += users.length;
      const results = await repo.transaction((trx) =>
        writeShadows(trx, accountId, id, users, source.managed, run),
      );
      tally(report, results);
    }
    const removed = await repo.transaction((trx) => trx.disableUnseen(accountId, id, run, isoNow()));
    tally(
      report,
      removed.map((username) => ({ username, outcome: "removed" as const })),
    );
    report.ok = true;
  } catch (error) {
    report.error = (error as Error)?.message ?? String(error);
  }
  report.finished = isoNow();
  await repo.recordSync(accountId, id, Math.floor(run / 1000), JSON.stringify(report));
  return report;
}
