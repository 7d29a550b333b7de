// A console sign-in between its first factor and its session (issue 29 point 2). A right password
// (or an identity provider's word) of an admin with a second factor does not open a session: it
// opens a sign-in, named by its own cookie, that only the second factor turns into a session. An
// admin with none, in an account that requires one, gets a sign-in that can only set one up. A
// passkey sign-in (no password) starts as a sign-in that does not know who yet. Sign-ins expire
// after SIGN_IN_MS and end after SECOND_FACTOR_FAILURE_LIMIT wrong answers (the password again).
import { runAsAdmin } from "../audit/context.ts";
import { AppError, ConflictError } from "../shared/errors.ts";
import { isoNow } from "../shared/time.ts";
import type { FactorsRepo, SignInRow } from "./factors-repo.ts";
import type { AdminLoginRow, AdminsRepo } from "./repo.ts";
import {
  type AdminRef,
  type Factor,
  PasskeyRefusedError,
  type SecondFactors,
  UsedCodeError,
  WrongCodeError,
} from "./second-factors.ts";
import { randomToken, sha256, TOKEN } from "./tokens.ts";
import type { CreationOptions, RequestOptions } from "./webauthn.ts";

export const SIGN_IN_MS = 10 * 60_000;
/** Wrong codes (or refused passkeys) one sign-in may send before it ends. */
export const SECOND_FACTOR_FAILURE_LIMIT = 5;

export type SignInStage = "second-factor" | "enrol" | "passkey";

/** Whatever a door needs of a new session (AdminsService.openSession's answer). */
export interface Opened<S> {
  token: string;
  session: S;
}

/** A first factor's outcome: a session, or a sign-in that needs a second factor (or one set up). */
export type LoginOutcome<S> =
  | (Opened<S> & { pending?: undefined })
  | { token: string; pending: SignInStage; session?: undefined };

export interface SignIn {
  row: SignInRow;
  /** Null for a passkey sign-in (who signs in is not known yet). */
  who: AdminRef | null;
  /** The admin's role, with who. */
  role?: string;
}

/**
 * Runs fn as the admin signing in: a factor enrolled before the session exists is still that
 * admin's change in the audit log (the door named only an admin without a session).
 */
function asSigningIn<T>(signIn: SignIn, fn: () => Promise<T>): Promise<T> {
  if (!signIn.who) return fn();
  const { adminId, email } = signIn.who;
  return runAsAdmin({ id: adminId, email, role: signIn.role ?? "" }, fn);
}

/** The sign-in is gone: expired, used, ended after too many wrong answers, or never was. */
export class SignInGoneError extends AppError {
  constructor(message = "This sign-in expired or was already used. Log in again.") {
    super(401, message);
  }
}

export interface SignInDeps<S> {
  admins: AdminsRepo;
  repo: FactorsRepo;
  factors: SecondFactors;
  open(row: AdminLoginRow, providerId: number | null, factor: Factor | null): Promise<Opened<S>>;
}

const later = (ms: number) => isoNow(new Date(Date.now() + ms));

export class SignInFlow<S> {
  constructor(private readonly deps: SignInDeps<S>) {}

  /** After the first factor: a session when no second one is due, else a sign-in. */
  async begin(row: AdminLoginRow, providerId: number | null, next: string): Promise<LoginOutcome<S>> {
    const who = { accountId: row.account_id, adminId: row.id, email: row.email };
    const { factors } = this.deps;
    let stage: SignInStage | null = null;
    if (await factors.hasSecondFactor(who)) stage = "second-factor";
    else if (await factors.required(row.account_id)) stage = "enrol";
    if (!stage) return this.deps.open(row, providerId, null);
    const token = await this.insert(who, stage, providerId, next);
    return { token, pending: stage };
  }

  private async insert(who: AdminRef | null, stage: SignInStage, providerId: number | null, next: string) {
    const token = randomToken();
    const now = isoNow();
    await this.deps.repo.insertSignIn(
      {
        account_id: who?.accountId ?? null,
        admin_id: who?.adminId ?? null,
        token_hash: sha256(token),
        stage,
        provider_id: providerId,
        challenge: null,
        next,
        created: now,
        expires: later(SIGN_IN_MS),
      },
      now,
    );
    return token;
  }

  /** The sign-in a cookie names, unless it is unknown, malformed or expired. */
  async find(token: string): Promise<SignIn | null> {
    if (!TOKEN.test(token)) return null;
    const row = await this.deps.repo.findSignIn(sha256(token));
    if (!row) return null;
    if (Date.parse(row.expires) <= Date.now()) {
      await this.deps.repo.deleteSignIn(row.id);
      return null;
    }
    if (row.account_id === null || row.admin_id === null) return { row, who: null };
    const admin = await this.deps.admins.findById(row.account_id, row.admin_id);
    if (!admin) return null;
    const who = { accountId: admin.account_id, adminId: admin.id, email: admin.email };
    return { row, who, role: admin.role };
  }

  private known(signIn: SignIn, stage: SignInStage): AdminRef {
    if (signIn.row.stage !== stage || !signIn.who)
      throw new ConflictError("this sign-in is at another step: go back to the login page and start again");
    return signIn.who;
  }

