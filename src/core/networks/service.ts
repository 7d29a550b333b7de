// Networks: the RADIUS clients (the access points or controller of one site). Each is a row of
// FreeRADIUS's `nas` table, so a real FreeRADIUS trusts the same clients, with the same secrets, as
// Wisp's own RADIUS server. The shared secret leaves this service only on creation, when it is changed,
// and to the RADIUS door (findClientByAddress).
import { isUniqueViolation } from "../../db/database.ts";
import {
  MAB_MODES,
  MAB_PASSWORDS,
  MAX_MAB_SECRET,
  type MabMode,
  type MabPassword,
} from "../devices/rules.ts";
import { canonicalTimeZone, timeZoneProblem } from "../policies/rules.ts";
import { type Transport, transportOf } from "../radsec/rules.ts";
import { ConflictError, type FieldProblem, NotFoundError, ValidationError } from "../shared/errors.ts";
import type { Page, PageRequest } from "../shared/pages.ts";
import { parseSort } from "../shared/sort.ts";
import { hasControlCharacters } from "../shared/text.ts";
import { isoNow } from "../shared/time.ts";
import { addressRange, canonicalNasIp, containingNetworks, widthProblem } from "./address.ts";
import type { NetworkChanges, NetworkFilter, NetworkListRow, NetworkRow, NetworksRepo } from "./repo.ts";
import {
  COA_FALLBACKS,
  type CoaFallback,
  checkSecret,
  DEFAULT_COA_PORT,
  DEFAULT_COA_RATE,
  DEFAULT_MIN_PREFIX,
  EAP_METHOD_CHOICES,
  type EapMethodChoice,
  eapMethodOf,
  GATEWAY_VENDORS,
  type GatewayVendor,
  gatewayVendorOf,
  generateSecret,
  MAX_COA_RATE,
  MAX_DESCRIPTION,
  MAX_INTERIM_INTERVAL,
  MAX_NAS_IDENTIFIER,
  MAX_NETWORK_NAME,
  MAX_STALE_AFTER,
  MIN_INTERIM_INTERVAL,
  NETWORK_SORT_FIELDS,
  type NetworkPrefixLimits,
  shortnameOf,
} from "./rules.ts";

export interface Network {
  id: number;
  name: string;
  /**
   * The client's address or CIDR, canonical (a single address has no /32 or /128); '' for a network
   * reached over RadSec only (its NAS is known by certificate, so several sites behind one NAT
   * address are separate networks).
   */
  nas_ip: string;
  /** udp (by address), radsec (by certificate only) or both. */
  transport: Transport;
  nas_identifier: string;
  description: string;
  require_message_authenticator: boolean;
  /** Wisp may send Disconnect-/CoA-Requests (RFC 5176) to the session's NAS on coa_port. */
  coa_enabled: boolean;
  coa_port: number;
  /** After a CoA-NAK or no answer: none (recorded only) or disconnect (a Disconnect-Request). */
  coa_fallback: CoaFallback;
  /** CoA-Requests per second to one NAS when a change reaches many sessions. */
  coa_rate: number;
  /** Acct-Interim-Interval sent in every Access-Accept, seconds; 0: none. */
  interim_interval: number;
  /** Seconds without accounting before an open session is closed; 0: three interim intervals. */
  stale_after: number;
  /** The EAP method proposed first to WPA-Enterprise supplicants (others get it after a NAK). */
  eap_method: EapMethodChoice;
  /** MAC authentication (src/core/devices/mab.ts): off, devices, or guests (devices and remembered guests). */
  mab_mode: MabMode;
  /** The password the gateways send with MAC authentication: mac, empty, or secret. */
  mab_password: MabPassword;
  /** Whether a network-wide MAB password is set (it is never returned). */
  mab_secret_set: boolean;
  /** IANA zone of policies' time conditions on this network (migration 030); null: the account's. */
  time_zone: string | null;
  /** The gateway's vendor: which attributes carry a plan's bandwidth (core/plans/bandwidth.ts). */
  vendor: GatewayVendor;
  created: string;
  updated: string;
}

/** A network in an operator's listing, which spans accounts. */
export interface NetworkListing extends Network {
  account_id: number;
  account: string;
  /**
   * Wider than NETWORK_MIN_PREFIX_IPV4 / _IPV6 allow (made before the limit, or under a lower
   * one): it keeps working, and a change of its address must narrow it.
   */
  too_wide: boolean;
}

