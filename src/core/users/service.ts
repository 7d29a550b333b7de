// Users: the people (or devices) that log in to the Wi-Fi. Their password lives in radcheck,
// where FreeRADIUS and Wisp's own RADIUS server read it.
import { isUniqueViolation } from "../../db/database.ts";
import { STORED_PASSWORD_ATTRIBUTES } from "../aaa/passwords/items.ts";
import { passwordHashItem, type StoredPasswordHash } from "../aaa/passwords/validate.ts";
import { checkUsername, checkValueSafe } from "../aaa/values.ts";
import { planIdProblem, unknownPlan } from "../plans/repo.ts";
import { ConflictError, type FieldProblem, NotFoundError, ValidationError } from "../shared/errors.ts";
import type { Page, PageRequest } from "../shared/pages.ts";
import { parseSort } from "../shared/sort.ts";
import { hasControlCharacters } from "../shared/text.ts";
import { isoNow } from "../shared/time.ts";
import type { UserChanges, UserFilter, UserRow, UsersRepo } from "./repo.ts";
import {
  EMAIL_PATTERN,
  EMAIL_RULE,
  MAX_EMAIL,
  MAX_FULLNAME,
  MAX_PASSWORD,
  PASSWORD_LENGTH_RULE,
  USER_SORT_FIELDS,
  USER_STATUSES,
  type UserStatus,
} from "./rules.ts";

export interface User {
  id: number;
  username: string;
  email: string;
  fullname: string;
  status: UserStatus;
  created: string;
  updated: string;
  /** The user's own plan; null: its groups' (core/plans). */
  plan_id: number | null;
}

/** A user in a listing: with where it came from ("local", or "scim": made by an identity provider). */
export interface UserListing extends User {
  source: string;
}

export interface UserInput {
  username?: string | undefined;
  email?: string | undefined;
  fullname?: string | undefined;
  status?: string | undefined;
  password?: string | undefined;
  /** A pre-hashed password (see passwordHashItem); replaces every password item like `password`. */
  password_hash?: string | undefined;
  /** The user's own plan (this account's), or null for none. */
  plan_id?: number | null | undefined;
}

const emailPattern = new RegExp(EMAIL_PATTERN);

/** The password is stored as a radcheck value: the same rules as any attribute value apply. */
function passwordProblem(password: string): string | null {
  if (password.length < 1 || password.length > MAX_PASSWORD) return PASSWORD_LENGTH_RULE;
  return checkValueSafe(password);
}

function hashItem(hash: string): StoredPasswordHash | string {
  return checkValueSafe(hash) ?? passwordHashItem(hash);
}

/** The radcheck item a password or pre-hashed password becomes; undefined when neither is given. */
export function passwordItemOf(input: UserInput): { attribute: string; value: string } | undefined {
  if (input.password !== undefined) return { attribute: "Cleartext-Password", value: input.password };
  if (input.password_hash === undefined) return undefined;
  return hashItem(input.password_hash) as StoredPasswordHash; // check() refused it otherwise
}

/** The rules every door's user input passes (the API, the console, the CLI, SCIM). */
export function checkUserInput(input: UserInput): void {
  const problems: FieldProblem[] = [];
  const usernameProblem = input.username === undefined ? null : checkUsername(input.username);
  if (usernameProblem) problems.push({ field: "username", message: usernameProblem });
  if (input.email !== undefined && (input.email.length > MAX_EMAIL || !emailPattern.test(input.email))) {
    problems.push({ field: "email", message: EMAIL_RULE });
  }
  if (
    input.fullname !== undefined &&
    (input.fullname.length > MAX_FULLNAME || hasControlCharacters(input.fullname))
  ) {
    problems.push({
      field: "fullname",
      message: `must be at most ${MAX_FULLNAME} characters without control characters`,
    });
  }
  if (input.status !== undefined && !USER_STATUSES.includes(input.status as UserStatus)) {
    problems.push({ field: "status", message: `must be one of ${USER_STATUSES.join(", ")}` });
  }
  const badPlan = planIdProblem(input.plan_id);
  if (badPlan) problems.push({ field: "plan_id", message: badPlan });
  const badPassword = input.password === undefined ? null : passwordProblem(input.password);
  if (badPassword) problems.push({ field: "password", message: badPassword });
  if (input.password_hash !== undefined) {
    const hash = hashItem(input.password_hash);
    if (typeof hash === "string") problems.push({ field: "password_hash", message: hash });
    if (input.password !== undefined) {
      problems.push({ field: "password_hash", message: "cannot be set together with password" });
    }
  }
  const first = problems[0];
  if (first) throw new ValidationError(`${first.field} ${first.message}`, problems);
}

