// Console users (operators who log in to /console, each acting for one account), their sessions
// (with the secrets waiting to be shown in them: pending-secrets.ts), and the first-run setup code.
// Passwords are scrypt hashes; session tokens are random and stored only as SHA-256 hashes; the
// setup code lives in this process's memory and works once. A login of an admin with a second
// factor (or in an account that requires one) goes through a sign-in first (sign-in.ts).
import { timingSafeEqual } from "node:crypto";
import { type Database, isUniqueViolation } from "../../db/database.ts";
import { type AccountRow, AccountsRepo } from "../accounts/repo.ts";
import { AccountsService } from "../accounts/service.ts";
import { runAsAdmin } from "../audit/context.ts";
import type { Permission } from "../keys/permissions.ts";
import {
  AppError,
  ConflictError,
  type FieldProblem,
  NotFoundError,
  ValidationError,
} from "../shared/errors.ts";
import { isoNow } from "../shared/time.ts";
import { type KeySource, SecretBox } from "../webhooks/crypto.ts";
import { FactorsRepo } from "./factors-repo.ts";
import { PasswordWork } from "./password-work.ts";
import { checkPassword, generatePassword, hashPassword, unusableHash } from "./passwords.ts";
import { PendingSecrets } from "./pending-secrets.ts";
import { type AdminLoginRow, type AdminRow, AdminsRepo } from "./repo.ts";
import { DEFAULT_ROLE, isRole, ROLE_LIST, type Role, roleAllows } from "./roles.ts";
import {
  emailProblem,
  generateSetupCode,
  normalizeEmail,
  normalizeSetupCode,
  passwordProblem,
} from "./rules.ts";
import { type Factor, SecondFactors } from "./second-factors.ts";
import { type LoginOutcome, SignInFlow } from "./sign-in.ts";
import { randomToken, sha256, TOKEN } from "./tokens.ts";
import { describeUserAgent } from "./user-agent.ts";
import { relyingParty } from "./webauthn.ts";

/** A session ends after this long unused (CONSOLE_SESSION_IDLE_MINUTES)... */
export const SESSION_IDLE_MS = 12 * 3_600_000;
/** ...and this long after login, however much it is used (CONSOLE_SESSION_MAX_HOURS). */
export const SESSION_MAX_MS = 7 * 24 * 3_600_000;

export interface SessionLimits {
  idleMs: number;
  maxMs: number;
}

/**
 * The idle expiry is pushed forward at most this often (one write, not one per page): a tenth of
 * the idle limit, at most 5 minutes, so a session ends within 10% of its idle limit.
 */
function extendInterval(limits: SessionLimits): number {
  return Math.min(5 * 60_000, Math.floor(limits.idleMs / 10));
}
/** A User-Agent is kept to this length (the session list shows a device, not the whole header). */
const MAX_USER_AGENT = 400;
/** The client named in the password work queue for operators' own changes (CLI, console forms). */
const OPERATORS = "operators";

export interface Admin {
  id: number;
  email: string;
  account_id: number;
  account: string;
  created: string;
  last_login: string | null;
  role: string;
}

/** Who a request's session cookie belongs to. */
export interface ConsoleSession {
  id: number;
  adminId: number;
  email: string;
  accountId: number;
  accountName: string;
  /** The synchronizer token every form of this session must send back. */
  csrfToken: string;
  /** The identity provider the session was made through (console single sign-on); null: a password. */
  providerId: number | null;
  /** The admin's role (core/admins/roles.ts), read from the database with this request. */
  role: string;
  /** Whether the role holds the permission (the same names API keys hold). */
  can(permission: Permission): boolean;
}

/** A session as the session list shows it. */
export interface ConsoleSessionListing {
  id: number;
  created: string;
  lastSeen: string;
  /** When it ends if unused (or at its absolute limit, whichever comes first). */
  ends: string;
  /** "Firefox on Linux", from the User-Agent. */
  device: string;
  userAgent: string | null;
  address: string | null;
  singleSignOn: boolean;
}

/** Where a request came from, as a session remembers it. */
export interface SeenFrom {
  userAgent?: string | undefined;
  address?: string | undefined;
}

/** A right password for an account whose console users must log in through single sign-on. */
export class PasswordLoginOffError extends AppError {
  constructor() {
    super(403, "password login to the console is turned off for this account: use single sign-on");
  }
}

