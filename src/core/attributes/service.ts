// Check and reply attributes of users (radcheck, radreply) and of groups (radgroupcheck,
// radgroupreply): what FreeRADIUS compares a request with and what it answers. Both kinds go
// through the same rules (rules.ts) and the same repository.
import { isCoaAttribute } from "../sessions/jobs.ts";
import { ConflictError, NotFoundError, ValidationError } from "../shared/errors.ts";
import type { Page, PageRequest } from "../shared/pages.ts";
import { parseSort } from "../shared/sort.ts";
import type { AttributeRow, AttributesRepo, Owner } from "./repo.ts";
import {
  ATTRIBUTE_SORT_FIELDS,
  type AttributeTable,
  checkItem,
  GROUP_TABLES,
  type GroupTable,
  type ItemInput,
  presentValue,
  USER_TABLES,
  type UserTable,
} from "./rules.ts";

export interface UserAttribute {
  id: number;
  userid: number;
  attribute: string;
  operator: string;
  value: string;
  table: UserTable;
}

export interface GroupAttribute {
  id: number;
  group_id: number;
  attribute: string;
  operator: string;
  value: string;
  table: GroupTable;
}

export interface UserAttributeInput extends ItemInput {
  userid: number;
  table: string;
}

export interface GroupAttributeInput extends ItemInput {
  table: string;
}

/** The tables an owner's list covers: the one asked for, or both (check first). */
function tablesOf<T extends AttributeTable>(all: readonly T[], table: string | undefined): readonly T[] {
  if (table === undefined) return all;
  const found = all.find((t) => t === table);
  if (!found) throw ValidationError.field("table", `must be one of ${all.join(", ")}`);
  return [found];
}

function oneTable<T extends AttributeTable>(all: readonly T[], table: string): T {
  const [found] = tablesOf(all, table);
  return found as T;
}

/** Secrets never leave: password-type values read as the mask. */
function item(row: AttributeRow) {
  return {
    id: row.id,
    attribute: row.attribute,
    operator: row.op,
    value: presentValue(row.attribute, row.value),
  };
}

function userItem(row: AttributeRow, userid: number): UserAttribute {
  return { ...item(row), userid, table: row.table as UserTable };
}

function groupItem(row: AttributeRow, groupId: number): GroupAttribute {
  return { ...item(row), group_id: groupId, table: row.table as GroupTable };
}

const userNotFound = (id: number) => new NotFoundError(`user ${id} not found`);
const groupNotFound = (id: number) => new NotFoundError(`group ${id} not found`);
const attributeNotFound = (id: number, table: string) =>
  new NotFoundError(`attribute ${id} not found in ${table}`);
const duplicate = (table: string) =>
  new ConflictError(`the same attribute, operator and value is already in ${table}`);

/** A row counts as a user attribute only while a user of the account carries its username. */
async function userAttribute(
  repo: AttributesRepo,
  accountId: number,
  table: UserTable,
  id: number,
): Promise<UserAttribute> {
  const row = await repo.find(accountId, table, id);
  const user = row && (await repo.findUserByExactName(accountId, row.owner));
  if (!row || !user) throw attributeNotFound(id, table);
  return userItem(row, user.id);
}

/** Group attribute ids are looked up within the group of the path, like any nested resource. */
async function groupAttribute(
  repo: AttributesRepo,
  accountId: number,
  groupId: number,
  table: GroupTable,
  id: number,
): Promise<GroupAttribute> {
  const group = await repo.findGroup(accountId, groupId);
  if (!group) throw groupNotFound(groupId);
  const row = await repo.find(accountId, table, id);
  if (!row || row.owner !== group.name) throw attributeNotFound(id, table);
  return groupItem(row, group.id);
}

export class AttributesService {
  constructor(private readonly repo: AttributesRepo) {}

  /** `sort`: a field of ATTRIBUTE_SORT_FIELDS, "-" first for descending; by table, then id by default. */
  async listForUser(
    accountId: number,
    userId: number,
    table: string | undefined,
    page: PageRequest,
    sort?: string,
  ): Promise<Page<UserAttribute>> {
    const tables = tablesOf(USER_TABLES, table);
    const order = parseSort(sort, ATTRIBUTE_SORT_FIELDS);
    const user = await this.repo.findUser(accountId, userId);
    if (!user) throw userNotFound(userId);
    const owner: Owner = { kind: "user", name: user.username };
    const { rows, total } = await this.repo.list(accountId, owner, tables, page, order);
    return { data: rows.map((row) => userItem(row, user.id)), page: page.page, total, limit: page.limit };
  }

