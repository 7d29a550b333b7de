// An admin's second factors (issue 29 point 2): TOTP, recovery codes and passkeys, set up and
// removed by the admin, checked at sign-in (sign-in.ts), and the account's requirement that every
// admin has one. TOTP secrets are sealed at rest with the webhook secrets' key and shown only while
// being set up; recovery codes are kept as keyed hashes and shown once.
import { randomBytes } from "node:crypto";
import type { AuditEntry } from "../audit/record.ts";
import { AppError, ConflictError, NotFoundError, ValidationError } from "../shared/errors.ts";
import { isoNow } from "../shared/time.ts";
import type { SecretBox } from "../webhooks/crypto.ts";
import type { FactorsRepo, PasskeyRow } from "./factors-repo.ts";
import { generateRecoveryCodes, hashRecoveryCode, normalizeRecoveryCode } from "./recovery-codes.ts";
import { matchTotp, newTotpSecret, totpUri } from "./totp.ts";
import {
  type AuthenticationResponseJSON,
  authenticationOptions,
  type CreationOptions,
  type RegistrationResponseJSON,
  type RelyingParty,
  type RequestOptions,
  registrationOptions,
  verifyAssertion,
  verifyRegistration,
} from "./webauthn.ts";

/** Whose factors: an admin of an account. */
export interface AdminRef {
  accountId: number;
  adminId: number;
  email: string;
}

export type Factor = "totp" | "recovery" | "passkey";

/** A code that is not (or no longer) right: 401, the sign-in goes on. */
export class WrongCodeError extends AppError {
  constructor(message: string) {
    super(401, message);
  }
}

/** A right code used before (a TOTP code of a step already used, a used recovery code): 409. */
export class UsedCodeError extends AppError {
  constructor(message: string) {
    super(409, message);
  }
}

/** A passkey that does not verify, or is not this admin's: 403. */
export class PasskeyRefusedError extends AppError {
  constructor(message: string) {
    super(403, message);
  }
}

export interface FactorStatus {
  totp: boolean;
  passkeys: PasskeyRow[];
  recovery: { total: number; unused: number };
  /** The account requires a second factor of everyone. */
  required: boolean;
}

const PASSKEY_NAME_MAX = 64;

function passkeyName(text: string): string {
  const name = text.trim();
  if (name === "" || name.length > PASSKEY_NAME_MAX || /\p{Cc}/u.test(name))
    throw ValidationError.field("name", `must be 1 to ${PASSKEY_NAME_MAX} characters, no control characters`);
  return name;
}

/** A browser's JSON answer (a form field): an object with a string id, or a 400. */
export function credentialJson<T>(text: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = null;
  }
  const id = (value as { id?: unknown } | null)?.id;
  if (typeof value !== "object" || value === null || typeof id !== "string" || id.length > 1400)
    throw ValidationError.field(
      "credential",
      "is not a WebAuthn credential (the browser sent no usable answer)",
    );
  return value as T;
}

export class SecondFactors {
  private readonly recoveryKey: () => Buffer;

  constructor(
    private readonly repo: FactorsRepo,
    private readonly box: SecretBox,
    readonly rp: RelyingParty,
  ) {
    let key: Buffer | undefined;
    this.recoveryKey = () => {
      key ??= box.derive("console recovery codes");
      return key;
    };
  }

  private sealContext(who: AdminRef): string {
    return `console totp ${who.accountId} ${who.adminId}`;
  }

  async status(who: AdminRef): Promise<FactorStatus> {
    const [columns, passkeys, recovery, required] = await Promise.all([
      this.repo.factorsOf(who.accountId, who.adminId),
      this.repo.passkeysOf(who.accountId, who.adminId),
      this.repo.recoveryCodeCounts(who.accountId, who.adminId),
      this.repo.secondFactorRequired(who.accountId),
    ]);
    return { totp: Boolean(columns?.totp_secret), passkeys, recovery, required };
  }

  async hasSecondFactor(who: AdminRef): Promise<boolean> {
    const status = await this.status(who);
    return status.totp || status.passkeys.length > 0;
  }

  required(accountId: number): Promise<boolean> {
    return this.repo.secondFactorRequired(accountId);
  }

