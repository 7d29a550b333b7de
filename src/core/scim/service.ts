// SCIM 2.0 provisioning (RFC 7643/7644): an identity provider (Entra ID, Okta) creates, updates,
// deactivates and deletes Wisp users and groups. Every write reads the resource, applies the request
// and writes the result in one transaction: a request is applied whole or not at all.
import { isUniqueViolation } from "../../db/database.ts";
import { STORED_PASSWORD_ATTRIBUTES } from "../aaa/passwords/items.ts";
import type { GroupsService } from "../groups/service.ts";
import { NotFoundError } from "../shared/errors.ts";
import { isoNow } from "../shared/time.ts";
import type { UserRow } from "../users/repo.ts";
import { passwordItemOf, presentUser, type UsersService } from "../users/service.ts";
import { invalidFilter, invalidValue, notFound, uniqueness } from "./errors.ts";
import { parseComparison } from "./filter.ts";
import { applyPatch, readPatch } from "./patch.ts";
import type { RowFilter, ScimRepo, ScimTransaction } from "./repo.ts";
import { groupFields, groupResource, type UserFields, userFields, userResource } from "./resources.ts";
import { GROUP_ATTRIBUTES, GROUP_SCHEMA, LIST_SCHEMA, USER_ATTRIBUTES, USER_SCHEMA } from "./schema.ts";
import { isObject, readResource, requireSchema, type ScimObject } from "./values.ts";

/** The most resources one page holds (ServiceProviderConfig filter.maxResults); more asked are clamped. */
export const MAX_RESULTS = 200;
/** A page's size when the client names none (Okta asks for 100). */
export const DEFAULT_COUNT = 100;

export interface ListRequest {
  filter?: string | undefined;
  /** 1-based (RFC 7644 section 3.4.2.4); below 1 reads as 1. */
  startIndex?: number | undefined;
  /** Below 0 reads as 0, above MAX_RESULTS as MAX_RESULTS. */
  count?: number | undefined;
  /** false when the client excluded members (Entra ID's excludedAttributes=members). */
  members?: boolean | undefined;
}

/** The attributes each resource may be filtered by, and the column each is. */
const USER_FILTERS: Record<string, RowFilter["column"]> = {
  username: "username",
  externalid: "external_id",
  id: "id",
};
const GROUP_FILTERS: Record<string, RowFilter["column"]> = {
  displayname: "display_name",
  externalid: "external_id",
  id: "id",
};

function rowFilter(text: string | undefined, allowed: Record<string, RowFilter["column"]>, schema: string) {
  if (text === undefined || text.trim() === "") return undefined;
  const { attribute, value } = parseComparison(text);
  const name = attribute.toLowerCase().replace(`${schema.toLowerCase()}:`, "");
  const column = allowed[name];
  if (!column) {
    throw invalidFilter(
      `filtering by ${attribute} is not supported; use ${Object.keys(allowed).join(", ")} with eq`,
    );
  }
  if (typeof value !== "string") throw invalidFilter(`${attribute} is compared with a string`);
  // An id that cannot be one matches nothing, rather than failing the query.
  if (column === "id" && !/^\d{1,10}$/.test(value)) return { column, value: "0" };
  return { column, value };
}

/** A resource id from the path; anything that is not one of Wisp's ids is not found. */
function idOf(text: string, type: string): number {
  const id = /^\d{1,10}$/.test(text) ? Number(text) : 0;
  if (id < 1 || id > 2_147_483_647) throw notFound(`${type} ${text} not found`);
  return id;
}

function windowOf(request: ListRequest) {
  const startIndex = Math.max(1, request.startIndex ?? 1);
  const count = Math.min(MAX_RESULTS, Math.max(0, request.count ?? DEFAULT_COUNT));
  return { startIndex, offset: startIndex - 1, limit: count };
}

