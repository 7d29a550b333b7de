// Devices: MAC addresses an account knows. An operator registers printers, TVs and sensors (the
// API, the console, a CSV import); a captive portal remembers a guest's device after a sign-in;
// a user adds their own on the "my devices" page. Networks with MAC authentication on let them in
// by their MAC alone (src/core/devices/mab.ts decides). Revoking one (disable, delete) disconnects
// its open sessions.
import { isUniqueViolation } from "../../db/database.ts";
import { ConflictError, type FieldProblem, NotFoundError, ValidationError } from "../shared/errors.ts";
import type { Page, PageRequest } from "../shared/pages.ts";
import { parseSort } from "../shared/sort.ts";
import { hasControlCharacters } from "../shared/text.ts";
import { isoNow } from "../shared/time.ts";
import { exportDevices, importDevices } from "./csv.ts";
import { canonicalMac, MAC_RULE, macProblem } from "./mac.ts";
import type { DeviceChanges, DeviceFilter, DeviceRow, DevicesRepo } from "./repo.ts";
import {
  DEVICE_KINDS,
  DEVICE_SORT_FIELDS,
  DEVICE_STATUSES,
  type DeviceKind,
  type DeviceStatus,
  MAX_DEVICE_DESCRIPTION,
  MAX_DEVICE_NAME,
} from "./rules.ts";

export interface Device {
  id: number;
  mac: string;
  name: string;
  description: string;
  status: DeviceStatus;
  kind: DeviceKind;
  user_id: number | null;
  voucher_id: number | null;
  group_id: number | null;
  portal_id: number | null;
  expires: string | null;
  last_seen: string | null;
  last_network_id: number | null;
  created: string;
  updated: string;
}

export interface DeviceInput {
  mac?: string | undefined;
  name?: string | undefined;
  description?: string | undefined;
  status?: string | undefined;
  user_id?: number | null | undefined;
  voucher_id?: number | null | undefined;
  group_id?: number | null | undefined;
  /** ISO 8601 date or date-time, or Unix seconds; null: never. */
  expires?: string | null | undefined;
}

export interface DeviceListInput {
  status?: string | undefined;
  kind?: string | undefined;
  user_id?: number | undefined;
  voucher_id?: number | undefined;
  group_id?: number | undefined;
  search?: string | undefined;
}

export function presentDevice(row: DeviceRow): Device {
  return {
    id: row.id,
    mac: row.mac,
    name: row.name,
    description: row.description,
    status: row.status as DeviceStatus,
    kind: row.kind as DeviceKind,
    user_id: row.user_id,
    voucher_id: row.voucher_id,
    group_id: row.group_id,
    portal_id: row.portal_id,
    expires: row.expires,
    last_seen: row.last_seen,
    last_network_id: row.last_network_id,
    created: row.created,
    updated: row.updated,
  };
}

/** An expiry as stored (ISO, second precision, Z), or a problem. */
export function parseExpiry(value: string): string | null {
  const text = value.trim();
  let ms = Number.NaN;
  if (/^\d{1,10}$/.test(text)) ms = Number(text) * 1000;
  else if (/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text)) {
    ms = Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text);
  }
  return Number.isNaN(ms) ? null : isoNow(new Date(ms));
}

const text = (value: string, max: number) => value.length <= max && !hasControlCharacters(value);

/** Checks every given field; returns the input with the MAC canonical and the expiry as stored. */
export function checkDevice(input: DeviceInput): DeviceInput {
  const problems: FieldProblem[] = [];
  const clean = { ...input };
  if (input.mac !== undefined) {
    const problem = macProblem(input.mac);
    if (problem) problems.push({ field: "mac", message: problem });
    else clean.mac = canonicalMac(input.mac.trim()) ?? undefined;
  }
  if (input.name !== undefined) {
    clean.name = input.name.trim();
    if (!text(clean.name, MAX_DEVICE_NAME)) {
      problems.push({
        field: "name",
        message: `must be at most ${MAX_DEVICE_NAME} characters without control characters`,
      });
    }
  }
  if (input.description !== undefined && !text(input.description, MAX_DEVICE_DESCRIPTION)) {
    problems.push({
      field: "description",
      message: `must be at most ${MAX_DEVICE_DESCRIPTION} characters without control characters`,
    });
  }
  if (input.status !== undefined && !(DEVICE_STATUSES as readonly string[]).includes(input.status)) {
    problems.push({ field: "status", message: `must be one of ${DEVICE_STATUSES.join(", ")}` });
  }
  for (const field of ["user_id", "voucher_id", "group_id"] as const) {
    const id = input[field];
    if (id !== undefined && id !== null && (!Number.isInteger(id) || id < 1 || id > 2_147_483_647)) {
      problems.push({ field, message: "must be a positive whole number or null" });
    }
  }
  if (input.user_id != null && input.voucher_id != null) {
    problems.push({
      field: "voucher_id",
      message: "must be null when user_id is set: a device has one owner",
    });
  }
  if (input.expires !== undefined && input.expires !== null) {
    const expires = parseExpiry(input.expires);
    if (expires === null) {
      problems.push({
        field: "expires",
        message: "must be an ISO 8601 date or date-time, Unix seconds, or null",
      });
    } else clean.expires = expires;
  }
  const first = problems[0];
  if (first) throw new ValidationError(`${first.field} ${first.message}`, problems);
  return clean;
}

