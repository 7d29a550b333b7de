// The login decision after rlm_sql's authorize: expiration, the session counters, authentication
// (Auth-Type, PAP, CHAP, MS-CHAPv2) and Simultaneous-Use, in FreeRADIUS's order. Rows come from
// the caller; session counts come through `SessionCounters`, asked only when an item needs them.
import type { Authorization } from "./authorize.ts";
import { parseAttributeName } from "./dictionary.ts";
import { ntPasswordHash } from "./nt-hash.ts";
import { firstValue, type Pair } from "./pairs.ts";
import { firstKnown, type KnownGood, knownGoodPasswords, type PapAuthorization } from "./passwords/items.ts";
import { NO_PASSWORD, papFailure } from "./passwords/pap.ts";
import { applyQuotas, type QuotaCounters } from "./quotas.ts";

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

export async function decideLogin(
  authz: Authorization,
  credentials: Credentials,
  counters: SessionCounters,
  now: number,
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

  // rlm_sqlcounter noresetcounter: total session time.
  const maxAll = integer(control, "Max-All-Session");
  if (maxAll !== undefined) {
    const used = await counters.totalSessionTime();
    if (maxAll <= used) return reject("maximum total session time reached", control);
    reply = capSessionTimeout(reply, maxAll - used);
  }

  // rlm_sqlcounter expire_on_login: time since the first login.
  const expireAfter = integer(control, "Expire-After");
  if (expireAfter !== undefined) {
    const first = await counters.firstSessionStart();
    const elapsed = first === null ? 0 : Math.max(0, now - first);
    if (expireAfter <= elapsed) return reject("account expired after first login", control);
    reply = capSessionTimeout(reply, expireAfter - elapsed);
  }

  // rlm_sqlcounter dailycounter / monthlycounter, and Wisp's data quotas (quotas.ts).
  const quotas = await applyQuotas(control, reply, counters, now);
  if (!quotas.accepted) return reject(quotas.reason, control);
  reply = quotas.reply;

  const authType = firstValue(control, "Auth-Type")?.toLowerCase();
  if (authType === "reject") return reject("rejected by Auth-Type", control);
  if (authType !== "accept" && !credentials.certificate && !credentials.mac && !credentials.directory) {
    const failure = await authenticate(knownGoodPasswords(control), credentials, authType);
    if (failure !== undefined) return reject(failure.reason, control, failure.detail);
  }

  // Session management runs after a successful authentication.
  const simultaneous = integer(control, "Simultaneous-Use");
  if (simultaneous !== undefined && (await counters.openSessions()) >= simultaneous) {
    return reject("already logged in", control);
  }
  return { accepted: true, reply: wireReply(reply), control };
}