  /** The secret being set up (made now unless one waits): shown until it is confirmed. */
  async totpEnrolment(who: AdminRef): Promise<{ secret: string; uri: string }> {
    const columns = await this.repo.factorsOf(who.accountId, who.adminId);
    if (!columns) throw new NotFoundError("no such console user");
    let secret: string;
    if (columns.totp_pending) secret = this.box.open(columns.totp_pending, this.sealContext(who));
    else {
      secret = await newTotpSecret();
      await this.repo.setTotpPending(
        who.accountId,
        who.adminId,
        this.box.seal(secret, this.sealContext(who)),
      );
    }
    return { secret, uri: await totpUri(secret, who.email) };
  }

  /**
   * Confirms the secret being set up with a first code from the app; from then on TOTP is asked at
   * sign-in. Returns new recovery codes when this is the admin's first second factor.
   */
  async confirmTotp(who: AdminRef, code: string): Promise<string[] | null> {
    const columns = await this.repo.factorsOf(who.accountId, who.adminId);
    if (!columns?.totp_pending) throw new ConflictError("no authenticator app is being set up: start again");
    const secret = this.box.open(columns.totp_pending, this.sealContext(who));
    const step = await matchTotp(secret, code);
    if (step === null)
      throw ValidationError.field("code", "is not the app's current 6-digit code (check the phone's clock)");
    const first = !(await this.hasSecondFactor(who));
    await this.audited(
      who,
      { resource: "totp", id: who.adminId, action: "create", after: { totp: true } },
      (repo) =>
        repo.confirmTotp(who.accountId, who.adminId, this.box.seal(secret, this.sealContext(who)), step),
    );
    return first ? this.newRecoveryCodesIfNone(who) : null;
  }

  async removeTotp(who: AdminRef): Promise<void> {
    const status = await this.status(who);
    if (!status.totp) throw new NotFoundError("no authenticator app is set up");
    this.refuseLastFactor(status, status.passkeys.length === 0);
    await this.audited(
      who,
      { resource: "totp", id: who.adminId, action: "delete", before: { totp: true } },
      (repo) => repo.removeTotp(who.accountId, who.adminId),
    );
  }

  /**
   * Runs a change of `who`'s factors with its audit row in one transaction (the admin's own email
   * names them; secrets never go in: the rows say on/off, a passkey's name).
   */
  private audited<T>(
    who: AdminRef,
    entry: Omit<AuditEntry, "accountId">,
    change: (repo: FactorsRepo) => Promise<T>,
  ): Promise<T> {
    return this.repo.transaction(async (repo) => {
      const result = await change(repo);
      await repo.audit({ accountId: who.accountId, ...entry });
      return result;
    });
  }

  private refuseLastFactor(status: FactorStatus, last: boolean): void {
    if (status.required && last)
      throw new ConflictError(
        "this account requires a second factor: set up another one before removing your last",
      );
  }

  /** A sign-in's TOTP code: right, and of a later step than any code accepted before. */
  async checkTotp(who: AdminRef, code: string): Promise<void> {
    const columns = await this.repo.factorsOf(who.accountId, who.adminId);
    if (!columns?.totp_secret) throw new WrongCodeError("No authenticator app is set up for this user.");
    const step = await matchTotp(this.box.open(columns.totp_secret, this.sealContext(who)), code);
    if (step === null) throw new WrongCodeError("Wrong code. Enter the current 6-digit code of your app.");
    if (!(await this.repo.useTotpStep(who.accountId, who.adminId, step)))
      throw new UsedCodeError("This code was already used. Wait for the app's next code and enter that one.");
  }

  /** New recovery codes (the old ones stop working); shown once by the caller. */
  async regenerateRecoveryCodes(who: AdminRef): Promise<string[]> {
    if (!(await this.hasSecondFactor(who)))
      throw new ConflictError(
        "set up an authenticator app or a passkey first: recovery codes stand in for them",
      );
    return this.replaceRecoveryCodes(who, true);
  }

