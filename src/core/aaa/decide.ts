// The login decision after rlm_sql's authorize: expiration, the session counters, authentication
// (Auth-Type, PAP, CHAP, MS-CHAPv2) and Simultaneous-Use, in FreeRADIUS's order. Rows come from
// the caller; session counts come through `SessionCounters`, asked only when an item needs them.
import type { Authorization } from "./authorize.ts";
import { parseAttributeName } from "./dictionary.ts";
import { LOGIN_TIME_MIN_SECONDS, loginTimeLeft } from "./login-time.ts";
import { ntPasswordHash } from "./nt-hash.ts";
import { firstValue, type Pair } from "./pairs.ts";
import { firstKnown, type KnownGood, knownGoodPasswords, type PapAuthorization } from "./passwords/items.ts";
import { NO_PASSWORD, papFailure } from "./passwords/pap.ts";
import { applyQuotas, type QuotaCounters, type QuotaVerdict } from "./quotas.ts";
import type { AuthMethod } from "./recording.ts";

export interface SessionCounters extends QuotaCounters {
  /** Sessions of the user with no stop time. */
  openSessions(): Promise<number>;
  /** Seconds over all the user's sessions (rlm_sqlcounter noresetcounter). */
  totalSessionTime(): Promise<number>;
  /** Unix seconds of the user's first session start, or null (expire_on_login). */
  firstSessionStart(): Promise<number | null>;
}

export interface Credentials {
  /**
   * The User-Password of a PAP request as octets: decrypted (RFC 2865 section 5.2), its NUL padding
   * removed. Never decoded to text: invalid UTF-8 would become U+FFFD and match other octets.
   */
  password?: Buffer | undefined;
  /** CHAP: verifies a CHAP-Password against a cleartext password. */
  chap?: ((cleartext: string) => boolean) | undefined;
  /**
   * MS-CHAPv2 (RFC 2759): verifies the NT-Response against the user's 16-octet NT password hash.
   * The door builds it from MS-CHAP-Challenge and MS-CHAP2-Response (or EAP-MSCHAPv2) and can
   * keep the hash that matched to answer with MS-CHAP2-Success and the MPPE keys.
   */
  mschapv2?: ((ntPasswordHash: Buffer) => boolean) | undefined;
  /**
   * EAP-TLS: the user is proven by a client certificate that chains to a trusted CA, names the
   * user and is not revoked (checked by the EAP engine). No password is compared; every other
   * rule (disabled, Expiration, Auth-Type := Reject, counters, Simultaneous-Use) still applies.
   */
  certificate?: true | undefined;
  /**
   * MAC authentication: the device is proven by its MAC and the network's MAB password, checked by
   * src/core/devices/mab.ts before the decision. No password item is compared; every other rule
   * still applies, as for a certificate.
   */
  mac?: true | undefined;
  /**
   * How the door authenticated, when the credentials alone do not say (an EAP door: PEAP or TTLS
   * around MS-CHAPv2 or PAP): recorded, and what policies' method conditions see.
   */
  method?: AuthMethod | undefined;
  /**
   * A directory's user whose credentials the directory proved (src/core/directories/login.ts: a
   * bind, or the NT hash it exposes): no password item is compared; every other rule still applies.
   */
  directory?: true | undefined;
}

export type LoginDecision =
  | { accepted: true; reply: Pair[]; control: Pair[] }
  | { accepted: false; reason: string; control: Pair[]; detail?: string };

const reject = (reason: string, control: Pair[] = [], detail?: string): LoginDecision => ({
  accepted: false,
  reason,
  control,
  ...(detail === undefined ? {} : { detail }),
});

function integer(pairs: readonly Pair[], attribute: string): number | undefined {
  const value = firstValue(pairs, attribute);
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}

/** Caps Session-Timeout in the reply at `seconds` (adds it when absent), as rlm_expiration does. */
function capSessionTimeout(reply: Pair[], seconds: number): Pair[] {
  const index = reply.findIndex((p) => p.attribute.toLowerCase() === "session-timeout");
  if (index < 0) return [...reply, { attribute: "Session-Timeout", op: "=", value: String(seconds) }];
  const current = Number(reply[index]!.value);
  if (Number.isFinite(current) && current <= seconds) return reply;
  const next = [...reply];
  next[index] = { ...reply[index]!, value: String(seconds) };
  return next;
}

/**
 * The NT password hash MS-CHAP checks against, as FreeRADIUS 3.2's rlm_mschap finds it in the list
 * rlm_pap's authorize step left: the first NT-Password if it is 16 octets, else the hash of the
 * first Cleartext-Password (an NT-Password of another length is passed over with a warning there).
 * Null when there is only an NT-Password that is no hash; undefined when there is neither.
 */
function knownNtHash(known: readonly KnownGood[]): Buffer | null | undefined {
  const nt = firstKnown(known, "NT-Password");
  if (nt?.octets?.length === 16) return nt.octets;
  const cleartext = firstKnown(known, "Cleartext-Password");
  if (cleartext?.octets) return ntPasswordHash(cleartext.octets.toString("utf8"));
  return nt === undefined ? undefined : null;
}

/** rlm_chap: the first Cleartext-Password (one a Password-With-Header became included), as text. */
function knownCleartext(known: readonly KnownGood[]): string | undefined {
  return firstKnown(known, "Cleartext-Password")?.octets?.toString("utf8");
}

/** Only attributes that travel in RADIUS packets go in the Access-Accept (not Fall-Through). */
export function wireReply(reply: readonly Pair[]): Pair[] {
  return reply.filter((p) => parseAttributeName(p.attribute)?.def.internal === false);
}