export function presentUser(row: UserRow): User {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    fullname: row.fullname,
    status: row.status as UserStatus,
    created: row.created,
    updated: row.updated,
    plan_id: row.plan_id === null || row.plan_id === undefined ? null : Number(row.plan_id),
  };
}

/** The user as audited: a new password shows as set (masked), never its value. */
function audited(user: User, input: UserInput): Record<string, unknown> {
  return { ...user, password: input.password, password_hash: input.password_hash };
}

/** The plan a user names must be this account's: another account's reads as none (404). */
async function checkPlan(repo: UsersRepo, accountId: number, planId: number | null | undefined) {
  if (planId !== undefined && planId !== null && !(await repo.planExists(accountId, planId))) {
    throw unknownPlan(planId);
  }
}

function duplicate(username: string): ConflictError {
  return new ConflictError(`a user named "${username}" already exists`);
}

/** How and where a guest registered (migration 038): recorded when its user is created. */
export interface GuestOrigin {
  /** registration, email_code, email_link, sms, sponsor or idp. */
  method: string;
  portalId: number;
  providerId?: number | undefined;
  clientMac: string | null;
}

function originColumns(source: "portal" | "idp", origin: GuestOrigin) {
  return {
    source,
    guest_method: origin.method,
    guest_portal_id: origin.portalId,
    guest_provider_id: origin.providerId ?? null,
    guest_client_mac: origin.clientMac,
  };
}

/**
 * A portal or identity-provider user, just inserted or updated: its new one-time credential (a
 * Cleartext-Password and an Expiration) and the upsert's audit row (the password masked there by
 * the audit rule). The user as presented.
 */
async function writeCredential(
  repo: UsersRepo,
  accountId: number,
  row: UserRow | undefined,
  existing: UserRow | undefined,
  credential: { username: string; password: string; expiration: number },
): Promise<User> {
  if (!row) throw new NotFoundError(`user ${credential.username} not found`);
  const password = { attribute: "Cleartext-Password", value: credential.password };
  await repo.setPassword(accountId, credential.username, password, STORED_PASSWORD_ATTRIBUTES);
  await repo.setCheckItem(accountId, credential.username, "Expiration", String(credential.expiration));
  const user = presentUser(row);
  await repo.audit({
    accountId,
    resource: "user",
    id: user.id,
    action: existing ? "update" : "create",
    before: existing ? presentUser(existing) : undefined,
    after: { ...user, password: credential.password },
  });
  return user;
}

export class UsersService {
  constructor(private readonly repo: UsersRepo) {}

  /** `sort`: a field of USER_SORT_FIELDS, "-" first for descending; by id by default. */
  async list(
    accountId: number,
    filter: UserFilter,
    page: PageRequest,
    sort?: string,
  ): Promise<Page<UserListing>> {
    const order = parseSort(sort, USER_SORT_FIELDS);
    const { rows, total } = await this.repo.list(accountId, filter, page, order);
    const data = rows.map((row) => ({ ...presentUser(row), source: row.source }));
    return { data, page: page.page, total, limit: page.limit };
  }

  /** list(), as the JSON text of the list shape, built by the database (the API's fast path). */
  async listJson(accountId: number, filter: UserFilter, page: PageRequest, sort?: string): Promise<string> {
    const order = parseSort(sort, USER_SORT_FIELDS);
    const { json, total } = await this.repo.listJson(accountId, filter, page, order);
    return `{"data":${json},"page":${page.page},"total":${total},"limit":${page.limit}}`;
  }