export interface NetworkInput {
  name?: string | undefined;
  nas_ip?: string | undefined;
  /** Write-only. Omitted on create: one is generated. */
  secret?: string | undefined;
  nas_identifier?: string | undefined;
  description?: string | undefined;
  require_message_authenticator?: boolean | undefined;
  coa_enabled?: boolean | undefined;
  coa_port?: number | undefined;
  coa_fallback?: string | undefined;
  coa_rate?: number | undefined;
  interim_interval?: number | undefined;
  stale_after?: number | undefined;
  eap_method?: string | undefined;
  mab_mode?: string | undefined;
  mab_password?: string | undefined;
  /** Write-only; empty removes it. */
  mab_secret?: string | undefined;
  /** An IANA time zone name; null or empty: the account's. */
  time_zone?: string | null | undefined;
  vendor?: string | undefined;
}

/** The only shapes in which a secret leaves the service (besides the RADIUS door's row). */
export interface NetworkWithSecret {
  network: Network;
  secret: string;
}

/** A network as the RADIUS door needs it: the row, with account_id and secret. */
export type RadiusClient = NetworkRow;

/** Which networks have RadSec set up (core/radsec): a certificate not revoked, or an uploaded CA. */
export interface RadsecPresence {
  networksWithRadsec(accountId: number, networkIds: number[]): Promise<Set<number>>;
}

function present(row: NetworkRow, hasRadsec: boolean): Network {
  return {
    id: row.id,
    name: row.name,
    nas_ip: row.nasname,
    transport: transportOf(row.nasname, hasRadsec),
    nas_identifier: row.nas_identifier,
    description: row.description ?? "",
    require_message_authenticator: row.require_message_authenticator !== 0,
    coa_enabled: row.coa_enabled !== 0,
    coa_port: row.coa_port,
    coa_fallback: row.coa_fallback === "disconnect" ? "disconnect" : "none",
    coa_rate: row.coa_rate,
    interim_interval: row.interim_interval,
    stale_after: row.stale_after,
    eap_method: eapMethodOf(row.eap_method),
    mab_mode: (MAB_MODES as readonly string[]).includes(row.mab_mode) ? (row.mab_mode as MabMode) : "off",
    mab_password: (MAB_PASSWORDS as readonly string[]).includes(row.mab_password)
      ? (row.mab_password as MabPassword)
      : "mac",
    mab_secret_set: row.mab_secret !== "",
    time_zone: row.time_zone ?? null,
    vendor: gatewayVendorOf(row.vendor),
    created: row.created,
    updated: row.updated,
  };
}

function text(value: string, max: number): boolean {
  return value.length <= max && !hasControlCharacters(value);
}