  /** What the second-factor page offers; a new passkey challenge is kept for its answer. */
  async secondFactorChoices(
    signIn: SignIn,
  ): Promise<{ totp: boolean; recovery: number; passkey: RequestOptions | null }> {
    const who = this.known(signIn, "second-factor");
    const status = await this.deps.factors.status(who);
    const passkey = await this.deps.factors.passkeyChallenge(who);
    if (passkey) await this.deps.repo.setSignInChallenge(signIn.row.id, passkey.challenge);
    return { totp: status.totp, recovery: status.recovery.unused, passkey };
  }

  withTotp(signIn: SignIn, code: string): Promise<Opened<S>> {
    const who = this.known(signIn, "second-factor");
    return this.answer(signIn, "totp", () => this.deps.factors.checkTotp(who, code));
  }

  withRecoveryCode(signIn: SignIn, code: string): Promise<Opened<S>> {
    const who = this.known(signIn, "second-factor");
    return this.answer(signIn, "recovery", () => this.deps.factors.useRecoveryCode(who, code));
  }

  withPasskey(signIn: SignIn, response: string): Promise<Opened<S>> {
    const who = this.known(signIn, "second-factor");
    const challenge = signIn.row.challenge;
    return this.answer(signIn, "passkey", async () => {
      if (!challenge) throw new PasskeyRefusedError("No passkey was asked for: reload the page.");
      await this.deps.factors.verifyPasskey(who, response, challenge);
    });
  }

  /** Checks an answer; a wrong one counts, and the last allowed ends the sign-in. */
  private async answer(signIn: SignIn, factor: Factor, check: () => Promise<void>): Promise<Opened<S>> {
    try {
      await check();
    } catch (error) {
      const wrong =
        error instanceof WrongCodeError ||
        error instanceof UsedCodeError ||
        error instanceof PasskeyRefusedError;
      if (wrong && (await this.deps.repo.failSignIn(signIn.row.id)) >= SECOND_FACTOR_FAILURE_LIMIT) {
        await this.deps.repo.deleteSignIn(signIn.row.id);
        throw new SignInGoneError(
          `${(error as Error).message} That was too many wrong answers: log in again.`,
        );
      }
      throw error;
    }
    return this.finish(signIn, signIn.who!, factor);
  }

  /** Ends the sign-in (once: of two racing answers one gets the session) and opens the session. */
  private async finish(signIn: SignIn, who: AdminRef, factor: Factor): Promise<Opened<S>> {
    if (!(await this.deps.repo.deleteSignIn(signIn.row.id))) throw new SignInGoneError();
    const row = await this.deps.admins.findById(who.accountId, who.adminId);
    if (!row) throw new SignInGoneError();
    return this.deps.open(row, signIn.row.provider_id, factor);
  }

  /** The enrolment page's TOTP secret and passkey registration (its challenge kept for the answer). */
  async enrolment(
    signIn: SignIn,
  ): Promise<{ totp: { secret: string; uri: string }; passkey: CreationOptions }> {
    const who = this.known(signIn, "enrol");
    const totp = await this.deps.factors.totpEnrolment(who);
    const passkey = await this.deps.factors.passkeyRegistration(who);
    await this.deps.repo.setSignInChallenge(signIn.row.id, passkey.challenge);
    return { totp, passkey };
  }

  async enrolTotp(signIn: SignIn, code: string): Promise<Opened<S> & { recoveryCodes: string[] | null }> {
    const who = this.known(signIn, "enrol");
    const recoveryCodes = await asSigningIn(signIn, () => this.deps.factors.confirmTotp(who, code));
    return { ...(await this.finish(signIn, who, "totp")), recoveryCodes };
  }

  async enrolPasskey(
    signIn: SignIn,
    response: string,
    name: string,
  ): Promise<Opened<S> & { recoveryCodes: string[] | null }> {
    const who = this.known(signIn, "enrol");
    if (!signIn.row.challenge) throw new PasskeyRefusedError("No passkey was asked for: reload the page.");
    const challenge = signIn.row.challenge;
    const { recoveryCodes } = await asSigningIn(signIn, () =>
      this.deps.factors.registerPasskey(who, response, challenge, name),
    );
    return { ...(await this.finish(signIn, who, "passkey")), recoveryCodes };
  }

  /** A passkey sign-in (no password): its cookie's token and the options for the browser. */
  async startPasskey(next: string): Promise<{ token: string; options: RequestOptions }> {
    const options = (await this.deps.factors.passkeyChallenge(null))!;
    const token = await this.insert(null, "passkey", null, next);
    const signIn = await this.find(token);
    await this.deps.repo.setSignInChallenge(signIn!.row.id, options.challenge);
    return { token, options };
  }

  /**
   * The passkey's answer names the admin (by its credential and user handle). A passkey with user
   * verification is two factors in one (something held, something known or been), so it satisfies
   * the account's requirement; an account with password login off takes single sign-on only.
   */
  async finishPasskey(signIn: SignIn, response: string): Promise<Opened<S>> {
    if (signIn.row.stage !== "passkey" || !signIn.row.challenge) throw new SignInGoneError();
    const proved = await this.deps.factors.verifyPasskey(null, response, signIn.row.challenge);
    const row = await this.deps.admins.findById(proved.accountId, proved.adminId);
    if (!row) throw new SignInGoneError();
    if (row.console_password_login === 0)
      throw new AppError(
        403,
        "This account signs in through single sign-on only: use its button on the login page.",
      );
    return this.finish(signIn, { accountId: row.account_id, adminId: row.id, email: row.email }, "passkey");
  }
}
