// Groups: named sets of users sharing check and reply attributes. FreeRADIUS evaluates a user's
// groups by priority (lowest first); the group's attributes are managed by AttributesService.
import { isUniqueViolation } from "../../db/database.ts";
import { checkUsername } from "../aaa/values.ts";
import { planIdProblem, unknownPlan } from "../plans/repo.ts";
import { ConflictError, type FieldProblem, NotFoundError, ValidationError } from "../shared/errors.ts";
import type { Page, PageRequest } from "../shared/pages.ts";
import { parseSort } from "../shared/sort.ts";
import { hasControlCharacters } from "../shared/text.ts";
import { isoNow } from "../shared/time.ts";
import type { GroupChanges, GroupRow, GroupsRepo, MemberRow } from "./repo.ts";
import {
  DEFAULT_PRIORITY,
  GROUP_SORT_FIELDS,
  MAX_DESCRIPTION,
  MAX_PRIORITY,
  MEMBER_SORT_FIELDS,
  MIN_PRIORITY,
} from "./rules.ts";

export interface Group {
  id: number;
  name: string;
  description: string;
  created: string;
  updated: string;
  /** The members' plan when they have none of their own (core/plans); null: none. */
  plan_id: number | null;
}

export interface GroupInput {
  name?: string | undefined;
  description?: string | undefined;
  plan_id?: number | null | undefined;
}

export interface Membership {
  group_id: number;
  userid: number;
  username: string;
  priority: number;
}

export interface MembershipInput {
  userid: number;
  priority?: number | undefined;
}

/** The rules every door's group input passes (the API, the console, the CLI, SCIM). */
export function checkGroupInput(input: GroupInput): void {
  const problems: FieldProblem[] = [];
  const nameProblem = input.name === undefined ? null : checkUsername(input.name);
  if (nameProblem) problems.push({ field: "name", message: nameProblem });
  if (
    input.description !== undefined &&
    (input.description.length > MAX_DESCRIPTION || hasControlCharacters(input.description))
  ) {
    problems.push({
      field: "description",
      message: `must be at most ${MAX_DESCRIPTION} characters without control characters`,
    });
  }
  const badPlan = planIdProblem(input.plan_id);
  if (badPlan) problems.push({ field: "plan_id", message: badPlan });
  const first = problems[0];
  if (first) throw new ValidationError(`${first.field} ${first.message}`, problems);
}

/** The plan a group names must be this account's: another account's reads as none (404). */
async function checkPlan(repo: GroupsRepo, accountId: number, planId: number | null | undefined) {
  if (planId !== undefined && planId !== null && !(await repo.planExists(accountId, planId))) {
    throw unknownPlan(planId);
  }
}

function checkPriority(priority: number): void {
  if (!Number.isInteger(priority) || priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
    throw ValidationError.field("priority", `must be a whole number from ${MIN_PRIORITY} to ${MAX_PRIORITY}`);
  }
}

function present(row: GroupRow): Group {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    created: row.created,
    updated: row.updated,
    plan_id: row.plan_id === null || row.plan_id === undefined ? null : Number(row.plan_id),
  };
}

function membership(groupId: number, row: MemberRow): Membership {
  return { group_id: groupId, userid: row.userid, username: row.username, priority: row.priority };
}

const duplicate = (name: string) => new ConflictError(`a group named "${name}" already exists`);
const groupNotFound = (id: number) => new NotFoundError(`group ${id} not found`);
const userNotFound = (id: number) => new NotFoundError(`user ${id} not found`);
const notMember = (userId: number, groupId: number) =>
  new NotFoundError(`user ${userId} is not a member of group ${groupId}`);

export class GroupsService {
  constructor(private readonly repo: GroupsRepo) {}

  /** `sort`: a field of GROUP_SORT_FIELDS, "-" first for descending; by id by default. */
  async list(
    accountId: number,
    search: string | undefined,
    page: PageRequest,
    sort?: string,
  ): Promise<Page<Group>> {
    const order = parseSort(sort, GROUP_SORT_FIELDS);
    const { rows, total } = await this.repo.list(accountId, search, page, order);
    return { data: rows.map(present), page: page.page, total, limit: page.limit };
  }

  async get(accountId: number, id: number): Promise<Group> {
    const row = await this.repo.findById(accountId, id);
    if (!row) throw groupNotFound(id);
    return present(row);
  }

