// API keys: generated here, shown once, stored only as a SHA-256 hash, checked on every request.
import { createHash, randomInt, timingSafeEqual } from "node:crypto";
import type { AccountRow } from "../accounts/repo.ts";
import { NotFoundError, ValidationError } from "../shared/errors.ts";
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
  return createHash("sha256").update(key).digest("hex");
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

export class KeysService {
  /** Parsed grants and allow-lists per key id; both are fixed at creation, so they never go stale. */
  private readonly parsed = new Map<number, { grants: string[]; allowList: IpAllowList }>();
  private readonly touchedAt = new Map<number, number>();
  /** Verified, unrevoked key rows by hash (see verify). */
  private readonly known = new Map<string, ApiKeyRow>();

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
    const row = await this.repo.insert({
      account_id: account.id,
      name,
      key_hash: hashKey(key),
      key_tail: key.slice(-4),
      permissions: JSON.stringify(grants),
      allow_ips: JSON.stringify(cidrs),
      rate_limit: rateLimit,
      created: isoNow(),
    });
    return { key, row };
  }

  async list(accountId?: number): Promise<KeyListing[]> {
    return (await this.repo.list(accountId)).map(presentKey);
  }

  async revoke(id: number): Promise<void> {
    const revoked = await this.repo.revoke(id, isoNow());
    // After the write: a verify racing the revocation must not keep the key it read before.
    this.known.clear();
    if (revoked) return;
    const row = await this.repo.findById(id);
    if (!row) throw new NotFoundError(`no API key with id ${id}`);
    throw new ValidationError(`API key ${id} was already revoked on ${row.revoked}`);
  }

  /**
   * Looks the key up by its hash on every call, so a revocation made by any process (CLI, another
   * server) is seen by the very next request. Returns null for unknown, malformed or revoked keys.
   */
  async verify(key: string): Promise<KeyPrincipal | null> {
    if (!KEY_SHAPE.test(key)) return null;
    const keyHash = hashKey(key);
    // Valid keys are remembered until anything changes the keys elsewhere (another process's
    // commit on SQLite; always on PostgreSQL) or here (revoke): revocation stays immediate.
    if (await this.repo.changedElsewhere()) this.known.clear();
    let row = this.known.get(keyHash);
    if (!row) {
      row = await this.repo.findByHash(keyHash);
      if (row && row.revoked === null) this.known.set(keyHash, row);
    }
    if (!row || row.revoked !== null) return null;
    if (!timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(keyHash))) return null;
    await this.touch(row);
    let parsed = this.parsed.get(row.id);
    if (!parsed) {
      parsed = { grants: JSON.parse(row.permissions), allowList: new IpAllowList(JSON.parse(row.allow_ips)) };
      this.parsed.set(row.id, parsed);
    }
    const { grants, allowList } = parsed;
    return {
      keyId: row.id,
      accountId: row.account_id,
      rateLimit: row.rate_limit,
      can: (resource, action) => allows(grants, resource, action),
      allowsIp: (ip) => allowList.allows(ip),
    };
  }

  /**
   * Records last use at most once a minute per key (one write a minute, not one per request).
   * Awaited, so no write outlives the request; a failed write never fails the request.
   */
  private async touch(row: ApiKeyRow): Promise<void> {
    const now = Date.now();
    const last = Math.max(this.touchedAt.get(row.id) ?? 0, row.last_used ? Date.parse(row.last_used) : 0);
    if (now - last < TOUCH_INTERVAL_MS) return;
    this.touchedAt.set(row.id, now);
    await this.repo.touch(row.id, isoNow()).catch(() => this.touchedAt.delete(row.id));
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