/** Checks every given field; returns the input with the name trimmed and nas_ip canonical. */
function check(input: NetworkInput): NetworkInput {
  const problems: FieldProblem[] = [];
  const clean = { ...input };
  if (input.name !== undefined) {
    clean.name = input.name.trim();
    if (clean.name.length < 1 || !text(clean.name, MAX_NETWORK_NAME)) {
      problems.push({
        field: "name",
        message: `must be 1-${MAX_NETWORK_NAME} characters without control characters`,
      });
    }
  }
  if (input.nas_ip === "") {
    clean.nas_ip = ""; // no address: reached over RadSec only
  } else if (input.nas_ip !== undefined) {
    try {
      clean.nas_ip = canonicalNasIp(input.nas_ip);
    } catch (error) {
      problems.push({ field: "nas_ip", message: (error as Error).message });
    }
  }
  const badSecret = input.secret === undefined ? null : checkSecret(input.secret);
  if (badSecret) problems.push({ field: "secret", message: badSecret });
  if (input.nas_identifier !== undefined && !text(input.nas_identifier, MAX_NAS_IDENTIFIER)) {
    problems.push({
      field: "nas_identifier",
      message: `must be at most ${MAX_NAS_IDENTIFIER} characters without control characters`,
    });
  }
  if (input.description !== undefined && !text(input.description, MAX_DESCRIPTION)) {
    problems.push({
      field: "description",
      message: `must be at most ${MAX_DESCRIPTION} characters without control characters`,
    });
  }
  if (
    input.require_message_authenticator !== undefined &&
    typeof input.require_message_authenticator !== "boolean"
  ) {
    problems.push({ field: "require_message_authenticator", message: "must be true or false" });
  }
  if (input.coa_enabled !== undefined && typeof input.coa_enabled !== "boolean") {
    problems.push({ field: "coa_enabled", message: "must be true or false" });
  }
  const whole = (value: unknown, min: number, max: number) =>
    Number.isInteger(value) && (value as number) >= min && (value as number) <= max;
  if (input.coa_port !== undefined && !whole(input.coa_port, 1, 65535)) {
    problems.push({ field: "coa_port", message: "must be a UDP port from 1 to 65535" });
  }
  if (
    input.coa_fallback !== undefined &&
    !(COA_FALLBACKS as readonly string[]).includes(input.coa_fallback)
  ) {
    problems.push({ field: "coa_fallback", message: `must be one of ${COA_FALLBACKS.join(", ")}` });
  }
  if (input.coa_rate !== undefined && !whole(input.coa_rate, 1, MAX_COA_RATE)) {
    problems.push({
      field: "coa_rate",
      message: `must be a whole number of requests per second from 1 to ${MAX_COA_RATE}`,
    });
  }
  if (
    input.interim_interval !== undefined &&
    input.interim_interval !== 0 &&
    !whole(input.interim_interval, MIN_INTERIM_INTERVAL, MAX_INTERIM_INTERVAL)
  ) {
    problems.push({
      field: "interim_interval",
      message: `must be 0 (none sent) or whole seconds from ${MIN_INTERIM_INTERVAL} to ${MAX_INTERIM_INTERVAL}`,
    });
  }
  if (input.stale_after !== undefined && !whole(input.stale_after, 0, MAX_STALE_AFTER)) {
    problems.push({
      field: "stale_after",
      message: `must be 0 (three interim intervals) or whole seconds up to ${MAX_STALE_AFTER}`,
    });
  }
  if (input.eap_method !== undefined) {
    const method = typeof input.eap_method === "string" ? input.eap_method.toLowerCase() : "";
    if ((EAP_METHOD_CHOICES as readonly string[]).includes(method)) clean.eap_method = method;
    else problems.push({ field: "eap_method", message: `must be one of ${EAP_METHOD_CHOICES.join(", ")}` });
  }
  checkMab(input, problems);
  if (typeof input.time_zone === "string" && input.time_zone !== "") {
    const problem = timeZoneProblem(input.time_zone);
    if (problem) problems.push({ field: "time_zone", message: problem });
    else clean.time_zone = canonicalTimeZone(input.time_zone);
  } else if (input.time_zone === "") clean.time_zone = null;
  const first = problems[0];
  if (first) throw new ValidationError(`${first.field} ${first.message}`, problems);
  return clean;
}

/** MAC authentication's settings (src/core/devices/rules.ts). */
function checkMab(input: NetworkInput, problems: FieldProblem[]): void {
  if (input.vendor !== undefined && !(GATEWAY_VENDORS as readonly string[]).includes(input.vendor)) {
    problems.push({ field: "vendor", message: `must be one of ${GATEWAY_VENDORS.join(", ")}` });
  }
  if (input.mab_mode !== undefined && !(MAB_MODES as readonly string[]).includes(input.mab_mode)) {
    problems.push({ field: "mab_mode", message: `must be one of ${MAB_MODES.join(", ")}` });
  }
  if (
    input.mab_password !== undefined &&
    !(MAB_PASSWORDS as readonly string[]).includes(input.mab_password)
  ) {
    problems.push({ field: "mab_password", message: `must be one of ${MAB_PASSWORDS.join(", ")}` });
  }
  const secret = input.mab_secret;
  if (
    secret !== undefined &&
    secret !== "" &&
    (secret.length > MAX_MAB_SECRET || !/^[\x20-\x7e]+$/.test(secret))
  ) {
    problems.push({
      field: "mab_secret",
      message: `must be 1-${MAX_MAB_SECRET} printable ASCII characters, or empty to remove it`,
    });
  }
}

/** A network asking for the MAB secret has one once the change is applied. */
function mabSecretMissing(password: string, secret: string): ValidationError | null {
  if (password !== "secret" || secret !== "") return null;
  return ValidationError.field("mab_secret", "is required when mab_password is secret");
}

/** Says nothing of the other network (it may be another account's) beyond that it exists. */
function addressTaken(nasIp: string): ConflictError {
  return new ConflictError(`nas_ip ${nasIp} is already used by another network`);
}

/** Names nothing of the other account's network: not its name, id, or addresses. */
function overlapsAnotherAccount(nasIp: string): ConflictError {
  return new ConflictError(`nas_ip ${nasIp} overlaps another account's network`);
}