/**
 * The authenticate step: the credentials the request carries, checked against the password items
 * (see knownGoodPasswords). An Auth-Type naming one method leaves the request's other credentials
 * unchecked, as the named module alone authenticates in FreeRADIUS. undefined when proven.
 */
async function authenticate(
  { known, found }: PapAuthorization,
  credentials: Credentials,
  authType: string | undefined,
): Promise<{ reason: string; detail?: string | undefined } | undefined> {
  if (credentials.password !== undefined && authType !== "chap" && authType !== "ms-chap") {
    // rlm_pap sets Auth-Type PAP only when its authorize step found a password (see found).
    if (!found && authType !== "pap") return { reason: NO_PASSWORD };
    return papFailure(known, credentials.password);
  }
  if (credentials.chap && authType !== "pap" && authType !== "ms-chap") {
    const cleartext = knownCleartext(known);
    if (cleartext === undefined) return { reason: NO_PASSWORD };
    return credentials.chap(cleartext) ? undefined : { reason: "wrong password" };
  }
  if (credentials.mschapv2 && authType !== "pap" && authType !== "chap") {
    const hash = knownNtHash(known);
    if (hash === undefined) return { reason: NO_PASSWORD };
    if (hash === null) return { reason: "the NT-Password is not an NT hash" };
    return credentials.mschapv2(hash) ? undefined : { reason: "wrong password" };
  }
  return { reason: "no credentials in the request" };
}

/**
 * The session counters' limits, in FreeRADIUS's order: rlm_sqlcounter's noresetcounter
 * (Max-All-Session) and expire_on_login (Expire-After), then the daily and monthly counters and
 * Wisp's data quotas (quotas.ts). A limit reached rejects; otherwise Session-Timeout and the data
 * attributes carry what remains. Also used by voucher logins whose batch has a plan.
 */
export async function applyCounters(
  control: readonly Pair[],
  reply: Pair[],
  counters: SessionCounters,
  now: number,
): Promise<QuotaVerdict> {
  const maxAll = integer(control, "Max-All-Session");
  if (maxAll !== undefined) {
    const used = await counters.totalSessionTime();
    if (maxAll <= used) return { accepted: false, reason: "maximum total session time reached" };
    reply = capSessionTimeout(reply, maxAll - used);
  }
  const expireAfter = integer(control, "Expire-After");
  if (expireAfter !== undefined) {
    const first = await counters.firstSessionStart();
    const elapsed = first === null ? 0 : Math.max(0, now - first);
    if (expireAfter <= elapsed) return { accepted: false, reason: "account expired after first login" };
    reply = capSessionTimeout(reply, expireAfter - elapsed);
  }
  return applyQuotas(control, reply, counters, now);
}

/** Simultaneous-Use (session management, after authentication): the reason to refuse, or null. */
export async function simultaneousUseProblem(
  control: readonly Pair[],
  counters: SessionCounters,
): Promise<string | null> {
  const simultaneous = integer(control, "Simultaneous-Use");
  if (simultaneous !== undefined && (await counters.openSessions()) >= simultaneous)
    return "already logged in";
  return null;
}

export interface DecisionOptions {
  /**
   * The IANA time zone Login-Time is read in. Unset: the process's local time zone (TZ), as
   * FreeRADIUS reads it and as the quota periods (quotas.ts) are counted.
   */
  timeZone?: string | undefined;
}

/** rlm_logintime (authorize): outside the window -> reject; inside -> cap the session at its end. */
function applyLoginTime(
  control: readonly Pair[],
  reply: Pair[],
  now: number,
  timeZone?: string,
): { reply: Pair[]; reason?: undefined } | { reason: string } {
  const window = firstValue(control, "Login-Time");
  if (window === undefined) return { reply };
  const left = loginTimeLeft(window, now, timeZone);
  if (left < 0) return { reason: "outside the allowed login time" };
  if (left === 0) return { reply }; // the whole week is allowed
  if (left < LOGIN_TIME_MIN_SECONDS) return { reason: "the allowed login time ends within a minute" };
  return { reply: capSessionTimeout(reply, left) };
}

export async function decideLogin(
  authz: Authorization,
  credentials: Credentials,
  counters: SessionCounters,
  now: number,
  options: DecisionOptions = {},
): Promise<LoginDecision> {
  const { control } = authz;
  let reply = authz.reply;
  if (!authz.found) return reject("unknown user", control);

  // rlm_expiration (authorize): past -> reject; future -> cap the session.
  const expiration = integer(control, "Expiration");
  if (expiration !== undefined) {
    if (expiration <= now) return reject("account expired", control);
    reply = capSessionTimeout(reply, expiration - now);
  }

  const counted = await applyCounters(control, reply, counters, now);
  if (!counted.accepted) return reject(counted.reason, control);
  reply = counted.reply;

  // rlm_logintime, after expiration in FreeRADIUS's default authorize section.
  const loginTime = applyLoginTime(control, reply, now, options.timeZone);
  if (loginTime.reason !== undefined) return reject(loginTime.reason, control);
  reply = loginTime.reply;

  const authType = firstValue(control, "Auth-Type")?.toLowerCase();
  if (authType === "reject") return reject("rejected by Auth-Type", control);
  if (authType !== "accept" && !credentials.certificate && !credentials.mac && !credentials.directory) {
    const failure = await authenticate(knownGoodPasswords(control), credentials, authType);
    if (failure !== undefined) return reject(failure.reason, control, failure.detail);
  }

  // Session management runs after a successful authentication.
  const busy = await simultaneousUseProblem(control, counters);
  if (busy !== null) return reject(busy, control);
  return { accepted: true, reply: wireReply(reply), control };
}