export interface AdminInput {
  email: string;
  password?: string | undefined;
  /** Default: owner (the CLI's first user, and anyone made before roles existed). */
  role?: string | undefined;
}

/** A role name, or a ValidationError naming the field and the roles there are. */
export function checkRole(text: string | undefined, field = "role"): Role {
  if (text === undefined) return DEFAULT_ROLE;
  const role = text.trim().toLowerCase().replace(/[- ]/g, "_");
  if (!isRole(role)) throw ValidationError.field(field, `must be one of ${ROLE_LIST}`);
  return role;
}

export interface SetupInput {
  code: string;
  email: string;
  password: string;
}

/** Equal strings, compared without leaking where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(sha256(a));
  const right = Buffer.from(sha256(b));
  return timingSafeEqual(left, right);
}

function present(row: AdminRow, accountName: string): Admin {
  return {
    id: row.id,
    email: row.email,
    account_id: row.account_id,
    account: accountName,
    created: row.created,
    last_login: row.last_login,
    role: row.role,
  };
}

/** A session as the request carries it: the role's check made once here. */
function toSession(fields: Omit<ConsoleSession, "can">): ConsoleSession {
  const role = fields.role;
  return { ...fields, can: (permission) => roleAllows(role, permission) };
}

function check(email: string, password: string | undefined): void {
  const problems: FieldProblem[] = [];
  const badEmail = emailProblem(email);
  if (badEmail) problems.push({ field: "email", message: badEmail });
  const badPassword = password === undefined ? null : passwordProblem(password);
  if (badPassword) problems.push({ field: "password", message: badPassword });
  const first = problems[0];
  if (first) throw new ValidationError(`${first.field} ${first.message}`, problems);
}

const taken = (email: string) => new ConflictError(`a console user with the email ${email} already exists`);

function later(iso: string, ms: number): string {
  return isoNow(new Date(Date.parse(iso) + ms));
}

export class AdminsService {
  private setupCode: string | null = null;
  /** Once a console user exists it stays so (users are not deleted), so one positive answer is kept. */
  private someExist = false;
  /** Sign-ins waiting for their second factor (or for one to be set up). */
  readonly signIns: SignInFlow<ConsoleSession>;

  constructor(
    private readonly repo: AdminsRepo,
    private readonly accounts: AccountsService,
    /** Secrets a session's forms made, until the page after the redirect shows them. */
    readonly pendingSecrets: PendingSecrets,
    /** Admins' TOTP, recovery codes, passkeys, and the accounts' requirement of them. */
    readonly factors: SecondFactors,
    factorsRepo: FactorsRepo,
    /** Every scrypt of this service runs through it: bounded memory, 429 past its queue. */
    private readonly passwordWork = new PasswordWork(),
    /** CONSOLE_SESSION_IDLE_MINUTES and CONSOLE_SESSION_MAX_HOURS. */
    readonly sessionLimits: SessionLimits = { idleMs: SESSION_IDLE_MS, maxMs: SESSION_MAX_MS },
  ) {
    this.signIns = new SignInFlow({
      admins: repo,
      repo: factorsRepo,
      factors,
      open: (row, providerId, factor) => this.openSession(row, providerId, factor),
    });
  }

  /** The time sessions are judged by (epoch ms); tests set their own to cross the limits. */
  clock: () => number = Date.now;

  async exist(): Promise<boolean> {
    if (!this.someExist) this.someExist = (await this.repo.count()) > 0;
    return this.someExist;
  }

  /**
   * The one-time setup code, while no console user exists (null once one does). The same code
   * for the life of this process until it is used; a door prints it where only the operator sees it.
   */
  async issueSetupCode(): Promise<string | null> {
    if (await this.exist()) return null;
    this.setupCode ??= generateSetupCode();
    return this.setupCode;
  }

  /**
   * First run: the setup code from the server's log makes the first console user, in account
   * `default`. `client` names the caller in the password work queue (the door's address group).
   */
  async setup(input: SetupInput, client = OPERATORS): Promise<Admin> {
    if (await this.exist()) throw new ConflictError("the console is already set up; log in instead");
    const email = normalizeEmail(input.email);
    check(email, input.password);
    const expected = this.setupCode;
    if (expected === null || !sameSecret(normalizeSetupCode(input.code), expected)) {
      throw ValidationError.field("code", "does not match the code this server printed in its log");
    }
    // Used up before anything is awaited, so two requests carrying the code cannot both succeed.
    this.setupCode = null;
    try {
      const account = await this.accounts.resolve(undefined);
      const admin = await this.insert(account, email, input.password, DEFAULT_ROLE, client, true);
      this.someExist = true;
      return admin;
    } catch (error) {
      this.setupCode = expected;
      throw error;
    }
  }

