// One directory as this process uses it: its settings, its client (servers, pools, breakers), the
// group mapping, and the reads a login and a sync make: find a user (the service bind's search with
// the username escaped per RFC 4515), the user's groups (cached for group_cache_seconds), and an
// entry mapped to Wisp's fields.
import type { Entry } from "ldapts";
import {
  type ConnectDirectory,
  type DirectoryConnection,
  DirectoryUnavailable,
  type ServerStatus,
} from "./ldap.ts";
import type { DirectoryRow } from "./repo.ts";
import { type DisabledMode, entryDisabled, escapeFilterValue } from "./rules.ts";
import { cleanFields, type DirectoryUser } from "./shadows.ts";

/** Group lookups kept per source at most; the oldest goes first. */
const GROUP_CACHE_ENTRIES = 10_000;

/** An attribute's values, whatever case the server spelled its name in. */
export function values(entry: Entry, attribute: string): string[] {
  const wanted = attribute.toLowerCase();
  for (const [key, value] of Object.entries(entry)) {
    if (key.toLowerCase() !== wanted || key === "dn") continue;
    const list = Array.isArray(value) ? value : [value];
    return list.map((v) => (Buffer.isBuffer(v) ? v.toString("utf8") : String(v)));
  }
  return [];
}

export interface FoundUser {
  entry: Entry;
  user: DirectoryUser;
  /** The NT password hash (sambaNTPassword), when asked for and present. */
  ntHash: Buffer | null;
}

export class DirectorySource {
  readonly client: DirectoryConnection;
  /** lower-case directory group (name or DN) -> Wisp groups. */
  private readonly mapping = new Map<string, string[]>();
  readonly managed: string[];
  private readonly groupCache = new Map<string, { groups: string[]; expires: number }>();

  constructor(
    readonly row: DirectoryRow,
    bindPassword: string,
    mappings: { directory_group: string; group_name: string }[],
    connect: ConnectDirectory,
  ) {
    this.client = connect(
      row.servers.split("\n").filter(Boolean),
      {
        startTls: row.start_tls === 1,
        caPem: row.ca_pem,
        connectTimeoutMs: row.connect_timeout_ms,
        timeoutMs: row.timeout_ms,
        poolSize: row.pool_size,
        breakerFailures: row.breaker_failures,
        breakerCooldownMs: row.breaker_cooldown_seconds * 1000,
      },
      { dn: row.bind_dn, password: bindPassword },
    );
    for (const m of mappings) {
      const key = m.directory_group.toLowerCase();
      this.mapping.set(key, [...(this.mapping.get(key) ?? []), m.group_name]);
    }
    this.managed = [...new Set(mappings.map((m) => m.group_name))];
  }

  private userAttributes(withNtHash: boolean): string[] {
    const r = this.row;
    const list = [r.username_attribute, r.name_attribute, r.email_attribute];
    if (r.disabled_mode === "ad") list.push("userAccountControl");
    if (r.disabled_mode === "attribute" && r.disabled_attribute) list.push(r.disabled_attribute);
    if (withNtHash && r.nt_hash_attribute) list.push(r.nt_hash_attribute);
    return list.filter(Boolean);
  }

  /** The filter of a sync (every user) or of one username, escaped per RFC 4515 section 3. */
  userFilter(username?: string): string {
    const r = this.row;
    if (username === undefined) return `(&${r.user_filter}(${r.username_attribute}=*))`;
    return `(&${r.user_filter}(${r.username_attribute}=${escapeFilterValue(username)}))`;
  }

  userSearch(username?: string, withNtHash = false) {
    return {
      base: this.row.user_base,
      scope: this.row.user_scope as "sub" | "one",
      filter: this.userFilter(username),
      attributes: this.userAttributes(withNtHash),
    };
  }