  async create(accountId: number, input: GroupInput): Promise<Group> {
    if (input.name === undefined) throw ValidationError.field("name", "is required");
    checkGroupInput(input);
    const name = input.name;
    const now = isoNow();
    try {
      return await this.repo.transaction(async (repo) => {
        if (await repo.findByName(accountId, name)) throw duplicate(name);
        await checkPlan(repo, accountId, input.plan_id);
        const row = await repo.insert({
          account_id: accountId,
          name,
          description: input.description ?? "",
          plan_id: input.plan_id ?? null,
          created: now,
          updated: now,
        });
        const group = present(row);
        await repo.audit({ accountId, resource: "group", id: group.id, action: "create", after: group });
        return group;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicate(name);
      throw error;
    }
  }

  /** Partial update: only the fields given change. A rename carries the FreeRADIUS rows along. */
  async update(accountId: number, id: number, input: GroupInput): Promise<Group> {
    checkGroupInput(input);
    try {
      return await this.repo.transaction(async (repo) => {
        const current = await repo.findById(accountId, id);
        if (!current) throw groupNotFound(id);
        const changes: GroupChanges = { updated: isoNow() };
        if (input.name !== undefined && input.name !== current.name) {
          const clash = await repo.findByName(accountId, input.name);
          if (clash && clash.id !== id) throw duplicate(input.name);
          changes.name = input.name;
          await repo.renameRadiusRows(accountId, current.name, input.name);
        }
        if (input.description !== undefined) changes.description = input.description;
        if (input.plan_id !== undefined) {
          await checkPlan(repo, accountId, input.plan_id);
          changes.plan_id = input.plan_id;
        }
        const row = await repo.update(accountId, id, changes);
        if (!row) throw groupNotFound(id);
        // A new plan reaches the members' open sessions by CoA (core/sessions/reauthorize.ts).
        if (input.plan_id !== undefined && input.plan_id !== (current.plan_id ?? null)) {
          await repo.pushToGroup(accountId, row.name, "group plan changed");
        }
        const group = present(row);
        await repo.audit({
          accountId,
          resource: "group",
          id,
          action: "update",
          before: present(current),
          after: group,
        });
        return group;
      });
    } catch (error) {
      if (isUniqueViolation(error) && input.name !== undefined) throw duplicate(input.name);
      throw error;
    }
  }

  /** Deletes the group with its memberships and attributes; its users stay. */
  async delete(accountId: number, id: number): Promise<void> {
    await this.repo.transaction(async (repo) => {
      const current = await repo.findById(accountId, id);
      if (!current) throw groupNotFound(id);
      await repo.deleteRadiusRows(accountId, current.name);
      await repo.delete(accountId, id);
      await repo.audit({ accountId, resource: "group", id, action: "delete", before: present(current) });
    });
  }

  /** `sort`: a field of MEMBER_SORT_FIELDS, "-" first for descending; by priority, then username by default. */
  async listMembers(
    accountId: number,
    groupId: number,
    page: PageRequest,
    sort?: string,
  ): Promise<Page<Membership>> {
    const order = parseSort(sort, MEMBER_SORT_FIELDS);
    const group = await this.repo.findById(accountId, groupId);
    if (!group) throw groupNotFound(groupId);
    const { rows, total } = await this.repo.listMembers(accountId, group.name, page, order);
    return {
      data: rows.map((row) => membership(group.id, row)),
      page: page.page,
      total,
      limit: page.limit,
    };
  }

  async getMember(accountId: number, groupId: number, userId: number): Promise<Membership> {
    const group = await this.repo.findById(accountId, groupId);
    if (!group) throw groupNotFound(groupId);
    const row = await this.repo.findMember(accountId, group.name, userId);
    if (!row) throw notMember(userId, groupId);
    return membership(group.id, row);
  }

  async addMember(accountId: number, groupId: number, input: MembershipInput): Promise<Membership> {
    const priority = input.priority ?? DEFAULT_PRIORITY;
    checkPriority(priority);
    const already = () => new ConflictError(`user ${input.userid} is already a member of group ${groupId}`);
    try {
      return await this.repo.transaction(async (repo) => {
        const group = await repo.findById(accountId, groupId);
        if (!group) throw groupNotFound(groupId);
        const user = await repo.findUser(accountId, input.userid);
        if (!user) throw userNotFound(input.userid);
        if (await repo.findMember(accountId, group.name, user.id)) throw already();
        await repo.insertMember(accountId, group.name, user.username, priority);
        await repo.pushToSessions(accountId, [user.username], `joined group ${group.name}`);
        const member = { group_id: group.id, userid: user.id, username: user.username, priority };
        await repo.audit({
          accountId,
          resource: "group_member",
          id: `${group.id}/${user.id}`,
          action: "create",
          after: member,
        });
        return member;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw already();
      throw error;
    }
  }

  async removeMember(accountId: number, groupId: number, userId: number): Promise<void> {
    await this.repo.transaction(async (repo) => {
      const group = await repo.findById(accountId, groupId);
      if (!group) throw groupNotFound(groupId);
      const user = await repo.findUser(accountId, userId);
      if (!user) throw userNotFound(userId);
      if (!(await repo.deleteMember(accountId, group.name, user.username))) throw notMember(userId, groupId);
      const before = { group_id: group.id, userid: user.id, username: user.username };
      await repo.audit({
        accountId,
        resource: "group_member",
        id: `${group.id}/${user.id}`,
        action: "delete",
        before,
      });
      await repo.pushToSessions(accountId, [user.username], `left group ${group.name}`);
    });
  }
}