  /** Creates a console user; without a password a strong one is generated (returned once). */
  async create(account: AccountRow, input: AdminInput): Promise<{ admin: Admin; password: string }> {
    const email = normalizeEmail(input.email);
    check(email, input.password);
    const role = checkRole(input.role);
    const password = input.password ?? generatePassword();
    const admin = await this.insert(account, email, password, role);
    this.someExist = true;
    this.setupCode = null;
    return { admin, password };
  }

  /** A hash of a new password, made in the password work queue (`client`: the door's address group). */
  hashNewPassword(password: string, client = OPERATORS): Promise<string> {
    return this.passwordWork.run(client, () => hashPassword(password));
  }

  /** A console user was made elsewhere (an accepted invitation): setup is over. */
  noteExisting(): void {
    this.someExist = true;
    this.setupCode = null;
  }

  /** Checks a new user's fields without writing, so a door can refuse before it writes anything else. */
  validate(input: AdminInput): void {
    check(normalizeEmail(input.email), input.password);
    checkRole(input.role);
  }

  /** Sets a new password (generated when none is given) and ends the user's sessions. */
  async resetPassword(emailText: string, given?: string): Promise<{ admin: Admin; password: string }> {
    const email = normalizeEmail(emailText);
    check(email, given);
    const row = await this.repo.findByEmail(email);
    if (!row) throw new NotFoundError(`no console user with the email ${email}`);
    const password = given ?? generatePassword();
    const hash = await this.passwordWork.run(OPERATORS, () => hashPassword(password));
    await this.repo.transaction(async (repo) => {
      await repo.setPassword(row.account_id, row.id, hash, isoNow());
      await repo.deleteSessionsOf(row.account_id, row.id);
      const after = { email: row.email, password };
      await repo.audit({
        accountId: row.account_id,
        resource: "admin",
        id: row.id,
        action: "reset_password",
        after,
      });
    });
    return { admin: present(row, row.account_name), password };
  }

  /**
   * Removes every second factor of a console user (a lost phone and lost recovery codes: the CLI,
   * for an operator with the server's shell) and ends their sessions.
   */
  async resetSecondFactors(emailText: string): Promise<Admin> {
    const email = normalizeEmail(emailText);
    const row = await this.repo.findByEmail(email);
    if (!row) throw new NotFoundError(`no console user with the email ${email}`);
    await this.factors.clear({ accountId: row.account_id, adminId: row.id, email });
    await this.repo.deleteSessionsOf(row.account_id, row.id);
    return present(row, row.account_name);
  }

  async list(accountId?: number): Promise<Admin[]> {
    return (await this.repo.list(accountId)).map((row) => present(row, row.account_name));
  }

  /**
   * A new session (or, for an admin with a second factor or one due, a sign-in waiting for it: see
   * sign-in.ts) for the right email and password; null otherwise, after the same work either way
   * (an unknown email is checked against a hash of nothing, through the same queue), so timing does
   * not tell which was wrong. A hash made with weaker parameters than today's is replaced by a new
   * one on success. `client` names the caller in the password work queue (the door's address
   * group); a full queue throws TooManyRequestsError before any check.
   */
  async login(
    emailText: string,
    password: string,
    client = OPERATORS,
    next = "/console",
  ): Promise<LoginOutcome<ConsoleSession> | null> {
    const row = await this.repo.findByEmail(normalizeEmail(emailText));
    const { valid, upgraded } = await this.passwordWork.run(client, async () =>
      checkPassword(password, row?.password_hash ?? (await unusableHash())),
    );
    if (!row || !valid) return null;
    if (row.console_password_login === 0) throw new PasswordLoginOffError();
    if (upgraded) await this.repo.replacePasswordHash(row.account_id, row.id, row.password_hash, upgraded);
    return this.signIns.begin(row, null, next);
  }