export interface DeviceActivity {
  device: Device;
  sessions: {
    id: number;
    username: string;
    network_id: number | null;
    start: string | null;
    stop: string | null;
    input_bytes: number;
    output_bytes: number;
    terminate_cause: string | null;
  }[];
  authentications: {
    time: string;
    username: string;
    method: string | null;
    reply: string;
    reason: string | null;
    network_id: number | null;
    /** The policy that decided it (null: none evaluated). */
    policy_name: string | null;
  }[];
}

/** A stored time as ISO: Unix seconds or a Date (radacct), or SQLite's "YYYY-MM-DD HH:MM:SS" (radpostauth). */
function isoOf(value: number | string | Date | null): string | null {
  if (value === null) return null;
  if (value instanceof Date) return isoNow(value);
  if (typeof value === "number" || /^\d+$/.test(value)) return isoNow(new Date(Number(value) * 1000));
  return isoNow(new Date(`${value.replace(" ", "T")}${value.endsWith("Z") ? "" : "Z"}`));
}

function notFound(id: number): NotFoundError {
  return new NotFoundError(`device ${id} not found`);
}

export function duplicateMac(mac: string): ConflictError {
  return new ConflictError(`a device with MAC ${mac} already exists`);
}

/** Owner and group must be this account's: the same answer for another account's ids as for none. */
async function checkReferences(repo: DevicesRepo, accountId: number, input: DeviceInput): Promise<void> {
  if (input.user_id != null && !(await repo.userById(accountId, input.user_id))) {
    throw ValidationError.field("user_id", `${input.user_id} is not a user of this account`);
  }
  if (input.voucher_id != null && !(await repo.voucherById(accountId, input.voucher_id))) {
    throw ValidationError.field("voucher_id", `${input.voucher_id} is not a voucher of this account`);
  }
  if (input.group_id != null && !(await repo.groupById(accountId, input.group_id))) {
    throw ValidationError.field("group_id", `${input.group_id} is not a group of this account`);
  }
}

/** The stored columns of the fields given. */
function columnsOf(clean: DeviceInput): DeviceChanges {
  const changes: DeviceChanges = {};
  if (clean.mac !== undefined) changes.mac = clean.mac;
  if (clean.name !== undefined) changes.name = clean.name;
  if (clean.description !== undefined) changes.description = clean.description;
  if (clean.status !== undefined) changes.status = clean.status;
  if (clean.user_id !== undefined) changes.user_id = clean.user_id;
  if (clean.voucher_id !== undefined) changes.voucher_id = clean.voucher_id;
  // An owner replaces the other kind of owner.
  if (clean.user_id != null) changes.voucher_id = null;
  if (clean.voucher_id != null) changes.user_id = null;
  if (clean.group_id !== undefined) changes.group_id = clean.group_id;
  if (clean.expires !== undefined) changes.expires = clean.expires;
  return changes;
}

export class DevicesService {
  constructor(readonly repo: DevicesRepo) {}

  async list(
    accountId: number,
    input: DeviceListInput,
    page: PageRequest,
    sort?: string,
  ): Promise<Page<Device>> {
    const order = parseSort(sort, DEVICE_SORT_FIELDS);
    if (input.status !== undefined && !(DEVICE_STATUSES as readonly string[]).includes(input.status)) {
      throw ValidationError.field("status", `must be one of ${DEVICE_STATUSES.join(", ")}`);
    }
    if (input.kind !== undefined && !(DEVICE_KINDS as readonly string[]).includes(input.kind)) {
      throw ValidationError.field("kind", `must be one of ${DEVICE_KINDS.join(", ")}`);
    }
    const filter: DeviceFilter = {
      status: input.status,
      kind: input.kind,
      userId: input.user_id,
      voucherId: input.voucher_id,
      groupId: input.group_id,
      // A MAC searched in another notation finds the stored form.
      search: input.search === undefined ? undefined : (canonicalMac(input.search.trim()) ?? input.search),
    };
    const { rows, total } = await this.repo.list(accountId, filter, page, order);
    return { data: rows.map(presentDevice), page: page.page, total, limit: page.limit };
  }

