// MAC authentication (MAB): gateways and switches log in devices that cannot type a password by
// their MAC. The User-Name (and User-Password, or CHAP) carries the MAC in the vendor's notation
// (Cisco `aabbccddeeff` with Service-Type Call-Check, CoovaChilli `AA-BB-CC-DD-EE-FF`, MikroTik
// `AA:BB:CC:DD:EE:FF`, Cisco WLC `aabb.ccdd.eeff`); Calling-Station-Id is the same station.
// AaaService asks here only when the User-Name is no user's (a user always wins), so this decides:
// the network's MAB settings, the MAB password its gateways send, then the device, decided like a
// user (its group's and its owner's check and reply items, quotas, Simultaneous-Use, Expiration)
// or, for a voucher's device, by the voucher's own rules. An unknown MAC is rejected with a reason,
// so the gateway shows its captive portal.
import type { Kysely } from "kysely";
import { prepared } from "../../db/prepared.ts";
import type { Schema } from "../../db/schema.ts";
import type { TransactionBatcher } from "../../db/transaction-batcher.ts";
import { authorize, type GroupItems } from "../aaa/authorize.ts";
import { type Credentials, decideLogin } from "../aaa/decide.ts";
import { firstValue, type Pair } from "../aaa/pairs.ts";
import { capReply } from "../aaa/quotas.ts";
import type { LoginRepo } from "../aaa/repo.ts";
import type { VoucherLogin } from "../aaa/service.ts";
import { gatewayVendorOf } from "../networks/rules.ts";
import { sameOctets } from "../shared/secrets.ts";
import { canonicalMac } from "./mac.ts";

/** What MAB reads of the network a request came from (its `nas` row). */
export interface MabNetwork {
  id: number;
  account_id: number;
  mab_mode?: string | undefined;
  mab_password?: string | undefined;
  mab_secret?: string | undefined;
  /** The gateway's vendor: the attributes of a plan's bandwidth. */
  vendor?: string | undefined;
}

export interface MabOutcome {
  accepted: boolean;
  reply: Pair[];
  reason: string | null;
  deviceId: number | null;
  userId: number | null;
  voucherId: number | null;
  /** Write last_seen and last_network_id with the attempt (at most every TOUCH_EVERY_S). */
  touch: boolean;
}

/** last_seen is written at most this often per device and network: not on every Access-Request. */
export const TOUCH_EVERY_S = 300;

/** RFC 2865 section 5.6: Service-Type Call-Check (10), what Cisco switches send with MAB. */
const CALL_CHECK = "call-check";

interface DeviceForLogin {
  id: number;
  status: string;
  kind: string;
  expires: string | null;
  last_seen: string | null;
  last_network_id: number | null;
  user_id: number | null;
  voucher_id: number | null;
  owner_username: string | null;
  owner_status: string | null;
  voucher_code: string | null;
  group_name: string | null;
}

const seconds = (iso: string | null) => (iso === null ? null : Math.floor(Date.parse(iso) / 1000));

/**
 * The MAB password check (the network says what its gateways send). CHAP hides the password, so
 * the expected one is tried: the User-Name as sent for `mac`, "" for `empty`, the secret for `secret`.
 */
function mabPasswordFailure(network: MabNetwork, credentials: Credentials, username: string, mac: string) {
  const mode = network.mab_password ?? "mac";
  const secret = network.mab_secret ?? "";
  if (credentials.password !== undefined) {
    const given = credentials.password;
    if (mode === "empty") return given.length === 0 ? null : "wrong MAB password (an empty one is expected)";
    if (mode === "secret") {
      return secret !== "" && sameOctets(given, Buffer.from(secret, "utf8")) ? null : "wrong MAB password";
    }
    // The MAC itself, in any notation of the same address (CoovaChilli may add a suffix to both).
    return canonicalMac(given.toString("latin1")) === mac || sameOctets(given, Buffer.from(username))
      ? null
      : "wrong MAB password (the MAC address is expected)";
  }
  if (credentials.chap) {
    const expected = mode === "empty" ? "" : mode === "secret" ? secret : username;
    if (mode === "secret" && secret === "") return "wrong MAB password";
    return credentials.chap(expected) ? null : "wrong MAB password";
  }
  if (credentials.mschapv2 || credentials.certificate) return "MAC authentication takes PAP or CHAP";
  // No password at all: what an empty one comes to (some gateways, and radclient, leave it out).
  return mode === "empty" ? null : "MAC authentication takes PAP or CHAP";
}

export class MacAuthenticator {
  private readonly device;

  constructor(
    db: Kysely<Schema>,
    private readonly logins: LoginRepo,
  ) {
    // One query per MAB request: the device with its owner and group (compiled once).
    this.device = prepared(
      db,
      (accountId: number, mac: string) =>
        db
          .selectFrom("devices as d")
          .leftJoin("users as u", (j) =>
            j.onRef("u.account_id", "=", "d.account_id").onRef("u.id", "=", "d.user_id"),
          )
          .leftJoin("vouchers as v", (j) =>
            j.onRef("v.account_id", "=", "d.account_id").onRef("v.id", "=", "d.voucher_id"),
          )
          .leftJoin("groups as g", (j) =>
            j.onRef("g.account_id", "=", "d.account_id").onRef("g.id", "=", "d.group_id"),
          )
          .select([
            "d.id",
            "d.status",
            "d.kind",
            "d.expires",
            "d.last_seen",
            "d.last_network_id",
            "d.user_id",
            "d.voucher_id",
            "u.username as owner_username",
            "u.status as owner_status",
            "v.code as voucher_code",
            "g.name as group_name",
          ])
          .where("d.account_id", "=", accountId)
          .where("d.mac", "=", mac),
      2,
    );
  }