  /**
   * A session for the console user an identity provider of `accountId` vouched for (console single
   * sign-on: core/idp/console.ts checked the assertion and that the email is verified). The email
   * must be an existing console user of that account; with `mayCreate` (its domain is one the
   * provider may create console users for) a missing one is created, with no usable password. A
   * console user of another account is never signed in: null. The second factor is asked as after
   * a password: Wisp cannot tell whether the provider asked for one.
   */
  async loginVerified(
    accountId: number,
    emailText: string,
    providerId: number,
    mayCreate: boolean,
  ): Promise<(LoginOutcome<ConsoleSession> & { created: boolean }) | null> {
    const email = normalizeEmail(emailText);
    if (emailProblem(email)) return null;
    let row = await this.repo.findByEmail(email);
    let created = false;
    if (!row && mayCreate) {
      const now = isoNow();
      try {
        await this.repo.insert({
          account_id: accountId,
          email,
          password_hash: await unusableHash(),
          created: now,
          updated: now,
          last_login: null,
          // Least privilege: an owner gives more on the team page.
          role: "read_only",
        });
        created = true;
      } catch (error) {
        if (!isUniqueViolation(error)) throw error; // made a moment ago by another sign-in
      }
      this.someExist = true;
      row = await this.repo.findByEmail(email);
    }
    if (!row || row.account_id !== accountId) return null;
    return { ...(await this.signIns.begin(row, providerId, "/console")), created };
  }

  /** The account whose console user has this email, if any (single sign-on's home-realm step). */
  async accountOfEmail(emailText: string): Promise<number | undefined> {
    const email = normalizeEmail(emailText);
    if (emailProblem(email)) return undefined;
    return (await this.repo.findByEmail(email))?.account_id;
  }

  /**
   * Password login on or off for an account's console users. Off ends the account's password
   * sessions at once; the caller (core/idp) has checked a provider lets them in.
   */
  async setPasswordLogin(accountId: number, on: boolean): Promise<void> {
    await this.repo.transaction(async (repo) => {
      await repo.setPasswordLogin(accountId, on);
      if (!on) await repo.deletePasswordSessions(accountId);
      await repo.audit({
        accountId,
        resource: "account",
        id: accountId,
        action: "update",
        after: { password_login: on },
      });
    });
  }

  private async openSession(
    row: AdminLoginRow,
    providerId: number | null,
    secondFactor: Factor | null,
  ): Promise<{ token: string; session: ConsoleSession }> {
    const token = randomToken();
    const now = isoNow(new Date(this.clock()));
    const csrfToken = randomToken();
    await this.repo.deleteExpiredSessions(row.account_id, row.id, now);
    const id = await this.repo.insertSession({
      account_id: row.account_id,
      admin_id: row.id,
      token_hash: sha256(token),
      csrf_token: csrfToken,
      created: now,
      last_seen: now,
      expires: later(now, Math.min(this.sessionLimits.idleMs, this.sessionLimits.maxMs)),
      provider_id: providerId,
      // Filled in by the first request the session makes (see authenticate).
      user_agent: null,
      address: null,
      second_factor: secondFactor,
    });
    await this.repo.setLastLogin(row.account_id, row.id, now);
    return {
      token,
      session: toSession({
        id,
        adminId: row.id,
        email: row.email,
        accountId: row.account_id,
        accountName: row.account_name,
        csrfToken,
        providerId,
        role: row.role,
      }),
    };
  }

  /**
   * The session a cookie's token names, unless it is unknown, malformed or past its idle or absolute
   * limit (today's settings, whatever they were at login). The admin's role comes with it, read
   * from the database now: a role change or a removal counts from the next request. `seen` is where
   * the request came from, kept for the session list.
   */
  async authenticate(token: string, seen: SeenFrom = {}): Promise<ConsoleSession | null> {
    if (!TOKEN.test(token)) return null;
    const row = await this.repo.findSession(sha256(token));
    if (!row) return null;
    const now = this.clock();
    const { idleMs, maxMs } = this.sessionLimits;
    // The stored expiry (set with the limits of its day) and today's limits: the earlier counts.
    const ends = Math.min(
      Date.parse(row.expires),
      Date.parse(row.last_seen) + idleMs,
      Date.parse(row.created) + maxMs,
    );
    if (ends <= now) {
      await this.repo.deleteSession(sha256(token));
      return null;
    }
    if (now - Date.parse(row.last_seen) >= extendInterval(this.sessionLimits)) {
      const expires = Math.min(now + idleMs, Date.parse(row.created) + maxMs);
      await this.repo.extendSession(row.account_id, row.id, isoNow(new Date(now)), isoNow(new Date(expires)));
    }
    const userAgent = seen.userAgent?.slice(0, MAX_USER_AGENT) || null;
    const address = seen.address || null;
    if (userAgent !== row.user_agent || address !== row.address) {
      await this.repo.seenFrom(row.account_id, row.id, userAgent, address);
    }
    return toSession({
      id: row.id,
      adminId: row.admin_id,
      email: row.email,
      accountId: row.account_id,
      accountName: row.account_name,
      csrfToken: row.csrf_token,
      providerId: row.provider_id,
      role: row.role,
    });
  }