  async get(accountId: number, id: number): Promise<Device> {
    const row = await this.repo.findById(accountId, id);
    if (!row) throw notFound(id);
    return presentDevice(row);
  }

  async create(accountId: number, input: DeviceInput, kind: DeviceKind = "registered"): Promise<Device> {
    if (input.mac === undefined) throw ValidationError.field("mac", "is required");
    const clean = checkDevice(input);
    const mac = clean.mac ?? "";
    const now = isoNow();
    try {
      return await this.repo.transaction(async (repo) => {
        await checkReferences(repo, accountId, clean);
        if (await repo.findByMac(accountId, mac)) throw duplicateMac(mac);
        const row = await repo.insert({
          account_id: accountId,
          mac,
          name: clean.name ?? "",
          description: clean.description ?? "",
          status: clean.status ?? "enabled",
          kind,
          user_id: clean.user_id ?? null,
          voucher_id: clean.voucher_id ?? null,
          group_id: clean.group_id ?? null,
          portal_id: null,
          expires: clean.expires ?? null,
          last_seen: null,
          last_network_id: null,
          created: now,
          updated: now,
        });
        const device = presentDevice(row);
        await repo.recordEvents(accountId, "device.created", [{ ...device }]);
        await repo.audit({ accountId, resource: "device", id: device.id, action: "create", after: device });
        return device;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicateMac(mac);
      throw error;
    }
  }

  /** Partial update; disabling the device, or moving it to another MAC, disconnects its sessions. */
  async update(accountId: number, id: number, input: DeviceInput): Promise<Device> {
    const clean = checkDevice(input);
    try {
      return await this.repo.transaction(async (repo) => {
        const current = await repo.findById(accountId, id);
        if (!current) throw notFound(id);
        await checkReferences(repo, accountId, clean);
        if (clean.mac !== undefined && clean.mac !== current.mac) {
          if (await repo.findByMac(accountId, clean.mac)) throw duplicateMac(clean.mac);
        }
        const row = await repo.update(accountId, id, { ...columnsOf(clean), updated: isoNow() });
        if (!row) throw notFound(id);
        const revoked = row.status === "disabled" && current.status !== "disabled";
        if (revoked || row.mac !== current.mac) {
          await repo.disconnectDevice(accountId, current.mac, revoked ? "device disabled" : "device changed");
        }
        const device = presentDevice(row);
        await repo.recordEvents(accountId, "device.updated", [{ ...device }]);
        const before = presentDevice(current);
        await repo.audit({ accountId, resource: "device", id, action: "update", before, after: device });
        return device;
      });
    } catch (error) {
      if (isUniqueViolation(error) && clean.mac !== undefined) throw duplicateMac(clean.mac);
      throw error;
    }
  }

  /** Deletes (forgets) the device and disconnects its open sessions; its past records stay. */
  async delete(accountId: number, id: number, reason = "device deleted"): Promise<Device> {
    return this.repo.transaction(async (repo) => {
      const current = await repo.findById(accountId, id);
      if (!current) throw notFound(id);
      await repo.delete(accountId, id);
      await repo.disconnectDevice(accountId, current.mac, reason);
      const device = presentDevice(current);
      await repo.recordEvents(accountId, "device.deleted", [{ ...device }]);
      await repo.audit({ accountId, resource: "device", id, action: "delete", before: device });
      return device;
    });
  }

  /**
   * Remembers a guest's device after a portal sign-in: a `remembered` device owned by the credential
   * it signed in with (a user by username, or a voucher by code), until `days` from now. A device the
   * account registered itself is left as it is (it already logs in); one remembered before is renewed
   * with the new owner. Null when the owner cannot be found (nothing is remembered then).
   */
  async remember(
    accountId: number,
    input: {
      mac: string;
      portalId: number;
      owner: { username: string } | { voucherCode: string };
      days: number;
    },
    now = Date.now(),
  ): Promise<Device | null> {
    const mac = canonicalMac(input.mac);
    if (mac === null || macProblem(mac)) return null;
    const at = isoNow(new Date(now));
    const expires = isoNow(new Date(now + input.days * 86_400_000));
    return this.repo.transaction(async (repo) => {
      const owner =
        "username" in input.owner
          ? {
              user_id:
                (await repo.idsByName(accountId, "users", [input.owner.username])).get(
                  input.owner.username.toLowerCase(),
                ) ?? null,
              voucher_id: null,
            }
          : {
              user_id: null,
              voucher_id:
                (await repo.idsByName(accountId, "vouchers", [input.owner.voucherCode])).get(
                  input.owner.voucherCode.toLowerCase(),
                ) ?? null,
            };
      if (owner.user_id === null && owner.voucher_id === null) return null;
      const current = await repo.findByMac(accountId, mac);
      if (current && current.kind !== "remembered") return presentDevice(current);
      const changes = { ...owner, portal_id: input.portalId, expires, status: "enabled", updated: at };
      const row = current
        ? await repo.update(accountId, current.id, changes)
        : await repo.insert({
            account_id: accountId,
            mac,
            name: "",
            description: "",
            kind: "remembered",
            group_id: null,
            last_seen: null,
            last_network_id: null,
            created: at,
            ...changes,
          });
      if (!row) return null;
      const device = presentDevice(row);
      await repo.recordEvents(accountId, current ? "device.updated" : "device.created", [{ ...device }]);
      const action = current ? "update" : "create";
      await repo.audit({
        accountId,
        resource: "device",
        id: device.id,
        action,
        before: current && presentDevice(current),
        after: device,
      });
      return device;
    });
  }

  /** The device with this MAC (any notation); NotFound otherwise. */
  async getByMac(accountId: number, text: string): Promise<Device> {
    const mac = canonicalMac(text.trim());
    if (mac === null) throw ValidationError.field("mac", MAC_RULE);
    const row = await this.repo.findByMac(accountId, mac);
    if (!row) throw new NotFoundError(`no device with MAC ${mac}`);
    return presentDevice(row);
  }

  /** Ids of an owner and group named by username, voucher code and group name (doors that name them). */
  async idsOf(
    accountId: number,
    names: { username?: string | undefined; voucher?: string | undefined; group?: string | undefined },
  ): Promise<Pick<DeviceInput, "user_id" | "voucher_id" | "group_id">> {
    const ids: Pick<DeviceInput, "user_id" | "voucher_id" | "group_id"> = {};
    const lookups = [
      ["username", "users", "user_id", "user"],
      ["voucher", "vouchers", "voucher_id", "voucher"],
      ["group", "groups", "group_id", "group"],
    ] as const;
    for (const [name, table, field, what] of lookups) {
      const value = names[name];
      if (value === undefined) continue;
      if (value === "") {
        ids[field] = null;
        continue;
      }
      const id = (await this.repo.idsByName(accountId, table, [value])).get(value.toLowerCase());
      if (id === undefined) throw ValidationError.field(name, `no ${what} "${value}" in this account`);
      ids[field] = id;
    }
    return ids;
  }

  /** The owner's username or voucher code (the console's form shows names, not ids). */
  async ownerNames(accountId: number, device: Device): Promise<{ username: string; voucher: string }> {
    const [users, vouchers] = await Promise.all([
      this.repo.namesById(accountId, "users", device.user_id === null ? [] : [device.user_id]),
      this.repo.namesById(accountId, "vouchers", device.voucher_id === null ? [] : [device.voucher_id]),
    ]);
    return {
      username: device.user_id === null ? "" : (users.get(device.user_id) ?? ""),
      voucher: device.voucher_id === null ? "" : (vouchers.get(device.voucher_id) ?? ""),
    };
  }

  /** CSV import, all or nothing (csv.ts). */
  importCsv(accountId: number, source: AsyncIterable<string | Buffer>, progress?: (rows: number) => void) {
    return importDevices(this.repo, accountId, source, progress);
  }

  /** The account's devices as CSV chunks, header first. */
  exportCsv(accountId: number): AsyncGenerator<string> {
    return exportDevices(this.repo, accountId);
  }

  /** The device's latest sessions and authentication attempts (the console's device page). */
  async activity(accountId: number, id: number, limit = 20): Promise<DeviceActivity> {
    const device = await this.get(accountId, id);
    const [sessions, authentications] = await Promise.all([
      this.repo.sessionsOf(accountId, device.mac, limit),
      this.repo.authenticationsOf(accountId, device.mac, limit),
    ]);
    return {
      device,
      sessions: sessions.map((row) => ({
        id: Number(row.radacctid),
        username: row.username ?? "",
        network_id: row.network_id,
        start: isoOf(row.acctstarttime),
        stop: isoOf(row.acctstoptime),
        input_bytes: Number(row.acctinputoctets ?? 0),
        output_bytes: Number(row.acctoutputoctets ?? 0),
        terminate_cause: row.acctterminatecause || null,
      })),
      authentications: authentications.map((row) => ({
        time: isoOf(row.authdate) ?? "",
        username: row.username,
        method: row.method ?? null,
        reply: row.reply ?? "",
        reason: row.reason,
        network_id: row.network_id,
        policy_name: row.policy_name ?? null,
      })),
    };
  }
}