/**
 * The one rule for a network's address (canonical text): refuses an address another network has,
 * or one that shares an address with another account's network (within one account networks may
 * nest: the narrowest holds the packet). Call it inside a transaction that holds
 * repo.lockAddresses(), so two accounts cannot both pass at once, and store the range columns it
 * returns with the address. Exported for doors that write networks in a transaction of their own
 * (the demo seed); `self` is the network being moved.
 */
export async function claimAddress(
  repo: NetworksRepo,
  accountId: number,
  nasIp: string,
  self?: number,
): Promise<{ range_start: string | null; range_end: string | null }> {
  if (nasIp === "") return { range_start: null, range_end: null };
  const clash = await repo.idByNasname(nasIp);
  if (clash !== undefined && clash !== self) throw addressTaken(nasIp);
  const range = addressRange(nasIp);
  if (await repo.overlapsOtherAccount(accountId, range)) throw overlapsAnotherAccount(nasIp);
  return { range_start: range.start, range_end: range.end };
}

function notFound(id: number): NotFoundError {
  return new NotFoundError(`network ${id} not found`);
}

export class NetworksService {
  /** `minPrefix`: NETWORK_MIN_PREFIX_IPV4 / _IPV6, the widest range a network may be given. */
  constructor(
    private readonly repo: NetworksRepo,
    readonly minPrefix: NetworkPrefixLimits = DEFAULT_MIN_PREFIX,
    private readonly radsec?: RadsecPresence,
  ) {}

  /** The networks presented, each with its transport (one query per account for the RadSec part). */
  private async presentAll<T extends NetworkRow>(rows: T[]): Promise<Network[]> {
    const byAccount = new Map<number, number[]>();
    for (const row of rows) {
      const ids = byAccount.get(row.account_id);
      if (ids) ids.push(row.id);
      else byAccount.set(row.account_id, [row.id]);
    }
    const withRadsec = new Set<string>();
    if (this.radsec) {
      for (const [accountId, ids] of byAccount) {
        for (const id of await this.radsec.networksWithRadsec(accountId, ids))
          withRadsec.add(`${accountId}:${id}`);
      }
    }
    return rows.map((row) => present(row, withRadsec.has(`${row.account_id}:${row.id}`)));
  }

  private async presentOne(row: NetworkRow): Promise<Network> {
    return (await this.presentAll([row]))[0]!;
  }

  /**
   * The one rule for a network's width, for every door: a range wider than the limits is refused
   * before anything is written. Networks stored wider keep working (see tooWide).
   */
  private checkWidth(nasIp: string): void {
    const problem = this.widthProblem(nasIp);
    if (problem) throw ValidationError.field("nas_ip", problem);
  }

  /** Why the network's address is wider than the limits allow, or null (for doors that flag it). */
  widthProblem(nasIp: string): string | null {
    return widthProblem(nasIp, this.minPrefix);
  }

  /**
   * Networks wider than the limits allow, in every account: made before the limits (or under
   * lower ones). They keep working; the server names each at start-up and `wisp networks list`
   * flags them, so an operator can narrow them (a change of address must) or raise the limits.
   */
  async tooWide(): Promise<NetworkListing[]> {
    const rows = await this.repo.listWithAccounts({ ranges: true });
    return (await this.listings(rows)).filter((network) => network.too_wide);
  }

  private async listings(rows: NetworkListRow[]): Promise<NetworkListing[]> {
    const networks = await this.presentAll(rows);
    return rows.map((row, i) => ({
      ...networks[i]!,
      account_id: row.account_id,
      account: row.account_name,
      too_wide: this.widthProblem(row.nasname) !== null,
    }));
  }

  /** `sort`: a field of NETWORK_SORT_FIELDS, "-" first for descending; by id by default. */
  async list(
    accountId: number,
    filter: NetworkFilter,
    page: PageRequest,
    sort?: string,
  ): Promise<Page<Network>> {
    const order = parseSort(sort, NETWORK_SORT_FIELDS);
    const { rows, total } = await this.repo.list(accountId, filter, page, order);
    return { data: await this.presentAll(rows), page: page.page, total, limit: page.limit };
  }

  async get(accountId: number, id: number): Promise<Network> {
    const row = await this.repo.findById(accountId, id);
    if (!row) throw notFound(id);
    return this.presentOne(row);
  }

  /** Operators' listing (CLI): all accounts, or one. Never carries secrets. */
  async listAll(accountId?: number): Promise<NetworkListing[]> {
    return this.listings(await this.repo.listWithAccounts({ accountId }));
  }

