// Shadow users: a Wisp user per directory user (never a password), so reports, sessions, quotas
// and policies treat them as local users. One rule for the login and the sync: created when first
// seen enabled, email/name/DN/status follow the directory, the mapped groups alone follow the
// directory's groups (the user's other groups stay). A name a local user (or another directory)
// already has is a conflict: that user is left alone.
import { checkUsername } from "../aaa/values.ts";
import type { NewEvent } from "../events/repo.ts";
import { insertEvents } from "../events/repo.ts";
import { hasControlCharacters } from "../shared/text.ts";
import { isoNow } from "../shared/time.ts";
import { UsersRepo } from "../users/repo.ts";
import { EMAIL_PATTERN, MAX_EMAIL, MAX_FULLNAME } from "../users/rules.ts";
import type { DirectoriesRepo, ShadowRow } from "./repo.ts";

/** A user as the directory describes it, mapped to Wisp's fields. */
export interface DirectoryUser {
  username: string;
  dn: string;
  email: string;
  fullname: string;
  enabled: boolean;
  /** Wisp group names the mapping gives this user. */
  groups: string[];
}

export type ShadowOutcome =
  | "created"
  | "updated"
  | "disabled"
  | "enabled"
  | "unchanged"
  | "conflict"
  | "skipped";

export interface ShadowResult {
  username: string;
  outcome: ShadowOutcome;
  userId: number | null;
  status: string;
  /** Why a conflict or skip. */
  why?: string;
}

const emailPattern = new RegExp(EMAIL_PATTERN);

/** The directory's values cut to what a Wisp user may hold (a bad email becomes none). */
export function cleanFields(email: string, fullname: string): { email: string; fullname: string } {
  return {
    email: email.length <= MAX_EMAIL && emailPattern.test(email) ? email : "",
    fullname: hasControlCharacters(fullname) ? "" : fullname.slice(0, MAX_FULLNAME),
  };
}

const sameGroups = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().join("\n") === [...b].sort().join("\n");

/**
 * Writes the shadows of `users` (one directory) in the caller's transaction: what changed per user.
 * `managed` are the Wisp groups the directory's mapping decides; `run` marks them seen by a sync.
 * Only a sync enables a disabled shadow again (`run` given): a login never undoes an operator's or a
 * sync's disabling.
 */
export async function writeShadows(
  repo: DirectoriesRepo,
  accountId: number,
  directoryId: number,
  users: readonly DirectoryUser[],
  managed: readonly string[],
  run: number | null,
): Promise<ShadowResult[]> {
  const usersRepo = new UsersRepo(repo.db, repo.dialect, true);
  const existing = new Map<string, ShadowRow>();
  for (const row of await repo.usersByName(
    accountId,
    users.map((u) => u.username),
  ))
    existing.set(row.username.toLowerCase(), row);
  const mine = [...existing.values()].filter((r) => r.directory_id === directoryId).map((r) => r.username);
  const memberships = await repo.managedMemberships(accountId, mine, [...managed]);
  const now = isoNow();
  const events: NewEvent[] = [];
  const results: ShadowResult[] = [];
  const seen: number[] = [];
  const disconnect: string[] = [];
  const fresh: DirectoryUser[] = [];
  for (const user of users) {
    const row = existing.get(user.username.toLowerCase());
    const status = user.enabled && (run !== null || row?.status !== "disabled") ? "enabled" : "disabled";
    const problem = checkUsername(user.username);
    if (problem) {
      results.push({
        username: user.username,
        outcome: "skipped",
        userId: null,
        status,
        why: `username ${problem}`,
      });
      continue;
    }
    if (row && row.directory_id !== directoryId) {
      const why =
        row.directory_id === null ? "a local user has this name" : "another directory's user has this name";
      results.push({ username: user.username, outcome: "conflict", userId: null, status: row.status, why });
      continue;
    }
    if (!row) {
      if (!user.enabled) {
        results.push({ username: user.username, outcome: "skipped", userId: null, status, why: "disabled" });
        continue;
      }
      fresh.push(user);
      continue;
    }
    seen.push(row.id);
    const groupsNow = memberships.get(row.username) ?? [];
    const changed =
      row.email !== user.email ||
      row.fullname !== user.fullname ||
      row.directory_dn !== user.dn ||
      row.status !== status ||
      row.username !== user.username;
    if (!changed && sameGroups(groupsNow, user.groups)) {
      results.push({ username: row.username, outcome: "unchanged", userId: row.id, status });
      continue;
    }
    if (row.username !== user.username)
      await usersRepo.renameRadiusRows(accountId, row.username, user.username);
    await usersRepo.update(accountId, row.id, {
      username: user.username,
      email: user.email,
      fullname: user.fullname,
      status,
      directory_dn: user.dn,
      updated: now,
    });
    await usersRepo.setManagedGroups(accountId, user.username, managed, user.groups);
    if (row.status === "enabled" && status === "disabled") disconnect.push(user.username);
    const outcome: ShadowOutcome =
      row.status === status ? "updated" : status === "disabled" ? "disabled" : "enabled";
    events.push({ accountId, kind: "user.updated", data: shadowData(row.id, user, status) });
    results.push({ username: user.username, outcome, userId: row.id, status });
  }
  for (const { user, id } of await repo.insertShadows(accountId, directoryId, fresh, run, now)) {
    events.push({ accountId, kind: "user.created", data: shadowData(id, user, "enabled") });
    results.push({ username: user.username, outcome: "created", userId: id, status: "enabled" });
  }
  if (run !== null) await repo.markSeen(accountId, seen, run);
  if (disconnect.length > 0) await repo.disconnect(accountId, disconnect, "disabled in the directory");
  await insertEvents(repo.db, events);
  return results;
}

function shadowData(id: number, user: DirectoryUser, status: string) {
  return {
    id,
    username: user.username,
    email: user.email,
    fullname: user.fullname,
    status,
    directory_dn: user.dn,
  };
}