  /** An admin's sessions that have not ended, newest use first. */
  async sessionsOf(accountId: number, adminId: number): Promise<ConsoleSessionListing[]> {
    const admin = await this.repo.findById(accountId, adminId);
    if (!admin) throw new NotFoundError(`no console user ${adminId} in this account`);
    const now = this.clock();
    const { idleMs, maxMs } = this.sessionLimits;
    const rows = await this.repo.listSessions(accountId, adminId, isoNow(new Date(now)));
    return rows
      .map((row) => ({
        id: row.id,
        created: row.created,
        lastSeen: row.last_seen,
        ends: isoNow(new Date(Math.min(Date.parse(row.last_seen) + idleMs, Date.parse(row.created) + maxMs))),
        device: describeUserAgent(row.user_agent),
        userAgent: row.user_agent,
        address: row.address,
        singleSignOn: row.provider_id !== null,
      }))
      .filter((listing) => Date.parse(listing.ends) > now);
  }

  /** Ends one session of an admin (their own, or a team member's for an owner: the door decides). */
  async endSession(accountId: number, adminId: number, sessionId: number): Promise<void> {
    // Ending a session (a team member's, or one's own on a lost device) is a change an auditor asks
    // about; signing in and out are not.
    await this.repo.transaction(async (repo) => {
      if (!(await repo.deleteSessionOf(accountId, adminId, sessionId))) {
        throw new NotFoundError(`no session ${sessionId} of this console user (it may have ended already)`);
      }
      const before = { admin_id: adminId, session_id: sessionId };
      await repo.audit({ accountId, resource: "admin_session", id: sessionId, action: "delete", before });
    });
  }

  async logout(token: string): Promise<void> {
    if (TOKEN.test(token)) await this.repo.deleteSession(sha256(token));
  }

  private async insert(
    account: AccountRow,
    email: string,
    password: string,
    role: Role,
    client = OPERATORS,
    /** The first-run setup: the new admin makes themselves, and the audit row names them. */
    self = false,
  ): Promise<Admin> {
    if (await this.repo.findByEmail(email)) throw taken(email);
    const now = isoNow();
    try {
      const password_hash = await this.passwordWork.run(client, () => hashPassword(password));
      const admin = await this.repo.transaction(async (repo) => {
        const row = await repo.insert({
          account_id: account.id,
          email,
          password_hash,
          created: now,
          updated: now,
          last_login: null,
          role,
        });
        const created = present(row, account.name);
        const audit = () =>
          repo.audit({
            accountId: account.id,
            resource: "admin",
            id: row.id,
            action: "create",
            after: created,
          });
        await (self ? runAsAdmin(row, audit) : audit());
        return created;
      });
      return admin;
    } catch (error) {
      if (isUniqueViolation(error)) throw taken(email);
      throw error;
    }
  }
}

/**
 * `keys`: where the key sealing secrets at rest comes from (the one webhook secrets use);
 * `sessionLimits`: CONSOLE_SESSION_IDLE_MINUTES and CONSOLE_SESSION_MAX_HOURS; `publicUrl`
 * (PUBLIC_URL) is the passkeys' relying party.
 */
export function createAdmins(
  database: Database,
  keys: KeySource = {},
  options: { sessionLimits?: SessionLimits | undefined; publicUrl?: string | undefined } = {},
): AdminsService {
  const repo = new AdminsRepo(database.db, database.dialect);
  const accounts = new AccountsService(new AccountsRepo(database.db));
  const factorsRepo = new FactorsRepo(database.db);
  return new AdminsService(
    repo,
    accounts,
    new PendingSecrets(repo, new SecretBox(keys, "secret waiting to be shown")),
    new SecondFactors(
      factorsRepo,
      new SecretBox(keys, "console TOTP secret"),
      relyingParty(options.publicUrl ?? "http://localhost"),
    ),
    factorsRepo,
    new PasswordWork(),
    options.sessionLimits,
  );
}
