// LDAP / Active Directory sources (issue 30): an account's directories, managed by the console, the
// CLI and the API; their group mapping; a sync on demand; their servers' state. The bind password
// is write-only: sealed at rest like webhook secrets, never returned. Logins are in login.ts, the
// sync in sync.ts, the LDAP traffic in ldap.ts.
import { X509Certificate } from "node:crypto";
import { isUniqueViolation } from "../../db/database.ts";
import { ConflictError, type FieldProblem, NotFoundError, ValidationError } from "../shared/errors.ts";
import { hasControlCharacters } from "../shared/text.ts";
import { isoNow } from "../shared/time.ts";
import type { SecretBox } from "../webhooks/crypto.ts";
import type { ServerStatus } from "./ldap.ts";
import type { DirectoryLogins } from "./login.ts";
import type { DirectoriesRepo, DirectoryChanges, DirectoryRow } from "./repo.ts";
import {
  ATTRIBUTE_PATTERN,
  DIRECTORY_NAME_PATTERN,
  DIRECTORY_NAME_RULE,
  DISABLED_MODES,
  dnProblem,
  filterProblem,
  MAX_BIND_PASSWORD,
  MAX_CA_PEM,
  MAX_DIRECTORY_GROUP,
  MAX_MAPPINGS,
  MAX_SERVERS,
  NUMBER_FIELDS,
  type NumberField,
  SCOPES,
  serverProblem,
} from "./rules.ts";
import { type DirectoryRuntime, sealContext } from "./runtime.ts";
import { type SyncReport, syncDirectory } from "./sync.ts";

export interface GroupMapping {
  directory_group: string;
  group: string;
}

/** What operators see of a directory (the bind password only as set or not). */
export interface Directory {
  id: number;
  name: string;
  enabled: boolean;
  servers: string[];
  start_tls: boolean;
  ca_pem: string;
  bind_dn: string;
  bind_password_set: boolean;
  user_base: string;
  user_scope: string;
  user_filter: string;
  username_attribute: string;
  name_attribute: string;
  email_attribute: string;
  disabled_mode: string;
  disabled_attribute: string;
  disabled_value: string;
  nt_hash_attribute: string;
  group_base: string;
  group_filter: string;
  group_member_attribute: string;
  group_name_attribute: string;
  group_mappings: GroupMapping[];
  sync_interval: number;
  group_cache_seconds: number;
  connect_timeout_ms: number;
  timeout_ms: number;
  pool_size: number;
  breaker_failures: number;
  breaker_cooldown_seconds: number;
  /** This process's view of each server (closed: healthy; open: failing, skipped). */
  server_status: ServerStatus[];
  last_sync: SyncReport | null;
  created: string;
  updated: string;
}

/** The directory's plain text settings (the console's form reads the same fields). */
export const TEXT_FIELDS = [
  "bind_dn",
  "user_base",
  "user_scope",
  "user_filter",
  "username_attribute",
  "name_attribute",
  "email_attribute",
  "disabled_mode",
  "disabled_attribute",
  "disabled_value",
  "nt_hash_attribute",
  "group_base",
  "group_filter",
  "group_member_attribute",
  "group_name_attribute",
  "ca_pem",
] as const;

export type DirectoryInput = {
  name?: string | undefined;
  enabled?: boolean | undefined;
  servers?: string[] | undefined;
  start_tls?: boolean | undefined;
  /** Write-only; empty removes it. */
  bind_password?: string | undefined;
  group_mappings?: GroupMapping[] | undefined;
} & { [K in (typeof TEXT_FIELDS)[number]]?: string | undefined } & {
  [K in NumberField]?: number | undefined;
};

const ATTRIBUTE_FIELDS = [
  "username_attribute",
  "name_attribute",
  "email_attribute",
  "disabled_attribute",
  "nt_hash_attribute",
  "group_member_attribute",
  "group_name_attribute",
] as const;

function caProblem(pem: string): string | null {
  if (pem.trim() === "") return null;
  if (pem.length > MAX_CA_PEM) return `must be at most ${MAX_CA_PEM / 1024} KiB of PEM`;
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) return "must be PEM certificates (-----BEGIN CERTIFICATE-----)";
  try {
    for (const block of blocks) new X509Certificate(block);
  } catch {
    return "holds a certificate that cannot be read";
  }
  return null;
}