  /**
   * The user `username` names, or null when the directory has none (or several: an ambiguous
   * name logs nobody in). Continuation references (referrals to other servers) are not followed.
   */
  async findUser(username: string, withNtHash: boolean): Promise<FoundUser | null> {
    let entries: Entry[];
    try {
      ({ entries } = await this.client.search({ ...this.userSearch(username, withNtHash), sizeLimit: 2 }));
    } catch (error) {
      if (error instanceof DirectoryUnavailable) throw error;
      // sizeLimitExceeded (several users match) or noSuchObject (a wrong base): nobody.
      return null;
    }
    if (entries.length !== 1) return null;
    const entry = entries[0]!;
    // The server's matching rule may forgive what the typed name has (spaces, a NUL, another
    // normalization): only a name the entry really holds, up to case, is that user.
    const typed = username.toLowerCase();
    if (!values(entry, this.row.username_attribute).some((v) => v.toLowerCase() === typed)) return null;
    const groups = await this.groupsOf(entry.dn, username);
    const user = this.toUser(entry, username, groups);
    const hex =
      withNtHash && this.row.nt_hash_attribute ? values(entry, this.row.nt_hash_attribute)[0] : undefined;
    const ntHash = hex && /^[0-9a-fA-F]{32}$/.test(hex) ? Buffer.from(hex, "hex") : null;
    return { entry, user, ntHash };
  }

  /** An entry as a Wisp user: the username as the directory spells it (the typed one if it matches). */
  toUser(entry: Entry, typed: string | undefined, groups: string[]): DirectoryUser {
    const r = this.row;
    const names = values(entry, r.username_attribute);
    const username = names.find((n) => n.toLowerCase() === typed?.toLowerCase()) ?? names[0] ?? "";
    const fields = cleanFields(
      values(entry, r.email_attribute)[0] ?? "",
      values(entry, r.name_attribute)[0] ?? "",
    );
    const disabled = entryDisabled(
      r.disabled_mode as DisabledMode,
      {
        attribute: r.disabled_attribute ? values(entry, r.disabled_attribute) : [],
        userAccountControl: values(entry, "userAccountControl"),
      },
      r.disabled_value,
    );
    return { username, dn: entry.dn, ...fields, enabled: !disabled, groups };
  }

  /** Wisp groups for the directory groups (names or DNs) a user is in. */
  mapGroups(directoryGroups: Iterable<string>): string[] {
    const wisp = new Set<string>();
    for (const g of directoryGroups)
      for (const name of this.mapping.get(g.toLowerCase()) ?? []) wisp.add(name);
    return [...wisp].sort();
  }

  /** The value a group's member attribute holds for this user: the DN, or the name (posix memberUid). */
  memberValue(dn: string, username: string): string {
    return this.row.group_member_attribute.toLowerCase() === "memberuid" ? username : dn;
  }

  /** The Wisp groups of a user, from the group search; cached for group_cache_seconds (0: never). */
  async groupsOf(dn: string, username: string): Promise<string[]> {
    const r = this.row;
    if (!r.group_base || this.mapping.size === 0) return [];
    const key = dn.toLowerCase();
    const ttl = r.group_cache_seconds * 1000;
    const cached = this.groupCache.get(key);
    if (cached && cached.expires > Date.now()) return cached.groups;
    const filter = `(&${r.group_filter}(${r.group_member_attribute}=${escapeFilterValue(this.memberValue(dn, username))}))`;
    const { entries } = await this.client.search({
      base: r.group_base,
      scope: "sub",
      filter,
      attributes: [r.group_name_attribute],
    });
    const groups = this.mapGroups(entries.flatMap((e) => [e.dn, ...values(e, r.group_name_attribute)]));
    if (ttl > 0) {
      this.groupCache.delete(key);
      if (this.groupCache.size >= GROUP_CACHE_ENTRIES)
        this.groupCache.delete(this.groupCache.keys().next().value!);
      this.groupCache.set(key, { groups, expires: Date.now() + ttl });
    }
    return groups;
  }

  status(): ServerStatus[] {
    return this.client.status();
  }
}
