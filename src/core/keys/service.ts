// API keys: generated here, shown once, stored only as a SHA-256 hash, checked on every request.
import { hash, randomInt, timingSafeEqual } from "node:crypto";
import type { AccountRow } from "../accounts/repo.ts";
import { NotFoundError, ValidationError } from "../shared/errors.ts";
import type { Page, PageRequest } from "../shared/pages.ts";
import { isoNow } from "../shared/time.ts";
import { IpAllowList, parseCidr } from "./ip-allow-list.ts";
import { type Action, allows, parsePermissions, type Resource } from "./permissions.ts";
import type { ApiKeyListRow, ApiKeyRow, KeysRepo } from "./repo.ts";

const KEY_PREFIX = "wisp_";
const KEY_BODY_LENGTH = 40;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** Well-formed keys only reach the database; anything else is refused without a query. */
const KEY_SHAPE = /^wisp_[0-9A-Za-z]{32,64}$/;
/** last_used is written at most this often per key, not on every request. */
const TOUCH_INTERVAL_MS = 60_000;
export const MAX_KEY_RATE_LIMIT = 1_000_000;

export interface NewKeyRequest {
  name: string;
  permissions?: string | undefined;
  allowIps?: string | undefined;
  rateLimit?: number | undefined;
}

/** What a verified key may do, for the request it came with. */
export interface KeyPrincipal {
  keyId: number;
  /** The key's name, for the audit log (core/audit). */
  keyName: string;
  accountId: number;
  rateLimit: number | null;
  can(resource: Resource, action: Action): boolean;
  allowsIp(ip: string): boolean;
}

export interface KeyListing {
  id: number;
  account: string;
  name: string;
  masked: string;
  permissions: string[];
  allowIps: string[];
  rateLimit: number | null;
  created: string;
  lastUsed: string | null;
  revoked: string | null;
}

export function hashKey(key: string): string {
  return hash("sha256", key);
}

function generateKey(): string {
  let body = "";
  for (let i = 0; i < KEY_BODY_LENGTH; i++) body += BASE62[randomInt(BASE62.length)];
  return KEY_PREFIX + body;
}

function invalid(field: string, error: unknown): ValidationError {
  const message = (error as Error).message;
  return new ValidationError(`${field}: ${message}`, [{ field, message }]);
}

export function maskKey(tail: string): string {
  return `${KEY_PREFIX}…${tail}`;
}

/** What a key row allows; grants, allow-list and limit are fixed at creation, so it never goes stale. */
function principalOf(row: ApiKeyRow): KeyPrincipal {
  const grants: string[] = JSON.parse(row.permissions);
  const allowList = new IpAllowList(JSON.parse(row.allow_ips));
  return {
    keyId: row.id,
    keyName: row.name,
    accountId: row.account_id,
    rateLimit: row.rate_limit,
    can: (resource, action) => allows(grants, resource, action),
    allowsIp: (ip) => allowList.allows(ip),
  };
}

/** A key's SHA-256, as bytes (compared) and as hex (stored, looked up). */
interface Digest {
  bytes: Buffer;
  hex: string;
}

/** Null for a string that cannot be a key: such strings never reach the database. */
function digestOf(key: string): Digest | null {
  if (!KEY_SHAPE.test(key)) return null;
  const bytes = hash("sha256", key, "buffer");
  return { bytes, hex: bytes.toString("hex") };
}

interface QueuedKey {
  key: string;
  callback: (error: unknown, principal: KeyPrincipal | null) => void;
}

interface KnownKey {
  row: ApiKeyRow;
  hash: Buffer;
  principal: KeyPrincipal;
}

export class KeysService {
  /** Last use recorded per key id, epoch ms (see touch). */
  private readonly touchedAt = new Map<number, number>();
  /** What each key seen so far allows, by key id (see remember). */
  private readonly principals = new Map<number, KeyPrincipal>();
  /** Verified, unrevoked keys by hash (see verify). */
  private readonly known = new Map<string, KnownKey>();
  /**
   * Counts the times `known` was emptied. A lookup remembers what it read only if no emptying
   * came between its start and its answer: a read made before a revocation committed can answer
   * the request it serves (that one arrived before), never a later one through the cache.
   */
  private generation = 0;
  /** Keys waiting for this turn's freshness check (see verifyQueued). */
  private queued: QueuedKey[] = [];

  constructor(private readonly repo: KeysRepo) {}