  private async newRecoveryCodesIfNone(who: AdminRef): Promise<string[] | null> {
    const counts = await this.repo.recoveryCodeCounts(who.accountId, who.adminId);
    return counts.unused > 0 ? null : this.replaceRecoveryCodes(who);
  }

  /** New codes; `asked`: the admin asked for them (an audited change; first codes come with a factor). */
  private async replaceRecoveryCodes(who: AdminRef, asked = false): Promise<string[]> {
    const codes = generateRecoveryCodes();
    const hashes = codes.map((code) => hashRecoveryCode(this.recoveryKey(), normalizeRecoveryCode(code)!));
    const replace = (repo: FactorsRepo) =>
      repo.replaceRecoveryCodes(who.accountId, who.adminId, hashes, isoNow());
    if (!asked) await replace(this.repo);
    else {
      const entry = {
        resource: "recovery_codes",
        id: who.adminId,
        action: "regenerate",
        after: { count: codes.length },
      };
      await this.audited(who, entry, replace);
    }
    return codes;
  }

  /** A sign-in's recovery code: one of the admin's, never used; used up now. */
  async useRecoveryCode(who: AdminRef, text: string): Promise<void> {
    const code = normalizeRecoveryCode(text);
    if (!code)
      throw new WrongCodeError("That is not a recovery code (12 letters and digits, like ABCD-EFGH-JKLM).");
    const hash = hashRecoveryCode(this.recoveryKey(), code);
    if (await this.repo.useRecoveryCode(who.accountId, who.adminId, hash, isoNow())) return;
    if (await this.repo.recoveryCodeUsed(who.accountId, who.adminId, hash))
      throw new UsedCodeError("This recovery code was already used. Each code works once: use another.");
    throw new WrongCodeError("Wrong recovery code.");
  }

  /** Registration options for a new passkey; the caller keeps options.challenge for the answer. */
  async passkeyRegistration(who: AdminRef): Promise<CreationOptions> {
    let columns = await this.repo.factorsOf(who.accountId, who.adminId);
    if (!columns) throw new NotFoundError("no such console user");
    if (!columns.webauthn_user_id) {
      // A random handle (section 14.6.1: no personal data in it), made once per admin.
      await this.repo.setUserHandle(who.accountId, who.adminId, randomBytes(32).toString("base64url"));
      columns = await this.repo.factorsOf(who.accountId, who.adminId);
    }
    const existing = await this.repo.passkeysOf(who.accountId, who.adminId);
    return registrationOptions(this.rp, { handle: columns!.webauthn_user_id!, email: who.email }, existing);
  }

  /** Stores the passkey the browser made; new recovery codes when it is the admin's first factor. */
  async registerPasskey(
    who: AdminRef,
    responseText: string,
    challenge: string,
    nameText: string,
  ): Promise<{ passkey: PasskeyRow; recoveryCodes: string[] | null }> {
    const name = passkeyName(nameText);
    const response = credentialJson<RegistrationResponseJSON>(responseText);
    const credential = await verifyRegistration(this.rp, response, challenge).catch((error: Error) => {
      throw new PasskeyRefusedError(`The passkey could not be registered: ${error.message}`);
    });
    if (!credential) throw new PasskeyRefusedError("The passkey could not be registered.");
    if (await this.repo.findPasskey(credential.id))
      throw new ConflictError("this passkey is registered already");
    const first = !(await this.hasSecondFactor(who));
    const passkey = await this.repo.transaction(async (repo) => {
      const row = await repo.insertPasskey({
        account_id: who.accountId,
        admin_id: who.adminId,
        credential_id: credential.id,
        public_key: credential.publicKey,
        counter: credential.counter,
        transports: JSON.stringify(credential.transports),
        name,
        backed_up: credential.backedUp ? 1 : 0,
        created: isoNow(),
        last_used: null,
      });
      const after = { id: row.id, name: row.name, backed_up: row.backed_up === 1 };
      await repo.audit({
        accountId: who.accountId,
        resource: "passkey",
        id: row.id,
        action: "create",
        after,
      });
      return row;
    });
    return { passkey, recoveryCodes: first ? await this.newRecoveryCodesIfNone(who) : null };
  }