  /** The user as JSON, in the API's shape (kept by the database: migration 008). */
  async getJson(accountId: number, id: number): Promise<string> {
    const json = await this.repo.findJson(accountId, id);
    if (json === undefined) throw new NotFoundError(`user ${id} not found`);
    return json;
  }

  async get(accountId: number, id: number): Promise<User> {
    const row = await this.repo.findById(accountId, id);
    if (!row) throw new NotFoundError(`user ${id} not found`);
    return presentUser(row);
  }

  async create(accountId: number, input: UserInput): Promise<User> {
    if (input.username === undefined) throw ValidationError.field("username", "is required");
    checkUserInput(input);
    const username = input.username;
    const now = isoNow();
    try {
      return await this.repo.transaction(async (repo) => {
        if (await repo.findByUsername(accountId, username)) throw duplicate(username);
        await checkPlan(repo, accountId, input.plan_id);
        const row = await repo.insert({
          account_id: accountId,
          username,
          email: input.email ?? "",
          fullname: input.fullname ?? "",
          status: input.status ?? "enabled",
          plan_id: input.plan_id ?? null,
          created: now,
          updated: now,
        });
        const password = passwordItemOf(input);
        if (password) await repo.setPassword(accountId, username, password, STORED_PASSWORD_ATTRIBUTES);
        const user = presentUser(row);
        await repo.recordEvent(accountId, "user.created", { ...user });
        await repo.audit({
          accountId,
          resource: "user",
          id: user.id,
          action: "create",
          after: audited(user, input),
        });
        return user;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicate(username);
      throw error;
    }
  }

  /**
   * A guest registered on a captive portal: a user with a password, in the portal's guest group,
   * expiring at `expiration` (Unix seconds: FreeRADIUS's Expiration check item, src/core/aaa/decide.ts).
   * The username is the portal's for this email, so the same email on the same portal renews that
   * guest (new password and expiration, user.updated) instead of creating another; a new guest
   * raises user.created and guest.registered (with `event`'s extra data) in the same transaction.
   */
  async registerGuest(
    accountId: number,
    guest: {
      username: string;
      email: string;
      fullname: string;
      password: string;
      groupname: string;
      expiration: number;
      event: Record<string, unknown>;
      origin: GuestOrigin;
    },
  ): Promise<{ user: User; created: boolean }> {
    checkUserInput({
      username: guest.username,
      email: guest.email,
      fullname: guest.fullname,
      password: guest.password,
    });
    const now = isoNow();
    return this.repo.transaction(async (repo) => {
      const existing = await repo.findByUsername(accountId, guest.username);
      let row: UserRow | undefined;
      if (existing) {
        row = await repo.update(accountId, existing.id, { fullname: guest.fullname, updated: now });
      } else {
        row = await repo.insert({
          account_id: accountId,
          username: guest.username,
          email: guest.email,
          fullname: guest.fullname,
          status: "enabled",
          created: now,
          updated: now,
          ...originColumns("portal", guest.origin),
        });
      }
      const user = await writeCredential(repo, accountId, row, existing, guest);
      await repo.joinGroup(accountId, guest.groupname, guest.username);
      if (existing) {
        await repo.recordEvent(accountId, "user.updated", { ...user });
      } else {
        await repo.recordEvent(accountId, "user.created", { ...user });
        await repo.recordEvent(accountId, "guest.registered", { user, ...guest.event });
      }
      return { user, created: !existing };
    });
  }

  /**
   * A user signed in through an identity provider (core/idp): created on first sign-in under the
   * provider's stable name for the subject, else updated (email and name follow the IdP); a new
   * password (the one-time credential handed to the gateway) and Expiration each time; the groups
   * the provider maps decide membership of those groups only. A user the operator disabled stays
   * disabled (the RADIUS rules refuse it).
   */
  async signInFromProvider(
    accountId: number,
    input: {
      username: string;
      email: string;
      fullname: string;
      password: string;
      expiration: number;
      managedGroups: readonly string[];
      groups: readonly string[];
      origin: GuestOrigin;
    },
  ): Promise<{ user: User; created: boolean; disabled: boolean }> {
    checkUserInput({
      username: input.username,
      email: input.email,
      fullname: input.fullname,
      password: input.password,
    });
    const now = isoNow();
    return this.repo.transaction(async (repo) => {
      const existing = await repo.findByUsername(accountId, input.username);
      // Disabled by the operator: nothing changes, no new credential.
      if (existing && existing.status !== "enabled")
        return { user: presentUser(existing), created: false, disabled: true };
      const row = existing
        ? await repo.update(accountId, existing.id, {
            email: input.email,
            fullname: input.fullname,
            updated: now,
          })
        : await repo.insert({
            account_id: accountId,
            username: input.username,
            email: input.email,
            fullname: input.fullname,
            status: "enabled",
            created: now,
            updated: now,
            ...originColumns("idp", input.origin),
          });
      const user = await writeCredential(repo, accountId, row, existing, input);
      await repo.setManagedGroups(accountId, input.username, input.managedGroups, input.groups);
      if (!existing) await repo.recordEvent(accountId, "user.created", { ...user });
      else if (existing.email !== input.email || existing.fullname !== input.fullname)
        await repo.recordEvent(accountId, "user.updated", { ...user });
      return { user, created: !existing, disabled: false };
    });
  }

  /** Partial update: only the fields given change. */
  async update(accountId: number, id: number, input: UserInput): Promise<User> {
    checkUserInput(input);
    try {
      return await this.repo.transaction(async (repo) => {
        const current = await repo.findById(accountId, id);
        if (!current) throw new NotFoundError(`user ${id} not found`);
        const changes: UserChanges = { updated: isoNow() };
        if (input.username !== undefined && input.username !== current.username) {
          const clash = await repo.findByUsername(accountId, input.username);
          if (clash && clash.id !== id) throw duplicate(input.username);
          changes.username = input.username;
          await repo.renameRadiusRows(accountId, current.username, input.username);
        }
        if (input.email !== undefined) changes.email = input.email;
        if (input.fullname !== undefined) changes.fullname = input.fullname;
        if (input.status !== undefined) changes.status = input.status;
        if (input.plan_id !== undefined) {
          await checkPlan(repo, accountId, input.plan_id);
          changes.plan_id = input.plan_id;
        }
        const row = await repo.update(accountId, id, changes);
        if (!row) throw new NotFoundError(`user ${id} not found`);
        // A new plan reaches the user's open sessions by CoA (core/sessions/reauthorize.ts).
        if (input.plan_id !== undefined && input.plan_id !== (current.plan_id ?? null)) {
          await repo.pushToSessions(accountId, [row.username], "plan changed");
        }
        const password = passwordItemOf(input);
        if (password) await repo.setPassword(accountId, row.username, password, STORED_PASSWORD_ATTRIBUTES);
        // A disabled user is rejected at login; the sessions open now are cut too (a job, queued here).
        if (input.status === "disabled" && current.status !== "disabled") {
          await repo.disconnectSessions(accountId, current.username, "user disabled");
        }
        const user = presentUser(row);
        await repo.recordEvent(accountId, "user.updated", { ...user });
        const before = presentUser(current);
        await repo.audit({
          accountId,
          resource: "user",
          id,
          action: "update",
          before,
          after: audited(user, input),
        });
        return user;
      });
    } catch (error) {
      if (isUniqueViolation(error) && input.username !== undefined) throw duplicate(input.username);
      throw error;
    }
  }

  /** Deletes the user with its attributes and memberships; past auth and session records stay. */
  async delete(accountId: number, id: number): Promise<void> {
    await this.repo.transaction(async (repo) => {
      const current = await repo.findById(accountId, id);
      if (!current) throw new NotFoundError(`user ${id} not found`);
      await repo.deleteRadiusRows(accountId, current.username);
      await repo.delete(accountId, id);
      await repo.disconnectSessions(accountId, current.username, "user deleted");
      await repo.recordEvent(accountId, "user.deleted", { ...presentUser(current) });
      await repo.audit({ accountId, resource: "user", id, action: "delete", before: presentUser(current) });
    });
  }
}