  /** Checks a key request without writing anything; the normalised grants, CIDRs and limit. */
  normalize(request: NewKeyRequest): {
    name: string;
    grants: string[];
    cidrs: string[];
    rateLimit: number | null;
  } {
    const name = request.name.trim();
    if (name.length < 1 || name.length > 100) throw ValidationError.field("name", "must be 1-100 characters");
    let grants: string[];
    try {
      grants = parsePermissions(request.permissions ?? "full");
    } catch (error) {
      throw invalid("permissions", error);
    }
    const cidrs: string[] = [];
    for (const part of (request.allowIps ?? "").split(",").filter((p) => p.trim())) {
      try {
        cidrs.push(parseCidr(part));
      } catch (error) {
        throw invalid("allow_ips", error);
      }
    }
    const rateLimit = request.rateLimit ?? null;
    if (
      rateLimit !== null &&
      (!Number.isInteger(rateLimit) || rateLimit < 1 || rateLimit > MAX_KEY_RATE_LIMIT)
    ) {
      throw ValidationError.field("rate_limit", `must be a whole number from 1 to ${MAX_KEY_RATE_LIMIT}`);
    }
    return { name, grants, cidrs, rateLimit };
  }

  /** Creates a key for the account; the returned plaintext is never available again. */
  async create(account: AccountRow, request: NewKeyRequest): Promise<{ key: string; row: ApiKeyRow }> {
    const { name, grants, cidrs, rateLimit } = this.normalize(request);
    const key = generateKey();
    const row = await this.repo.transaction(async (repo) => {
      const inserted = await repo.insert({
        account_id: account.id,
        name,
        key_hash: hashKey(key),
        key_tail: key.slice(-4),
        permissions: JSON.stringify(grants),
        allow_ips: JSON.stringify(cidrs),
        rate_limit: rateLimit,
        created: isoNow(),
      });
      const after = presentKey({ ...inserted, account_name: account.name });
      await repo.audit({
        accountId: account.id,
        resource: "api_key",
        id: inserted.id,
        action: "create",
        after,
      });
      return inserted;
    });
    return { key, row };
  }

  async list(accountId?: number): Promise<KeyListing[]> {
    return (await this.repo.list(accountId)).map(presentKey);
  }

  /** One page of an account's keys, masked as the console lists them: never the key. */
  async listPage(accountId: number, page: PageRequest): Promise<Page<KeyListing>> {
    const { rows, total } = await this.repo.listPage(accountId, page);
    return { data: rows.map(presentKey), page: page.page, total, limit: page.limit };
  }

  async revoke(id: number): Promise<void> {
    const revoked = await this.repo.transaction(async (repo) => {
      const row = await repo.findById(id);
      const done = row !== undefined && (await repo.revoke(id, isoNow()));
      if (done)
        await repo.audit({
          accountId: row.account_id,
          resource: "api_key",
          id,
          action: "revoke",
          before: row,
        });
      return done;
    });
    // After the write: a verify racing the revocation must not keep the key it read before.
    this.forget();
    if (revoked) return;
    const row = await this.repo.findById(id);
    if (!row) throw new NotFoundError(`no API key with id ${id}`);
    throw new ValidationError(`API key ${id} was already revoked on ${row.revoked}`);
  }

  /**
   * Calls back with the key's principal, or null for unknown, malformed or revoked keys. A
   * revocation made by any process (CLI, another server) is seen by the very next request: the
   * keys verified in one turn of the event loop share one freshness check, made after every one
   * of them had arrived (when the I/O of the turn is done), so each still sees every revocation
   * committed before it came; the keys that check left unknown are looked up together.
   */
  verifyQueued(key: string, callback: (error: unknown, principal: KeyPrincipal | null) => void): void {
    this.queued.push({ key, callback });
    if (this.queued.length === 1) setImmediate(this.verifyQueue);
  }

  private readonly verifyQueue = () => {
    const queued = this.queued;
    this.queued = [];
    const digests: (Digest | null)[] = [];
    // What the cache held for each key right after the check: the answer for this turn, whatever
    // later turns do to the cache while this turn's lookup runs.
    const entries: (KnownKey | undefined)[] = [];
    const missing = new Set<string>();
    try {
      this.refresh();
      for (const { key } of queued) {
        const digest = digestOf(key);
        const known = digest ? this.known.get(digest.hex) : undefined;
        digests.push(digest);
        entries.push(known);
        if (digest && !known) missing.add(digest.hex);
      }
    } catch (error) {
      for (const { callback } of queued) callback(error, null);
      return;
    }
    // One unknown key: verifyDigest looks it up (at once on SQLite). Several: one query for all.
    if (missing.size < 2) return this.answerQueued(queued, digests, entries, undefined);
    const generation = this.generation;
    this.repo.findByHashes([...missing]).then(
      (rows) => {
        const found = new Map<string, KnownKey>();
        for (const row of rows) {
          if (row.revoked === null) found.set(row.key_hash, this.remember(row, generation));
        }
        this.answerQueued(queued, digests, entries, found);
      },
      (error) => {
        for (const { callback } of queued) callback(error, null);
      },
    );
  };