  async renamePasskey(who: AdminRef, id: number, nameText: string): Promise<void> {
    const name = passkeyName(nameText);
    const entry = { resource: "passkey", id, action: "update", after: { name } };
    if (!(await this.audited(who, entry, (repo) => repo.renamePasskey(who.accountId, who.adminId, id, name))))
      throw new NotFoundError("no such passkey of yours");
  }

  async removePasskey(who: AdminRef, id: number): Promise<void> {
    const status = await this.status(who);
    if (!status.passkeys.some((p) => p.id === id)) throw new NotFoundError("no such passkey of yours");
    this.refuseLastFactor(status, !status.totp && status.passkeys.length === 1);
    const before = { id, name: status.passkeys.find((p) => p.id === id)?.name };
    await this.audited(who, { resource: "passkey", id, action: "delete", before }, (repo) =>
      repo.deletePasskey(who.accountId, who.adminId, id),
    );
  }

  /** Options to sign in with a passkey: the admin's own keys, or (null) any discoverable one. */
  async passkeyChallenge(who: AdminRef | null): Promise<RequestOptions | null> {
    if (!who) return authenticationOptions(this.rp, null);
    const keys = await this.repo.passkeysOf(who.accountId, who.adminId);
    return keys.length === 0 ? null : authenticationOptions(this.rp, keys);
  }

  /**
   * Verifies a passkey's answer to `challenge`. As a second factor (`who` given) the credential must
   * be one of that admin's; alone (null) user verification is required, and the user handle the
   * authenticator returns must be the owner's (WebAuthn section 7.2 step 6). The admin it proves.
   */
  async verifyPasskey(
    who: AdminRef | null,
    responseText: string,
    challenge: string,
  ): Promise<{ accountId: number; adminId: number }> {
    const response = credentialJson<AuthenticationResponseJSON>(responseText);
    const row = await this.repo.findPasskey(response.id);
    if (!row) throw new PasskeyRefusedError("This passkey is not registered with this console.");
    if (who && (row.account_id !== who.accountId || row.admin_id !== who.adminId))
      throw new PasskeyRefusedError("This passkey belongs to another console user.");
    if (!who) {
      const owner = await this.repo.factorsOf(row.account_id, row.admin_id);
      const handle = response.response?.userHandle;
      if (!owner?.webauthn_user_id || typeof handle !== "string" || handle !== owner.webauthn_user_id)
        throw new PasskeyRefusedError("This passkey belongs to another console user.");
    }
    const counter = await verifyAssertion(this.rp, response, challenge, row, who === null).catch(
      (error: Error) => {
        throw new PasskeyRefusedError(`The passkey's answer did not verify: ${error.message}`);
      },
    );
    if (counter === null) throw new PasskeyRefusedError("The passkey's answer did not verify.");
    await this.repo.usePasskey(row.account_id, row.id, counter, isoNow());
    return { accountId: row.account_id, adminId: row.admin_id };
  }

  /**
   * The account's requirement on or off. On needs the admin turning it on to have a second factor
   * (nobody locks themselves out), and ends the account's sessions made without one but theirs.
   */
  async setRequired(who: AdminRef, sessionId: number, on: boolean): Promise<void> {
    if (on && !(await this.hasSecondFactor(who)))
      throw new ConflictError("set up a second factor for yourself before requiring one of everyone");
    const before = { second_factor_required: await this.repo.secondFactorRequired(who.accountId) };
    const entry = {
      resource: "account_security",
      id: who.accountId,
      action: "update",
      before,
      after: { second_factor_required: on },
    };
    await this.audited(who, entry, (repo) => repo.setSecondFactorRequired(who.accountId, on, sessionId));
  }

  /** The session proved a factor after it was made (its admin just set one up in it). */
  markSession(who: AdminRef, sessionId: number, factor: Factor): Promise<void> {
    return this.repo.markSession(who.accountId, sessionId, factor);
  }

  /** Removes every second factor of an admin (the CLI, for a lost device and lost codes). */
  clear(who: AdminRef): Promise<void> {
    return this.audited(who, { resource: "second_factors", id: who.adminId, action: "delete" }, (repo) =>
      repo.clearFactors(who.accountId, who.adminId),
    );
  }
}