  /**
   * Network `id` in whichever account owns it, for operators' doors (CLI) that address networks by
   * id alone. When the operator also named an account, the network must belong to it.
   */
  async locate(id: number, accountId?: number): Promise<NetworkListing> {
    const row = (await this.repo.listWithAccounts({ id }))[0];
    if (!row) throw notFound(id);
    if (accountId !== undefined && row.account_id !== accountId) {
      throw new NotFoundError(`network ${id} belongs to another account`);
    }
    return (await this.listings([row]))[0]!;
  }

  /** Validates a new network without writing, so a door can refuse before it writes anything else. */
  validateNew(input: NetworkInput): NetworkInput {
    if (input.name === undefined) throw ValidationError.field("name", "is required");
    if (input.nas_ip === undefined) {
      throw ValidationError.field("nas_ip", "is required ('' for a network reached over RadSec only)");
    }
    const clean = check(input);
    this.checkWidth(clean.nas_ip ?? "");
    const missing = mabSecretMissing(clean.mab_password ?? "mac", clean.mab_secret ?? "");
    if (missing) throw missing;
    return clean;
  }

  /** Creates the network; the returned secret (given or generated) is never available again. */
  async create(accountId: number, input: NetworkInput): Promise<NetworkWithSecret> {
    const clean = this.validateNew(input);
    const name = clean.name ?? "";
    const nasIp = clean.nas_ip ?? "";
    const secret = clean.secret ?? generateSecret();
    const now = isoNow();
    let row: NetworkRow;
    try {
      row = await this.repo.transaction(async (repo) => {
        await repo.lockAddresses();
        const range = await claimAddress(repo, accountId, nasIp);
        const inserted = await repo.insert({
          account_id: accountId,
          nasname: nasIp,
          ...range,
          shortname: shortnameOf(name),
          secret,
          description: clean.description ?? "",
          name,
          nas_identifier: clean.nas_identifier ?? "",
          require_message_authenticator: clean.require_message_authenticator ? 1 : 0,
          coa_enabled: clean.coa_enabled ? 1 : 0,
          coa_port: clean.coa_port ?? DEFAULT_COA_PORT,
          coa_fallback: clean.coa_fallback ?? "none",
          coa_rate: clean.coa_rate ?? DEFAULT_COA_RATE,
          interim_interval: clean.interim_interval ?? 0,
          stale_after: clean.stale_after ?? 0,
          ...(clean.eap_method === undefined ? {} : { eap_method: clean.eap_method.toUpperCase() }),
          mab_mode: clean.mab_mode ?? "off",
          mab_password: clean.mab_password ?? "mac",
          mab_secret: clean.mab_secret ?? "",
          time_zone: clean.time_zone ?? null,
          vendor: clean.vendor ?? "generic",
          created: now,
          updated: now,
        });
        await repo.audit({
          accountId,
          resource: "network",
          id: inserted.id,
          action: "create",
          after: inserted,
        });
        return inserted;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw addressTaken(nasIp);
      throw error;
    }
    // Presented after the transaction: on SQLite, one connection, a read beside it would wait for it.
    return { network: await this.presentOne(row), secret };
  }

  /** Partial update: only the fields given change. `secret` is returned only when it was changed. */
  async update(
    accountId: number,
    id: number,
    input: NetworkInput,
  ): Promise<{ network: Network; secret?: string }> {
    const clean = check(input);
    let row: NetworkRow;
    try {
      row = await this.repo.transaction(async (repo) => {
        if (clean.nas_ip !== undefined) await repo.lockAddresses();
        const current = await repo.findById(accountId, id);
        if (!current) throw notFound(id);
        const changes: NetworkChanges = { updated: isoNow() };
        if (clean.name !== undefined) {
          changes.name = clean.name;
          changes.shortname = shortnameOf(clean.name);
        }
        // Giving the stored address again is no change, so a network made wider than the limits
        // before them can still be edited (the console's form sends every field); moving it cannot
        // keep it too wide.
        if (clean.nas_ip !== undefined && clean.nas_ip !== current.nasname) {
          this.checkWidth(clean.nas_ip);
          Object.assign(changes, await claimAddress(repo, accountId, clean.nas_ip, id));
          changes.nasname = clean.nas_ip;
        }
        if (clean.secret !== undefined) changes.secret = clean.secret;
        if (clean.nas_identifier !== undefined) changes.nas_identifier = clean.nas_identifier;
        if (clean.description !== undefined) changes.description = clean.description;
        if (clean.require_message_authenticator !== undefined) {
          changes.require_message_authenticator = clean.require_message_authenticator ? 1 : 0;
        }
        if (clean.coa_enabled !== undefined) changes.coa_enabled = clean.coa_enabled ? 1 : 0;
        if (clean.coa_port !== undefined) changes.coa_port = clean.coa_port;
        if (clean.coa_fallback !== undefined) changes.coa_fallback = clean.coa_fallback;
        if (clean.coa_rate !== undefined) changes.coa_rate = clean.coa_rate;
        if (clean.interim_interval !== undefined) changes.interim_interval = clean.interim_interval;
        if (clean.stale_after !== undefined) changes.stale_after = clean.stale_after;
        if (clean.eap_method !== undefined) changes.eap_method = clean.eap_method.toUpperCase();
        if (clean.mab_mode !== undefined) changes.mab_mode = clean.mab_mode;
        if (clean.mab_password !== undefined) changes.mab_password = clean.mab_password;
        if (clean.mab_secret !== undefined) changes.mab_secret = clean.mab_secret;
        if (clean.time_zone !== undefined) changes.time_zone = clean.time_zone;
        if (clean.vendor !== undefined) changes.vendor = clean.vendor;
        const missing = mabSecretMissing(
          clean.mab_password ?? current.mab_password,
          clean.mab_secret ?? current.mab_secret,
        );
        if (missing) throw missing;
        const updated = await repo.update(accountId, id, changes);
        if (!updated) throw notFound(id);
        await repo.audit({
          accountId,
          resource: "network",
          id,
          action: "update",
          before: current,
          after: updated,
        });
        return updated;
      });
    } catch (error) {
      if (isUniqueViolation(error) && clean.nas_ip !== undefined) throw addressTaken(clean.nas_ip);
      throw error;
    }
    const network = await this.presentOne(row);
    return clean.secret === undefined ? { network } : { network, secret: clean.secret };
  }

  /** Replaces the shared secret with a generated one and returns it (shown once). */
  async rotateSecret(accountId: number, id: number): Promise<NetworkWithSecret> {
    const secret = generateSecret();
    const row = await this.repo.transaction(async (repo) => {
      const current = await repo.findById(accountId, id);
      const updated = current && (await repo.update(accountId, id, { secret, updated: isoNow() }));
      if (!updated) throw notFound(id);
      await repo.audit({
        accountId,
        resource: "network",
        id,
        action: "rotate_secret",
        before: current,
        after: updated,
      });
      return updated;
    });
    return { network: await this.presentOne(row), secret };
  }

  /** Deletes the network with its captive portals; past sessions and auth records stay, for reports. */
  async delete(accountId: number, id: number): Promise<{ network: Network; portalsDeleted: number }> {
    // Presented as it was, before the transaction (on SQLite a read beside it would wait for it).
    const network = await this.get(accountId, id);
    const portalsDeleted = await this.repo.transaction(async (repo) => {
      const current = await repo.findById(accountId, id);
      if (!current) throw notFound(id);
      const deleted = await repo.deleteWithPortals(accountId, id, isoNow());
      await repo.audit({
        accountId,
        resource: "network",
        id,
        action: "delete",
        before: current,
        after: { portalsDeleted: deleted },
      });
      return deleted;
    });
    return { network, portalsDeleted };
  }

  /** How many captive portals the network has (operators' doors show it before a delete). */
  countPortals(accountId: number, id: number): Promise<number> {
    return this.repo.countPortals(accountId, id);
  }

  /**
   * The RADIUS door's lookup: the network a packet from `ip` comes from, secret included. An exact
   * address wins, then the most specific CIDR containing it (as FreeRADIUS picks clients). Networks
   * of different accounts never overlap (claimAddress), so every candidate is of one account, and
   * the answer tells which account the packet belongs to. Rows that overlapped before that rule
   * (migration 011) are left as they were: the narrowest still wins, deterministically, as addresses
   * are unique. Undefined for unknown sources and for text that is not an address.
   */
  async findClientByAddress(ip: string): Promise<RadiusClient | undefined> {
    const candidates = containingNetworks(ip);
    const rows = await this.repo.findByNasnames(candidates);
    const rank = (row: NetworkRow) => candidates.indexOf(row.nasname);
    return rows.sort((a, b) => rank(a) - rank(b))[0];
  }

  /** A network as a RADIUS client, secret included: for RADIUS clients of Wisp (`wisp radius test`). */
  async client(accountId: number, id: number): Promise<RadiusClient> {
    const row = await this.repo.findById(accountId, id);
    if (!row) throw notFound(id);
    return row;
  }
}