function listResponse(resources: ScimObject[], total: number, startIndex: number): ScimObject {
  return {
    schemas: [LIST_SCHEMA],
    totalResults: total,
    startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

const userSchema = { urn: USER_SCHEMA, attributes: USER_ATTRIBUTES };
const groupSchema = { urn: GROUP_SCHEMA, attributes: GROUP_ATTRIBUTES };

export class ScimService {
  constructor(
    private readonly repo: ScimRepo,
    private readonly users: UsersService,
    private readonly groups: GroupsService,
  ) {}

  // ---- Users (RFC 7643 section 4.1) ----

  async listUsers(accountId: number, request: ListRequest, base: string): Promise<ScimObject> {
    const filter = rowFilter(request.filter, USER_FILTERS, USER_SCHEMA);
    const { startIndex, offset, limit } = windowOf(request);
    const { rows, total } = await this.repo.listUsers(accountId, filter, { offset, limit });
    const groups = await this.repo.groupsOf(
      accountId,
      rows.map((r) => r.username),
    );
    const resources = rows.map((row) => userResource(row, groups.get(row.username) ?? [], base));
    return listResponse(resources, total, startIndex);
  }

  async getUser(accountId: number, idText: string, base: string): Promise<ScimObject> {
    const row = await this.repo.findUser(accountId, idOf(idText, "User"));
    if (!row) throw notFound(`User ${idText} not found`);
    return this.userOf(this.repo, accountId, row, base);
  }

  async createUser(accountId: number, body: unknown, base: string): Promise<ScimObject> {
    if (!isObject(body)) throw invalidValue("the body must be a User object");
    requireSchema(body, USER_SCHEMA);
    const fields = userFields(readResource(USER_ATTRIBUTES, body));
    return this.unique(
      () => fields.username,
      () =>
        this.repo.transaction(async (tx) => {
          if (await tx.users.findByUsername(accountId, fields.username)) throw taken(fields.username);
          const now = isoNow();
          const { password, ...stored } = fields;
          const row = await tx.users.insert({
            account_id: accountId,
            ...stored,
            source: "scim",
            created: now,
            updated: now,
          });
          if (password !== undefined) await this.setPassword(tx, accountId, row.username, password);
          await tx.users.recordEvent(accountId, "user.created", { ...presentUser(row) });
          const after = { ...presentUser(row), password };
          await tx.users.audit({ accountId, resource: "user", id: row.id, action: "create", after });
          return this.userOf(tx.scim, accountId, row, base);
        }),
    );
  }

  /** PUT (RFC 7644 section 3.5.1): the resource replaced by the body; a password not sent stays. */
  async replaceUser(accountId: number, idText: string, body: unknown, base: string): Promise<ScimObject> {
    if (!isObject(body)) throw invalidValue("the body must be a User object");
    requireSchema(body, USER_SCHEMA);
    const fields = userFields(readResource(USER_ATTRIBUTES, body));
    return this.writeUser(accountId, idText, base, () => fields);
  }

  async patchUser(accountId: number, idText: string, body: unknown, base: string): Promise<ScimObject> {
    const operations = readPatch(body);
    return this.writeUser(accountId, idText, base, (current) =>
      userFields(readResource(USER_ATTRIBUTES, applyPatch(current, userSchema, operations))),
    );
  }

  /** Deletes the user as DELETE /api/users does (its sessions disconnected); a later GET is 404. */
  async deleteUser(accountId: number, idText: string): Promise<void> {
    await this.users.delete(accountId, idOf(idText, "User")).catch(notFoundAs(`User ${idText} not found`));
  }

  private async userOf(repo: ScimRepo, accountId: number, row: UserRow, base: string) {
    const groups = await repo.groupsOf(accountId, [row.username]);
    return userResource(row, groups.get(row.username) ?? [], base);
  }

  private async setPassword(tx: ScimTransaction, accountId: number, username: string, password: string) {
    const item = passwordItemOf({ password });
    if (item) await tx.users.setPassword(accountId, username, item, STORED_PASSWORD_ATTRIBUTES);
  }

  /** A unique index that refused a concurrent write is SCIM's uniqueness too. */
  private unique<T>(name: () => string, write: () => Promise<T>): Promise<T> {
    return write().catch((error) => {
      throw isUniqueViolation(error) ? taken(name()) : error;
    });
  }

  /**
   * Reads the user (locked), asks `next` for its new fields given its resource, writes them: a
   * rename carries the RADIUS rows along; active=false disables the user and queues the
   * disconnection of its sessions, as disabling through the API does (core/users).
   */
  private writeUser(
    accountId: number,
    idText: string,
    base: string,
    next: (current: ScimObject) => UserFields,
  ): Promise<ScimObject> {
    const id = idOf(idText, "User");
    let username = "";
    return this.unique(
      () => username,
      () =>
        this.repo.transaction(async (tx) => {
          const current = await tx.scim.findUser(accountId, id);
          if (!current) throw notFound(`User ${idText} not found`);
          const { password, ...fields } = next(await this.userOf(tx.scim, accountId, current, base));
          username = fields.username;
          if (fields.username !== current.username) {
            const clash = await tx.users.findByUsername(accountId, fields.username);
            if (clash && clash.id !== id) throw taken(fields.username);
            await tx.users.renameRadiusRows(accountId, current.username, fields.username);
          }
          const row = await tx.users.update(accountId, id, { ...fields, source: "scim", updated: isoNow() });
          if (!row) throw notFound(`User ${idText} not found`);
          if (password !== undefined) await this.setPassword(tx, accountId, row.username, password);
          if (fields.status === "disabled" && current.status !== "disabled") {
            await tx.users.disconnectSessions(accountId, row.username, "user disabled");
          }
          await tx.users.recordEvent(accountId, "user.updated", { ...presentUser(row) });
          await tx.users.audit({
            accountId,
            resource: "user",
            id,
            action: "update",
            before: presentUser(current),
            after: { ...presentUser(row), password },
          });
          return this.userOf(tx.scim, accountId, row, base);
        }),
    );
  }

  // ---- Groups (RFC 7643 section 4.2) ----

  async listGroups(accountId: number, request: ListRequest, base: string): Promise<ScimObject> {
    const filter = rowFilter(request.filter, GROUP_FILTERS, GROUP_SCHEMA);
    const { startIndex, offset, limit } = windowOf(request);
    const { rows, total } = await this.repo.listGroups(accountId, filter, { offset, limit });
    const members =
      request.members === false
        ? undefined
        : await this.repo.membersOf(
            accountId,
            rows.map((r) => r.name),
          );
    const resources = rows.map((row) =>
      groupResource(row, members ? (members.get(row.name) ?? []) : undefined, base),
    );
    return listResponse(resources, total, startIndex);
  }

  async getGroup(accountId: number, idText: string, base: string, withMembers = true): Promise<ScimObject> {
    const row = await this.repo.findGroup(accountId, idOf(idText, "Group"));
    if (!row) throw notFound(`Group ${idText} not found`);
    const members = withMembers
      ? ((await this.repo.membersOf(accountId, [row.name])).get(row.name) ?? [])
      : undefined;
    return groupResource(row, members, base);
  }

  async createGroup(accountId: number, body: unknown, base: string): Promise<ScimObject> {
    if (!isObject(body)) throw invalidValue("the body must be a Group object");
    requireSchema(body, GROUP_SCHEMA);
    const { memberIds, ...fields } = groupFields(readResource(GROUP_ATTRIBUTES, body));
    return this.unique(
      () => fields.name,
      () =>
        this.repo.transaction(async (tx) => {
          if (await tx.groups.findByName(accountId, fields.name)) throw takenGroup(fields.name);
          const now = isoNow();
          const row = await tx.groups.insert({
            account_id: accountId,
            ...fields,
            description: "",
            created: now,
            updated: now,
          });
          const members = await membersFor(tx, accountId, memberIds);
          await tx.scim.setMembers(accountId, row.name, [], members);
          const after = { id: row.id, name: row.name, members: members.map((m) => m.username) };
          await tx.groups.audit({ accountId, resource: "group", id: row.id, action: "create", after });
          return groupResource(row, members, base);
        }),
    );
  }

  async replaceGroup(accountId: number, idText: string, body: unknown, base: string): Promise<ScimObject> {
    if (!isObject(body)) throw invalidValue("the body must be a Group object");
    requireSchema(body, GROUP_SCHEMA);
    const doc = readResource(GROUP_ATTRIBUTES, body);
    return this.writeGroup(accountId, idText, base, () => doc);
  }

  async patchGroup(accountId: number, idText: string, body: unknown, base: string): Promise<ScimObject> {
    const operations = readPatch(body);
    return this.writeGroup(accountId, idText, base, (current) =>
      readResource(GROUP_ATTRIBUTES, applyPatch(current, groupSchema, operations)),
    );
  }

  /** Deletes the group as DELETE /api/groups does: its memberships and attributes go, its users stay. */
  async deleteGroup(accountId: number, idText: string): Promise<void> {
    await this.groups.delete(accountId, idOf(idText, "Group")).catch(notFoundAs(`Group ${idText} not found`));
  }

  /** Reads the group and its members (locked), writes what `next` makes of its resource. */
  private writeGroup(
    accountId: number,
    idText: string,
    base: string,
    next: (current: ScimObject) => ScimObject,
  ): Promise<ScimObject> {
    const id = idOf(idText, "Group");
    let name = "";
    return this.unique(
      () => name,
      () =>
        this.repo.transaction(async (tx) => {
          const current = await tx.scim.findGroup(accountId, id);
          if (!current) throw notFound(`Group ${idText} not found`);
          const had = (await tx.scim.membersOf(accountId, [current.name])).get(current.name) ?? [];
          const { memberIds, ...fields } = groupFields(next(groupResource(current, had, base)));
          name = fields.name;
          if (fields.name !== current.name) {
            const clash = await tx.groups.findByName(accountId, fields.name);
            if (clash && clash.id !== id) throw takenGroup(fields.name);
            await tx.groups.renameRadiusRows(accountId, current.name, fields.name);
          }
          const row = await tx.groups.update(accountId, id, { ...fields, updated: isoNow() });
          if (!row) throw notFound(`Group ${idText} not found`);
          const members = await membersFor(tx, accountId, memberIds);
          await tx.scim.setMembers(accountId, row.name, had, members);
          await tx.groups.audit({
            accountId,
            resource: "group",
            id,
            action: "update",
            before: { id, name: current.name, members: had.map((m) => m.username) },
            after: { id, name: row.name, members: members.map((m) => m.username) },
          });
          return groupResource(row, members, base);
        }),
    );
  }
}

/** The users named as members, all of this account; an unknown one fails the whole request. */
async function membersFor(tx: ScimTransaction, accountId: number, ids: number[]) {
  const found = await tx.scim.usersByIds(accountId, ids);
  const missing = ids.filter((id) => !found.some((m) => m.id === id));
  if (missing.length > 0) throw invalidValue(`members: no user ${missing.join(", ")} in this account`);
  return ids.map((id) => found.find((m) => m.id === id) as (typeof found)[number]);
}

const taken = (username: string) => uniqueness(`a user named "${username}" already exists`);
const takenGroup = (name: string) => uniqueness(`a group named "${name}" already exists`);

function notFoundAs(message: string) {
  return (error: unknown) => {
    throw error instanceof NotFoundError ? notFound(message) : error;
  };
}