  /**
   * The MAB decision, or null when the request is not MAC authentication (the User-Name is no MAC
   * address and no Call-Check, or the network does not do MAB and did not ask for it).
   */
  async login(input: {
    network: MabNetwork;
    request: readonly Pair[];
    credentials: Credentials;
    now: number;
    voucherLogin: VoucherLogin | undefined;
    run: TransactionBatcher["run"];
  }): Promise<MabOutcome | null> {
    const { network, request, credentials, now } = input;
    const username = firstValue(request, "User-Name") ?? "";
    const mac = canonicalMac(username);
    const callCheck = firstValue(request, "Service-Type")?.toLowerCase() === CALL_CHECK;
    const mode = network.mab_mode ?? "off";
    if (mac === null) return callCheck ? refuse("Call-Check without a MAC address in User-Name") : null;
    if (mode === "off") return callCheck ? refuse("MAC authentication is off for this network") : null;
    const calling = canonicalMac(firstValue(request, "Calling-Station-Id")?.trim());
    if (calling !== null && calling !== mac)
      return refuse("User-Name is not the calling station's MAC address");
    const wrong = mabPasswordFailure(network, credentials, username, mac);
    if (wrong) return refuse(wrong);

    const device = (await this.device(network.account_id, mac))[0] as DeviceForLogin | undefined;
    if (!device) return refuse("unknown device");
    const known = { deviceId: device.id, userId: device.user_id, voucherId: device.voucher_id, touch: false };
    const expires = seconds(device.expires);
    const problem =
      device.status === "disabled"
        ? "device disabled"
        : expires !== null && expires <= now
          ? device.kind === "remembered"
            ? "device no longer remembered"
            : "device expired"
          : device.kind === "remembered" && mode !== "guests"
            ? "remembered devices are not accepted on this network"
            : null;
    if (problem) return { ...refuse(problem), ...known };

    const verdict = await this.decideDevice(device, input, username);
    let reply = verdict.reply;
    if (verdict.accepted && expires !== null) reply = capReply(reply, "Session-Timeout", expires - now);
    const lastSeen = seconds(device.last_seen);
    const touch =
      verdict.accepted &&
      (lastSeen === null || now - lastSeen >= TOUCH_EVERY_S || device.last_network_id !== network.id);
    return { ...known, accepted: verdict.accepted, reply, reason: verdict.reason, touch };
  }

  /** The device decided like a user: its owner's items, its group's, or a voucher's rules. */
  private async decideDevice(
    device: DeviceForLogin,
    input: Parameters<MacAuthenticator["login"]>[0],
    username: string,
  ): Promise<{ accepted: boolean; reply: Pair[]; reason: string | null }> {
    const accountId = input.network.account_id;
    if (device.voucher_id !== null) return this.decideVoucherDevice(device, input);
    if (device.user_id !== null && device.owner_username === null) {
      return { accepted: false, reply: [], reason: "the device's owner no longer exists" };
    }
    if (device.owner_status === "disabled") return { accepted: false, reply: [], reason: "owner disabled" };
    const owner = device.owner_username;
    const items =
      owner === null ? { check: [], reply: [], groups: [] } : await this.logins.userItems(accountId, owner);
    const group = device.group_name === null ? [] : [await this.groupItems(accountId, device.group_name)];
    // The device's group is evaluated first, then the owner's own groups (FreeRADIUS's priority order).
    const authz = authorize(
      input.request,
      { ...items, groups: [...group, ...items.groups] },
      gatewayVendorOf(input.network.vendor),
    );
    // A device is known even with no items: its registration is what lets it in.
    const counters = this.logins.counters(accountId, owner ?? username);
    const decision = await decideLogin({ ...authz, found: true }, { mac: true }, counters, input.now);
    if (!decision.accepted) return { accepted: false, reply: [], reason: decision.reason };
    // RFC 2865 section 5.1: the NAS uses this User-Name in the session's accounting, so the owner's
    // quotas, Simultaneous-Use and disconnects see the device's sessions as theirs.
    const reply =
      owner === null
        ? decision.reply
        : [{ attribute: "User-Name", op: "=", value: owner }, ...decision.reply];
    return { accepted: true, reply, reason: null };
  }

  /** A voucher's device: the voucher's rules (status, expiry, device slots, data) with its code. */
  private async decideVoucherDevice(device: DeviceForLogin, input: Parameters<MacAuthenticator["login"]>[0]) {
    const code = device.voucher_code;
    if (code === null || !input.voucherLogin) {
      return { accepted: false, reply: [], reason: "the device's voucher no longer exists" };
    }
    const outcome = await input.voucherLogin({
      accountId: input.network.account_id,
      code,
      credentials: { password: Buffer.from(code) },
      clientMac: canonicalMac(firstValue(input.request, "User-Name")),
      now: input.now,
      vendor: gatewayVendorOf(input.network.vendor),
      run: input.run,
    });
    if (!outcome) return { accepted: false, reply: [], reason: "the device's voucher no longer exists" };
    if (!outcome.accepted) return { accepted: false, reply: [], reason: outcome.reason };
    return {
      accepted: true,
      reply: [{ attribute: "User-Name", op: "=", value: code }, ...outcome.reply],
      reason: null,
    };
  }

  private async groupItems(accountId: number, name: string): Promise<GroupItems> {
    const { check, reply } = await this.logins.groupItems(accountId, name);
    return { name, check, reply };
  }
}

function refuse(reason: string): MabOutcome {
  return { accepted: false, reply: [], reason, deviceId: null, userId: null, voucherId: null, touch: false };
}