  private answerQueued(
    queued: QueuedKey[],
    digests: (Digest | null)[],
    entries: (KnownKey | undefined)[],
    found: Map<string, KnownKey> | undefined,
  ): void {
    for (const [i, { callback }] of queued.entries()) {
      const digest = digests[i];
      let principal: KeyPrincipal | null | Promise<KeyPrincipal | null>;
      try {
        principal = digest ? this.verifyDigest(digest, entries[i], found) : null;
      } catch (error) {
        callback(error, null);
        continue;
      }
      if (principal instanceof Promise) {
        principal.then(
          (p) => callback(null, p),
          (e) => callback(e, null),
        );
      } else callback(null, principal);
    }
  }

  /**
   * Valid keys are remembered until anything changes the keys (any commit by another connection
   * on SQLite; always on PostgreSQL) or here (revoke): revocation stays immediate.
   */
  private refresh(): void {
    if (this.repo.changedElsewhere()) this.forget();
  }

  private forget(): void {
    this.known.clear();
    this.generation++;
  }

  /** A looked-up key, cached only if the cache was not emptied since the lookup began (`generation`). */
  private remember(row: ApiKeyRow, generation: number): KnownKey {
    // A key's grants, allow-list and limit never change: its principal outlives the cache.
    let principal = this.principals.get(row.id);
    if (!principal) {
      principal = principalOf(row);
      this.principals.set(row.id, principal);
    }
    const known = { row, hash: Buffer.from(row.key_hash, "hex"), principal };
    if (generation === this.generation) this.known.set(row.key_hash, known);
    return known;
  }

  /**
   * Verifies a key by its digest, once refresh has run after the key arrived: `known` is what the
   * cache held then. `found`: the unknown keys were just read from the database, so a key not
   * found there is not valid.
   */
  private verifyDigest(
    digest: Digest,
    known: KnownKey | undefined,
    found: Map<string, KnownKey> | undefined,
  ): KeyPrincipal | null | Promise<KeyPrincipal | null> {
    // Every API request comes here: a known key needs no promise unless its last use is due.
    if (known && !this.touchDue(known.row)) return this.principalIfSame(known, digest.bytes);
    if (!known && found) {
      known = found.get(digest.hex);
      if (!known) return null;
    }
    return this.verifyStored(digest, known);
  }

  private async verifyStored(digest: Digest, known: KnownKey | undefined): Promise<KeyPrincipal | null> {
    if (!known) {
      const generation = this.generation;
      const row = await this.repo.findByHash(digest.hex);
      if (!row || row.revoked !== null) return null;
      known = this.remember(row, generation);
    }
    if (this.touchDue(known.row)) await this.touch(known.row);
    return this.principalIfSame(known, digest.bytes);
  }

  /** The lookup was by hash; the comparison in constant time is the one that decides. */
  private principalIfSame(known: KnownKey, digest: Buffer): KeyPrincipal | null {
    return known.hash.length === digest.length && timingSafeEqual(known.hash, digest)
      ? known.principal
      : null;
  }

  /** Last use is recorded at most once a minute per key (one write a minute, not one per request). */
  private touchDue(row: ApiKeyRow): boolean {
    let last = this.touchedAt.get(row.id);
    if (last === undefined) {
      last = row.last_used ? Date.parse(row.last_used) : 0;
      this.touchedAt.set(row.id, last);
    }
    return Date.now() - last >= TOUCH_INTERVAL_MS;
  }

  /** Awaited, so no write outlives the request; a failed write never fails the request. */
  private async touch(row: ApiKeyRow): Promise<void> {
    const previous = this.touchedAt.get(row.id) ?? 0;
    this.touchedAt.set(row.id, Date.now());
    await this.repo.touch(row.account_id, row.id, isoNow()).catch(() => this.touchedAt.set(row.id, previous));
  }
}

function presentKey(row: ApiKeyListRow): KeyListing {
  return {
    id: row.id,
    account: row.account_name,
    name: row.name,
    masked: maskKey(row.key_tail),
    permissions: JSON.parse(row.permissions),
    allowIps: JSON.parse(row.allow_ips),
    rateLimit: row.rate_limit,
    created: row.created,
    lastUsed: row.last_used,
    revoked: row.revoked,
  };
}
