// What a valid device looks like. The HTTP schemas reuse these limits so the OpenAPI document says
// the same thing the service enforces for every door.

export const DEVICE_STATUSES = ["enabled", "disabled"] as const;
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];

/** registered: added by an operator, an import or its owner; remembered: after a portal sign-in. */
export const DEVICE_KINDS = ["registered", "remembered"] as const;
export type DeviceKind = (typeof DEVICE_KINDS)[number];

export const MAX_DEVICE_NAME = 100;
export const MAX_DEVICE_DESCRIPTION = 200;
export const MAX_DEVICE_SEARCH = 100;

/** What a devices list may be sorted by. */
export const DEVICE_SORT_FIELDS = [
  "id",
  "mac",
  "name",
  "status",
  "created",
  "updated",
  "expires",
  "last_seen",
] as const;
export type DeviceSortField = (typeof DEVICE_SORT_FIELDS)[number];

/** A network's MAC authentication: off, registered devices, or devices and remembered guests. */
export const MAB_MODES = ["off", "devices", "guests"] as const;
export type MabMode = (typeof MAB_MODES)[number];

/**
 * The password a network's gateways send with MAC authentication: the MAC itself (Cisco MAB,
 * CoovaChilli without macpasswd, MikroTik mac-as-username-and-password), empty (MikroTik's
 * default), or one network-wide secret (MikroTik mac-auth-password, CoovaChilli macpasswd).
 */
export const MAB_PASSWORDS = ["mac", "empty", "secret"] as const;
export type MabPassword = (typeof MAB_PASSWORDS)[number];
export const MAX_MAB_SECRET = 128;

/** A portal's "remember this device": never, ask the guest, always. */
export const REMEMBER_CHOICES = ["never", "ask", "always"] as const;
export type RememberChoice = (typeof REMEMBER_CHOICES)[number];
export const RANDOM_MAC_CHOICES = ["refuse", "allow"] as const;
export type RandomMacChoice = (typeof RANDOM_MAC_CHOICES)[number];
export const MAX_REMEMBER_DAYS = 365;

/**
 * How many devices a user may add on the "my devices" page: the check item Wisp-Max-Devices of
 * the user or (usually) one of their groups, as a login would merge it. Absent: none.
 */
export const MAX_DEVICES_ATTRIBUTE = "Wisp-Max-Devices";

/** Rows of a CSV import at most (the file is read as a stream; 100,000 rows fit in memory bounds). */
export const MAX_IMPORT_ROWS = 200_000;
/** CSV columns, in the order export writes them; import takes them in any order (header row). */
export const CSV_COLUMNS = [
  "mac",
  "name",
  "description",
  "status",
  "username",
  "voucher",
  "group",
  "expires",
] as const;
