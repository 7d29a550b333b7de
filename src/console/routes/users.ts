// Users: search and page through them, create, edit, enable/disable, delete (after a confirmation
// page), and manage each user's RADIUS attributes (radcheck/radreply) and group memberships.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { CHECK_OPERATORS, REPLY_OPERATORS } from "../../core/aaa/values.ts";
import { NotFoundError } from "../../core/shared/errors.ts";
import { USER_STATUSES } from "../../core/users/rules.ts";
import type { User, UserInput } from "../../core/users/service.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { type Form, formOf, positiveId } from "../forms.ts";
import { type FieldErrors, show } from "../views.ts";
import {
  attempt,
  checkChosenPlan,
  idParam,
  PAGE_SIZE,
  pageNumber,
  pagerOf,
  planIdOf,
  queryText,
} from "./common.ts";

interface UserFormValues {
  username: string;
  email: string;
  fullname: string;
  status: string;
  password: string;
  /** A plan's id, or "" for none. */
  plan_id: string;
}

interface AttributeFormValues {
  table: string;
  attribute: string;
  operator: string;
  value: string;
}

interface MembershipFormValues {
  group_id: string;
  priority: string;
}

/** What the user page shows again, with errors, after a form on it failed. */
interface UserPageState {
  values?: UserFormValues;
  errors?: FieldErrors;
  attribute?: AttributeFormValues;
  attributeErrors?: FieldErrors;
  membership?: MembershipFormValues;
  membershipErrors?: FieldErrors;
  status?: number;
}

const GROUP_CHOICES = 1000;
const ATTRIBUTES_SHOWN = 500;

function readUser(form: Form): UserFormValues {
  return {
    username: form.text("username"),
    email: form.text("email"),
    fullname: form.text("fullname"),
    status: form.text("status"),
    password: form.raw("password"),
    plan_id: form.text("plan_id"),
  };
}

function userInput(values: UserFormValues): UserInput {
  return {
    username: values.username,
    email: values.email,
    fullname: values.fullname,
    status: values.status === "" ? undefined : values.status,
    password: values.password === "" ? undefined : values.password,
    plan_id: planIdOf(values.plan_id),
  };
}

function valuesOf(user: User): UserFormValues {
  return { ...user, password: "", plan_id: user.plan_id === null ? "" : String(user.plan_id) };
}

