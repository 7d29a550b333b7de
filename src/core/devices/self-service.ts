// "My devices": a Wisp user signs in with their username and password on a small page beside the
// captive portal and lists, names, adds and removes their own devices. How many they may add is the
// check item Wisp-Max-Devices of the user or their groups, merged as a login merges it. The sign-in
// is a sealed, expiring token (AES-GCM with the secrets' key, bound to the account): no session
// table. Removing a device disconnects its open session (devices service, RFC 5176).
import { authorize } from "../aaa/authorize.ts";
import { firstValue } from "../aaa/pairs.ts";
import type { LoginRepo } from "../aaa/repo.ts";
import type { AaaService } from "../aaa/service.ts";
import { ConflictError, NotFoundError, ValidationError } from "../shared/errors.ts";
import type { SecretBox } from "../webhooks/crypto.ts";
import { MAX_DEVICES_ATTRIBUTE } from "./rules.ts";
import type { Device, DevicesService } from "./service.ts";

/** A signed-in user's page stays open this long without a new sign-in. */
export const MY_DEVICES_SESSION_S = 30 * 60;
const CONTEXT = "my devices session";

export interface DeviceOwner {
  accountId: number;
  userId: number;
  username: string;
}

export class MyDevices {
  constructor(
    private readonly devices: DevicesService,
    private readonly aaa: AaaService,
    private readonly logins: LoginRepo,
    private readonly box: SecretBox,
  ) {}

  /**
   * The token of a user whose password is right (PAP rules, as the portal's sign-in checks them),
   * or null: unknown user, wrong password, disabled or expired read the same.
   */
  async signIn(
    accountId: number,
    username: string,
    password: string,
    now = Math.floor(Date.now() / 1000),
  ): Promise<string | null> {
    if (username === "" || password === "" || username.length > 64 || password.length > 128) return null;
    const verdict = await this.aaa.precheck(accountId, { username, password, clientMac: null }, now);
    // Simultaneous-Use is checked after the password (decide.ts): online elsewhere is still the user.
    const proven = !verdict.voucher && (verdict.accepted || verdict.reason === "already logged in");
    if (!proven) return null;
    const user = await this.devices.repo.userByName(accountId, username);
    if (!user) return null;
    return this.box.seal(
      JSON.stringify({ a: accountId, u: user.id, e: now + MY_DEVICES_SESSION_S }),
      CONTEXT,
    );
  }

  /** The signed-in user of a token for this account, or null (altered, expired, user gone or disabled). */
  async owner(
    accountId: number,
    token: string,
    now = Math.floor(Date.now() / 1000),
  ): Promise<DeviceOwner | null> {
    let claims: { a: number; u: number; e: number };
    try {
      claims = JSON.parse(this.box.open(token, CONTEXT));
    } catch {
      return null;
    }
    if (claims.a !== accountId || !(claims.e > now)) return null;
    const user = await this.devices.repo.userById(accountId, claims.u);
    if (user?.status !== "enabled" || !user) return null;
    return { accountId, userId: user.id, username: user.username };
  }

  /** How many devices the user may have: Wisp-Max-Devices of the user or a group; none when unset. */
  async limit(owner: DeviceOwner): Promise<number> {
    const items = await this.logins.userItems(owner.accountId, owner.username);
    const authz = authorize([{ attribute: "User-Name", op: "=", value: owner.username }], items);
    const value = firstValue(authz.control, MAX_DEVICES_ATTRIBUTE);
    return value !== undefined && /^\d+$/.test(value) ? Number(value) : 0;
  }

  async list(owner: DeviceOwner): Promise<Device[]> {
    const page = await this.devices.list(
      owner.accountId,
      { user_id: owner.userId },
      { page: 1, limit: 1000 },
    );
    return page.data;
  }

  /** Adds a device of the user's, within their limit; its MAC must be free in the account. */
  async add(owner: DeviceOwner, input: { mac: string; name: string }): Promise<Device> {
    const [limit, count] = await Promise.all([
      this.limit(owner),
      this.devices.repo.countOfUser(owner.accountId, owner.userId),
    ]);
    if (count >= limit) throw new ConflictError(`device limit reached (${limit})`);
    return this.devices.create(owner.accountId, { mac: input.mac, name: input.name, user_id: owner.userId });
  }

  async rename(owner: DeviceOwner, id: number, name: string): Promise<Device> {
    await this.own(owner, id);
    return this.devices.update(owner.accountId, id, { name });
  }

  /** Forgets the device and disconnects its open session. */
  async remove(owner: DeviceOwner, id: number): Promise<Device> {
    await this.own(owner, id);
    return this.devices.delete(owner.accountId, id, "device removed by its owner");
  }

  /** Only the user's own devices: another's reads as missing. */
  private async own(owner: DeviceOwner, id: number): Promise<void> {
    if (!Number.isInteger(id) || id < 1) throw ValidationError.field("device", "is not a device");
    const device = await this.devices.get(owner.accountId, id).catch(() => undefined);
    if (!device || device.user_id !== owner.userId) throw new NotFoundError(`device ${id} not found`);
  }
}