  async getForUser(accountId: number, table: string, id: number): Promise<UserAttribute> {
    return userAttribute(this.repo, accountId, oneTable(USER_TABLES, table), id);
  }

  async addToUser(accountId: number, input: UserAttributeInput): Promise<UserAttribute> {
    const table = oneTable(USER_TABLES, input.table);
    const stored = checkItem(table, input);
    return this.repo.transaction(async (repo) => {
      const user = await repo.findUser(accountId, input.userid);
      if (!user) throw userNotFound(input.userid);
      const owner: Owner = { kind: "user", name: user.username };
      if (await repo.hasSame(accountId, table, owner, stored)) throw duplicate(table);
      const item = userItem(await repo.insert(accountId, table, owner, stored), user.id);
      // A live user's new limit reaches their sessions now (CoA-Request), not at the next login.
      if (table === "radreply" && isCoaAttribute(stored.attribute))
        await repo.pushToSessions(accountId, { usernames: [user.username] }, "reply items changed");
      await repo.audit({
        accountId,
        resource: "user_attribute",
        id: `${table}/${item.id}`,
        action: "create",
        after: item,
      });
      return item;
    });
  }

  async removeFromUser(accountId: number, table: string, id: number): Promise<void> {
    const name = oneTable(USER_TABLES, table);
    await this.repo.transaction(async (repo) => {
      const item = await userAttribute(repo, accountId, name, id);
      await repo.delete(accountId, name, id);
      await repo.audit({
        accountId,
        resource: "user_attribute",
        id: `${name}/${id}`,
        action: "delete",
        before: item,
      });
      if (name === "radreply" && isCoaAttribute(item.attribute)) {
        const user = await repo.findUser(accountId, item.userid);
        if (user) await repo.pushToSessions(accountId, { usernames: [user.username] }, "reply items changed");
      }
    });
  }

  /** `sort` as in listForUser. */
  async listForGroup(
    accountId: number,
    groupId: number,
    table: string | undefined,
    page: PageRequest,
    sort?: string,
  ): Promise<Page<GroupAttribute>> {
    const tables = tablesOf(GROUP_TABLES, table);
    const order = parseSort(sort, ATTRIBUTE_SORT_FIELDS);
    const group = await this.repo.findGroup(accountId, groupId);
    if (!group) throw groupNotFound(groupId);
    const owner: Owner = { kind: "group", name: group.name };
    const { rows, total } = await this.repo.list(accountId, owner, tables, page, order);
    return { data: rows.map((row) => groupItem(row, group.id)), page: page.page, total, limit: page.limit };
  }

  async getForGroup(accountId: number, groupId: number, table: string, id: number): Promise<GroupAttribute> {
    return groupAttribute(this.repo, accountId, groupId, oneTable(GROUP_TABLES, table), id);
  }

  async addToGroup(accountId: number, groupId: number, input: GroupAttributeInput): Promise<GroupAttribute> {
    const table = oneTable(GROUP_TABLES, input.table);
    const stored = checkItem(table, input);
    return this.repo.transaction(async (repo) => {
      const group = await repo.findGroup(accountId, groupId);
      if (!group) throw groupNotFound(groupId);
      const owner: Owner = { kind: "group", name: group.name };
      if (await repo.hasSame(accountId, table, owner, stored)) throw duplicate(table);
      const item = groupItem(await repo.insert(accountId, table, owner, stored), group.id);
      await repo.audit({
        accountId,
        resource: "group_attribute",
        id: `${table}/${item.id}`,
        action: "create",
        after: item,
      });
      // The members' live sessions get the group's new limit too.
      if (table === "radgroupreply" && isCoaAttribute(stored.attribute))
        await repo.pushToSessions(accountId, { group: group.name }, "group reply items changed");
      return item;
    });
  }

  async removeFromGroup(accountId: number, groupId: number, table: string, id: number): Promise<void> {
    const name = oneTable(GROUP_TABLES, table);
    await this.repo.transaction(async (repo) => {
      const item = await groupAttribute(repo, accountId, groupId, name, id);
      await repo.delete(accountId, name, id);
      await repo.audit({
        accountId,
        resource: "group_attribute",
        id: `${name}/${id}`,
        action: "delete",
        before: item,
      });
      if (name === "radgroupreply" && isCoaAttribute(item.attribute)) {
        const group = await repo.findGroup(accountId, groupId);
        if (group) await repo.pushToSessions(accountId, { group: group.name }, "group reply items changed");
      }
    });
  }
}