/** The field checks that need no database; a problem per bad field. */
async function fieldProblems(input: DirectoryInput): Promise<FieldProblem[]> {
  const problems: FieldProblem[] = [];
  const bad = (field: string, message: string) => problems.push({ field, message });
  if (input.name !== undefined && !DIRECTORY_NAME_PATTERN.test(input.name)) bad("name", DIRECTORY_NAME_RULE);
  if (input.servers !== undefined) {
    const problem = input.servers.map(serverProblem).find(Boolean);
    if (input.servers.length === 0 || input.servers.length > MAX_SERVERS)
      bad("servers", `must list 1-${MAX_SERVERS} servers in failover order`);
    else if (problem) bad("servers", problem);
  }
  for (const field of ["bind_dn", "user_base", "group_base"] as const) {
    const problem = input[field] === undefined ? null : dnProblem(input[field], field === "user_base");
    if (problem) bad(field, problem);
  }
  for (const field of ["user_filter", "group_filter"] as const) {
    const problem = input[field] === undefined ? null : await filterProblem(input[field]);
    if (problem) bad(field, problem);
  }
  for (const field of ATTRIBUTE_FIELDS) {
    const value = input[field];
    if (value === undefined || value === "") continue;
    if (!ATTRIBUTE_PATTERN.test(value)) bad(field, "must be an LDAP attribute name");
  }
  if (input.username_attribute === "") bad("username_attribute", "is required");
  if (input.user_scope !== undefined && !(SCOPES as readonly string[]).includes(input.user_scope))
    bad("user_scope", `must be one of ${SCOPES.join(", ")}`);
  if (
    input.disabled_mode !== undefined &&
    !(DISABLED_MODES as readonly string[]).includes(input.disabled_mode)
  )
    bad("disabled_mode", `must be one of ${DISABLED_MODES.join(", ")}`);
  if (
    input.disabled_value !== undefined &&
    (input.disabled_value.length > 200 || hasControlCharacters(input.disabled_value))
  )
    bad("disabled_value", "must be at most 200 characters on one line");
  if (
    input.bind_password !== undefined &&
    (input.bind_password.length > MAX_BIND_PASSWORD || hasControlCharacters(input.bind_password))
  )
    bad("bind_password", `must be at most ${MAX_BIND_PASSWORD} characters without control characters`);
  const ca = input.ca_pem === undefined ? null : caProblem(input.ca_pem);
  if (ca) bad("ca_pem", ca);
  for (const [field, [min, max]] of Object.entries(NUMBER_FIELDS)) {
    const value = input[field as NumberField];
    if (value !== undefined && (!Number.isInteger(value) || value < min || value > max))
      bad(field, `must be a whole number from ${min} to ${max}`);
  }
  if (input.group_mappings !== undefined) {
    const seen = new Set<string>();
    const wrong = input.group_mappings.some((m) => {
      const key = m.directory_group.trim().toLowerCase();
      const clash = seen.has(key);
      seen.add(key);
      return (
        clash ||
        key === "" ||
        m.directory_group.length > MAX_DIRECTORY_GROUP ||
        hasControlCharacters(m.directory_group)
      );
    });
    if (wrong || input.group_mappings.length > MAX_MAPPINGS)
      bad(
        "group_mappings",
        `must be up to ${MAX_MAPPINGS} distinct directory groups (name or DN), each with a Wisp group`,
      );
  }
  return problems;
}

/** A directory as audited: its columns without the last sync's report (the sync row has it). */
function audited(row: DirectoryRow): Record<string, unknown> {
  const { last_sync, last_sync_at, ...rest } = row;
  void last_sync;
  void last_sync_at;
  return rest;
}

export class DirectoriesService {
  constructor(
    readonly repo: DirectoriesRepo,
    private readonly box: SecretBox,
    readonly runtime: DirectoryRuntime,
    private readonly logins: DirectoryLogins,
  ) {}

  private async present(row: DirectoryRow): Promise<Directory> {
    const mappings = await this.repo.mappings(row.account_id, row.id);
    let status: ServerStatus[] = [];
    if (row.enabled === 1) status = (await this.runtime.source(row).catch(() => undefined))?.status() ?? [];
    const { bind_password, servers, start_tls, enabled, last_sync, last_sync_at, account_id, ...rest } = row;
    void last_sync_at;
    void account_id;
    return {
      ...rest,
      enabled: enabled === 1,
      servers: servers.split("\n").filter(Boolean),
      start_tls: start_tls === 1,
      bind_password_set: bind_password !== "",
      group_mappings: mappings.map((m) => ({ directory_group: m.directory_group, group: m.group_name })),
      server_status: status,
      last_sync: last_sync ? (JSON.parse(last_sync) as SyncReport) : null,
    };
  }

  async list(accountId: number): Promise<Directory[]> {
    return Promise.all((await this.repo.list(accountId)).map((row) => this.present(row)));
  }

  async row(accountId: number, idOrName: number | string): Promise<DirectoryRow> {
    const text = String(idOrName);
    const row = /^\d{1,9}$/.test(text)
      ? await this.repo.findById(accountId, Number(text))
      : await this.repo.findByName(accountId, text);
    if (!row) throw new NotFoundError(`directory ${text} not found`);
    return row;
  }

  async get(accountId: number, idOrName: number | string): Promise<Directory> {
    return this.present(await this.row(accountId, idOrName));
  }

  private async check(input: DirectoryInput): Promise<void> {
    const problems = await fieldProblems(input);
    const first = problems[0];
    if (first) throw new ValidationError(`${first.field} ${first.message}`, problems);
  }

  private columns(input: DirectoryInput): DirectoryChanges {
    const changes: DirectoryChanges = {};
    if (input.enabled !== undefined) changes.enabled = input.enabled ? 1 : 0;
    if (input.start_tls !== undefined) changes.start_tls = input.start_tls ? 1 : 0;
    if (input.servers !== undefined) changes.servers = input.servers.join("\n");
    for (const field of TEXT_FIELDS) if (input[field] !== undefined) changes[field] = input[field]!.trim();
    for (const field of Object.keys(NUMBER_FIELDS) as NumberField[])
      if (input[field] !== undefined) changes[field] = input[field];
    return changes;
  }

