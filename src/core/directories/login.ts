// A login for a directory's user (the AaaService's directoryLogin hook): the directory proves the
// credentials, Wisp's shadow user then goes through the same rules as a local user (src/core/aaa).
// PAP (and EAP-TTLS/PAP, the portal's password sign-in): a bind as the user's DN with the password.
// MS-CHAPv2 (and PEAP): only with the user's NT hash read by the service bind (sambaNTPassword):
// MS-CHAPv2 proves knowledge of the NT hash, and a bind needs the cleartext, so nothing else works.
// CHAP needs the cleartext too. EAP-TLS and MAB prove the user otherwise: the directory still says
// whether the user exists and is enabled.
import type { Credentials } from "../aaa/decide.ts";
import type { DirectoryVerdict } from "../aaa/service.ts";
import { DirectoryUnavailable } from "./ldap.ts";
import type { DirectoriesRepo } from "./repo.ts";
import type { DirectoryRuntime } from "./runtime.ts";
import { writeShadows } from "./shadows.ts";
import type { DirectorySource, FoundUser } from "./source.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A shadow written less than this long ago with the same values is not written again. */
const SHADOW_MEMO_MS = 60_000;

type Refusal = { reason: string };

/** The credentials checked against the directory's answer; a refusal, or null when proven. */
async function prove(
  source: DirectorySource,
  found: FoundUser,
  credentials: Credentials,
): Promise<Refusal | null> {
  if (credentials.certificate || credentials.mac) return null;
  if (credentials.password !== undefined) {
    // RFC 4513 section 5.1.2: a simple bind with an empty password is unauthenticated (anonymous)
    // and servers answer success: it must never count as a login.
    if (credentials.password.length === 0) return { reason: "empty password" };
    let text: string;
    try {
      text = utf8.decode(credentials.password);
    } catch {
      return { reason: "wrong password (not UTF-8)" };
    }
    return (await source.client.checkPassword(found.entry.dn, text)) ? null : { reason: "wrong password" };
  }
  if (credentials.mschapv2) {
    if (!found.ntHash) return { reason: "MS-CHAPv2 needs an NT hash the directory does not expose" };
    return credentials.mschapv2(found.ntHash) ? null : { reason: "wrong password" };
  }
  if (credentials.chap) return { reason: "CHAP needs a cleartext password a directory never gives" };
  return { reason: "no credentials in the request" };
}

export class DirectoryLogins {
  private readonly memo = new Map<string, { fingerprint: string; userId: number; expires: number }>();

  constructor(
    private readonly runtime: DirectoryRuntime,
    private readonly repo: DirectoriesRepo,
  ) {}

  /**
   * The verdict for `username`: a shadow's own directory decides (refused when it is off, gone or
   * unreachable); an unknown name is looked up in the account's enabled directories in turn; null
   * when none has it (the login goes on as for an unknown user).
   */
  async login(input: {
    accountId: number;
    username: string;
    credentials: Credentials;
    shadowOf: number | null;
  }): Promise<DirectoryVerdict | null> {
    const { accountId, username, credentials, shadowOf } = input;
    const all = await this.runtime.sources(accountId);
    const sources = all.filter((s) => s.row.enabled === 1 && (shadowOf === null || s.row.id === shadowOf));
    if (shadowOf !== null && sources.length === 0)
      return { proven: false, userId: null, reason: "the user's directory is off or gone" };
    const unavailable: string[] = [];
    for (const source of sources) {
      let found: FoundUser | null;
      try {
        found = await source.findUser(username, credentials.mschapv2 !== undefined);
      } catch (error) {
        if (!(error instanceof DirectoryUnavailable)) throw error;
        unavailable.push(`${source.row.name}: ${error.summary}`);
        continue;
      }
      if (!found) continue;
      if (!found.user.enabled)
        return { proven: false, userId: null, reason: "user disabled in the directory" };
      let refusal: Refusal | null;
      try {
        refusal = await prove(source, found, credentials);
      } catch (error) {
        if (!(error instanceof DirectoryUnavailable)) throw error;
        return {
          proven: false,
          userId: null,
          reason: `directory unavailable (${source.row.name}: ${error.summary})`,
        };
      }
      if (refusal) return { proven: false, userId: null, reason: refusal.reason };
      return this.shadow(accountId, source, found);
    }
    if (unavailable.length > 0)
      return {
        proven: false,
        userId: null,
        reason: `directory unavailable (${unavailable.join("; ")})`.slice(0, 90),
      };
    if (shadowOf !== null) return { proven: false, userId: null, reason: "user not found in the directory" };
    return null;
  }

  /** The proven user's shadow, written when its values changed (or were not written lately). */
  private async shadow(
    accountId: number,
    source: DirectorySource,
    found: FoundUser,
  ): Promise<DirectoryVerdict> {
    const { user } = found;
    const key = `${accountId}\n${source.row.id}\n${user.username.toLowerCase()}`;
    const fingerprint = JSON.stringify([user.username, user.dn, user.email, user.fullname, user.groups]);
    const memo = this.memo.get(key);
    if (memo && memo.fingerprint === fingerprint && memo.expires > Date.now())
      return { proven: true, userId: memo.userId, username: user.username, written: false };
    const [result] = await this.repo.transaction((repo) =>
      writeShadows(repo, accountId, source.row.id, [user], source.managed, null),
    );
    if (!result || result.userId === null)
      return {
        proven: false,
        userId: null,
        reason: `directory user refused: ${result?.why ?? "unknown"}`.slice(0, 90),
      };
    if (result.status !== "enabled") return { proven: false, userId: result.userId, reason: "user disabled" };
    if (this.memo.size > 50_000) this.memo.clear();
    this.memo.set(key, { fingerprint, userId: result.userId, expires: Date.now() + SHADOW_MEMO_MS });
    return { proven: true, userId: result.userId, username: user.username, written: true };
  }

  /** Shadows changed elsewhere (a sync, an operator): write them again at the next login. */
  forget(): void {
    this.memo.clear();
  }
}