export async function userRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "users" };

  async function userPage(
    request: FastifyRequest,
    reply: FastifyReply,
    user: User,
    state: UserPageState = {},
  ) {
    const { accountId } = sessionOf(request);
    const [attributes, memberships, groups, plans] = await Promise.all([
      core.attributes.listForUser(accountId, user.id, undefined, { page: 1, limit: ATTRIBUTES_SHOWN }),
      core.activity.groupsOfUser(accountId, user.username),
      core.groups.list(accountId, undefined, { page: 1, limit: GROUP_CHOICES }),
      core.plans.names(accountId),
    ]);
    const joined = new Set(memberships.map((m) => m.group_id));
    return show(
      request,
      reply,
      "user",
      { title: user.username, ...section, status: state.status ?? 200 },
      {
        user,
        values: state.values ?? valuesOf(user),
        errors: state.errors ?? {},
        attributes: attributes.data,
        attribute: state.attribute ?? { table: "radreply", attribute: "", operator: ":=", value: "" },
        attributeErrors: state.attributeErrors ?? {},
        checkOperators: CHECK_OPERATORS,
        replyOperators: REPLY_OPERATORS,
        memberships,
        joinable: groups.data.filter((g) => !joined.has(g.id)),
        membership: state.membership ?? { group_id: "", priority: "1" },
        membershipErrors: state.membershipErrors ?? {},
        statuses: USER_STATUSES,
        plans,
      },
    );
  }

  app.get("/users", need("users:read"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const search = queryText(request, "search");
    const statusText = queryText(request, "status");
    const status = (USER_STATUSES as readonly string[]).includes(statusText) ? statusText : "";
    const page = await core.users.list(
      accountId,
      { search: search.slice(0, 100) || undefined, status: status || undefined },
      { page: pageNumber(queryText(request, "page")), limit: PAGE_SIZE },
    );
    const pager = pagerOf(page, "/console/users", { search, status });
    return show(
      request,
      reply,
      "users",
      { title: "Users", ...section },
      { users: page.data, pager, search, status, statuses: USER_STATUSES },
    );
  });

  app.get("/users/new", need("users:write"), async (request, reply) =>
    show(
      request,
      reply,
      "user-new",
      { title: "New user", ...section },
      {
        values: { username: "", email: "", fullname: "", status: "enabled", password: "", plan_id: "" },
        errors: {},
        plans: await core.plans.names(sessionOf(request).accountId),
      },
    ),
  );

  app.post("/users", need("users:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const values = readUser(formOf(request));
    const input = userInput(values);
    const result = await attempt(async () => {
      await checkChosenPlan(core, accountId, input.plan_id ?? null);
      return core.users.create(accountId, input);
    }, "username");
    if ("errors" in result) {
      return show(
        request,
        reply,
        "user-new",
        { title: "New user", ...section, status: 400 },
        {
          values: { ...values, password: "" },
          errors: result.errors,
          plans: await core.plans.names(accountId),
        },
      );
    }
    return reply.redirect(`/console/users/${result.ok.id}?notice=user-created`, 303);
  });

  app.get("/users/:id", need("users:read"), async (request, reply) => {
    const user = await core.users.get(sessionOf(request).accountId, idParam(request));
    return userPage(request, reply, user);
  });

  app.post("/users/:id", need("users:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const user = await core.users.get(accountId, idParam(request));
    const values = readUser(formOf(request));
    const input = userInput(values);
    const result = await attempt(async () => {
      await checkChosenPlan(core, accountId, input.plan_id ?? null);
      return core.users.update(accountId, user.id, input);
    }, "username");
    if ("errors" in result) {
      return userPage(request, reply, user, {
        values: { ...values, password: "" },
        errors: result.errors,
        status: 400,
      });
    }
    return reply.redirect(`/console/users/${user.id}?notice=user-updated`, 303);
  });

  app.post("/users/:id/status", need("users:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    const status = formOf(request).text("status") === "disabled" ? "disabled" : "enabled";
    await core.users.update(accountId, id, { status });
    const back = formOf(request).text("back") === "list" ? "/console/users" : `/console/users/${id}`;
    return reply.redirect(`${back}?notice=user-${status}`, 303);
  });

  app.post("/users/:id/attributes", need("attributes:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const user = await core.users.get(accountId, idParam(request));
    const form = formOf(request);
    const attribute: AttributeFormValues = {
      table: form.text("table"),
      attribute: form.text("attribute"),
      operator: form.text("operator"),
      value: form.raw("value"),
    };
    const result = await attempt(
      () => core.attributes.addToUser(accountId, { userid: user.id, ...attribute }),
      "value",
    );
    if ("errors" in result) {
      return userPage(request, reply, user, { attribute, attributeErrors: result.errors, status: 400 });
    }
    return reply.redirect(`/console/users/${user.id}?notice=attribute-added#attributes`, 303);
  });

  app.post("/users/:id/attributes/delete", need("attributes:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    const form = formOf(request);
    const attributeId = positiveId(form.text("attribute_id")) ?? 0;
    // Only an attribute of the user this page is about (the service checks the account).
    const attribute = await core.attributes.getForUser(accountId, form.text("table"), attributeId);
    if (attribute.userid !== id) throw new NotFoundError(`attribute ${attributeId} is not user ${id}'s`);
    await core.attributes.removeFromUser(accountId, attribute.table, attribute.id);
    return reply.redirect(`/console/users/${id}?notice=attribute-removed#attributes`, 303);
  });

  app.post("/users/:id/groups", need("users:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const user = await core.users.get(accountId, idParam(request));
    const form = formOf(request);
    const membership = { group_id: form.text("group_id"), priority: form.text("priority") };
    const groupId = positiveId(membership.group_id);
    if (groupId === undefined) {
      const membershipErrors = { group_id: "choose a group" };
      return userPage(request, reply, user, { membership, membershipErrors, status: 400 });
    }
    const result = await attempt(
      () =>
        core.groups.addMember(accountId, groupId, { userid: user.id, priority: form.integer("priority") }),
      "group_id",
    );
    if ("errors" in result) {
      return userPage(request, reply, user, { membership, membershipErrors: result.errors, status: 400 });
    }
    return reply.redirect(`/console/users/${user.id}?notice=group-joined#groups`, 303);
  });

  app.post("/users/:id/groups/:groupId/delete", need("users:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    await core.groups.removeMember(accountId, idParam(request, "groupId"), id);
    return reply.redirect(`/console/users/${id}?notice=group-left#groups`, 303);
  });

  app.get("/users/:id/delete", need("users:write"), async (request, reply) => {
    const user = await core.users.get(sessionOf(request).accountId, idParam(request));
    return show(request, reply, "user-delete", { title: `Delete ${user.username}`, ...section }, { user });
  });

  app.post("/users/:id/delete", need("users:write"), async (request, reply) => {
    await core.users.delete(sessionOf(request).accountId, idParam(request));
    return reply.redirect("/console/users?notice=user-deleted", 303);
  });
}