  private async writeMappings(
    repo: DirectoriesRepo,
    accountId: number,
    id: number,
    mappings?: GroupMapping[],
  ) {
    if (mappings === undefined) return;
    const ids = await repo.groupIdsByName(accountId, [...new Set(mappings.map((m) => m.group))]);
    const missing = mappings.find((m) => !ids.has(m.group));
    if (missing)
      throw ValidationError.field("group_mappings", `names a group that does not exist: ${missing.group}`);
    await repo.replaceMappings(
      accountId,
      id,
      mappings.map((m) => ({ directory_group: m.directory_group.trim(), group_id: ids.get(m.group)! })),
    );
  }

  private changed(accountId: number): void {
    this.runtime.forget(accountId);
    this.logins.forget();
  }

  async create(accountId: number, input: DirectoryInput): Promise<Directory> {
    if (input.name === undefined) throw ValidationError.field("name", "is required");
    if (input.servers === undefined) throw ValidationError.field("servers", "is required");
    if (input.user_base === undefined || input.user_base.trim() === "")
      throw ValidationError.field("user_base", "is required");
    await this.check(input);
    const now = isoNow();
    try {
      const row = await this.repo.transaction(async (repo) => {
        const inserted = await repo.insert({
          account_id: accountId,
          name: input.name!,
          servers: input.servers!.join("\n"),
          user_base: input.user_base!.trim(),
          created: now,
          updated: now,
        });
        const changes = this.columns(input);
        if (input.bind_password)
          changes.bind_password = this.box.seal(input.bind_password, sealContext(accountId, inserted.id));
        await this.writeMappings(repo, accountId, inserted.id, input.group_mappings);
        const row = (await repo.update(accountId, inserted.id, changes)) ?? inserted;
        await repo.audit({
          accountId,
          resource: "directory",
          id: row.id,
          action: "create",
          after: audited(row),
        });
        return row;
      });
      this.changed(accountId);
      return this.present(row);
    } catch (error) {
      if (isUniqueViolation(error))
        throw new ConflictError(`a directory named "${input.name}" already exists`);
      throw error;
    }
  }

  async update(accountId: number, idOrName: number | string, input: DirectoryInput): Promise<Directory> {
    const current = await this.row(accountId, idOrName);
    if (input.name !== undefined && input.name !== current.name)
      throw ValidationError.field("name", "cannot change (its users' shadows name it)");
    await this.check(input);
    const changes = this.columns(input);
    if (input.bind_password !== undefined)
      changes.bind_password = input.bind_password
        ? this.box.seal(input.bind_password, sealContext(accountId, current.id))
        : "";
    // A new stamp even within the same millisecond: the live client is rebuilt from it.
    changes.updated = `${isoNow()}`;
    if (changes.updated === current.updated) changes.updated = new Date(Date.now() + 1).toISOString();
    const row = await this.repo.transaction(async (repo) => {
      await this.writeMappings(repo, accountId, current.id, input.group_mappings);
      const row = await repo.update(accountId, current.id, changes);
      if (row) {
        const after = {
          ...audited(row),
          ...(input.group_mappings ? { group_mappings: input.group_mappings } : {}),
        };
        await repo.audit({
          accountId,
          resource: "directory",
          id: row.id,
          action: "update",
          before: audited(current),
          after,
        });
      }
      return row;
    });
    if (!row) throw new NotFoundError(`directory ${idOrName} not found`);
    this.changed(accountId);
    return this.present(row);
  }

  async delete(accountId: number, idOrName: number | string): Promise<void> {
    const current = await this.row(accountId, idOrName);
    await this.repo.transaction(async (repo) => {
      await repo.delete(accountId, current.id);
      await repo.audit({
        accountId,
        resource: "directory",
        id: current.id,
        action: "delete",
        before: audited(current),
      });
    });
    this.changed(accountId);
  }

  /** Pulls every user and group now; what changed. */
  async sync(accountId: number, idOrName: number | string): Promise<SyncReport> {
    const row = await this.row(accountId, idOrName);
    if (row.enabled !== 1) throw new ConflictError(`directory ${row.name} is disabled`);
    const report = await syncDirectory(this.repo, await this.runtime.source(row));
    this.logins.forget();
    return report;
  }

  /** Syncs every enabled directory whose interval has passed (the scheduled job); their reports. */
  async syncDue(now = Date.now()): Promise<SyncReport[]> {
    const reports: SyncReport[] = [];
    for (const row of await this.repo.listEnabled()) {
      if (row.sync_interval <= 0) continue;
      const last = row.last_sync_at === null ? 0 : Number(row.last_sync_at) * 1000;
      if (now - last < row.sync_interval * 60_000) continue;
      reports.push(await syncDirectory(this.repo, await this.runtime.source(row)));
    }
    if (reports.length > 0) this.logins.forget();
    return reports;
  }
}
