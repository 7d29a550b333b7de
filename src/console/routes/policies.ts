// Policies: the account's rules in evaluation order with move up/down, a form for a rule's
// conditions and outcome (new and edit), the default rule's outcome, and an explain form that
// shows which rule a request would meet and why. Every rule is the service's (src/core/policies).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ExplainFacts, Explanation } from "../../core/policies/explain.ts";
import { CONDITION_KEYS, type PolicyConditions, type PolicyOutcome } from "../../core/policies/rules.ts";
import type { Policy, PolicyInput } from "../../core/policies/service.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { type Form, formOf } from "../forms.ts";
import { type FieldErrors, show } from "../views.ts";
import { attempt, idParam } from "./common.ts";

const OUTCOME_FIELDS = [
  "reason",
  "vlan",
  "filter_id",
  "aruba_user_role",
  "airespace_acl_name",
  "plan_id",
  "session_timeout",
  "idle_timeout",
] as const;
const FIELDS = [
  "name",
  "description",
  "action",
  "cisco_avpairs",
  ...CONDITION_KEYS,
  ...OUTCOME_FIELDS,
] as const;
type Values = Record<(typeof FIELDS)[number], string>;
const EXPLAIN_FIELDS = [
  "network_id",
  "username",
  "ssid",
  "nas_identifier",
  "method",
  "portal_method",
  "time",
  "mac",
] as const;
type ExplainValues = Record<(typeof EXPLAIN_FIELDS)[number], string>;

const blank = (): Values =>
  Object.fromEntries(FIELDS.map((f) => [f, f === "action" ? "accept" : ""])) as Values;
const split = (text: string, by: RegExp = /,/) =>
  text
    .split(by)
    .map((v) => v.trim())
    .filter((v) => v !== "");
/** Digits become numbers; anything else goes to the service, which names the field. */
const num = (v: string) => (/^\d+$/.test(v) ? Number(v) : v);

function inputOf(v: Values): PolicyInput {
  const conditions: Record<string, unknown> = {};
  for (const key of CONDITION_KEYS) {
    if (v[key] === "") continue;
    conditions[key] =
      key === "device"
        ? v[key]
        : key === "networks" || key === "groups"
          ? split(v[key]).map(num)
          : split(v[key]);
  }
  const outcome: Record<string, unknown> = { action: v.action };
  for (const key of OUTCOME_FIELDS)
    if (v[key] !== "")
      outcome[key] = ["vlan", "plan_id", "session_timeout", "idle_timeout"].includes(key)
        ? num(v[key])
        : v[key];
  if (v.cisco_avpairs !== "") outcome.cisco_avpairs = split(v.cisco_avpairs, /\r?\n/);
  return { name: v.name, description: v.description, conditions, outcome };
}

function valuesOf(p: Policy): Values {
  const v = blank();
  v.name = p.name;
  v.description = p.description;
  const c = p.conditions as Record<string, unknown>;
  for (const key of CONDITION_KEYS) if (c[key] !== undefined) v[key] = [c[key]].flat().join(", ");
  const o = p.outcome as unknown as Record<string, unknown>;
  v.action = p.outcome.action;
  for (const key of OUTCOME_FIELDS) if (o[key] !== undefined) v[key] = String(o[key]);
  v.cisco_avpairs = (p.outcome.cisco_avpairs ?? []).join("\n");
  return v;
}

/** A rule's conditions and outcome in a few words, for the list. */
export function summary(
  conditions: PolicyConditions,
  outcome: PolicyOutcome,
): { when: string; then: string } {
  const c = conditions as Record<string, unknown>;
  const when = CONDITION_KEYS.filter((k) => c[k] !== undefined).map(
    (k) => `${k}: ${[c[k]].flat().join(", ")}`,
  );
  const o = outcome as unknown as Record<string, unknown>;
  const then =
    outcome.action === "reject"
      ? `reject: ${outcome.reason}`
      : [
          "accept",
          ...Object.keys(o)
            .filter((k) => k !== "action")
            .map((k) => `${k} ${[o[k]].flat().join(", ")}`),
        ].join("; ");
  return { when: when.join("; ") || "every request", then };
}

export async function policyRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "policies" };
  const networks = async (accountId: number) => core.networks.listAll(accountId);

  async function listPage(
    request: FastifyRequest,
    reply: FastifyReply,
    state: {
      values?: Values;
      errors?: FieldErrors;
      explain?: ExplainValues;
      explanation?: Explanation;
      explainErrors?: FieldErrors;
      status?: number;
    } = {},
  ) {
    const { accountId } = sessionOf(request);
    const list = await core.policies.list(accountId);
    return show(
      request,
      reply,
      "policies",
      { title: "Policies", ...section, status: state.status ?? 200 },
      {
        list,
        summary,
        values: state.values ?? blank(),
        errors: state.errors ?? {},
        explain: state.explain ?? (Object.fromEntries(EXPLAIN_FIELDS.map((f) => [f, ""])) as ExplainValues),
        explanation: state.explanation ?? null,
        explainErrors: state.explainErrors ?? {},
        networks: await networks(accountId),
      },
    );
  }

  const readValues = (form: Form) => Object.fromEntries(FIELDS.map((f) => [f, form.text(f)])) as Values;

  app.get("/policies", need("policies:read"), (request, reply) => listPage(request, reply));

  app.post("/policies", need("policies:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const values = readValues(formOf(request));
    const result = await attempt(() => core.policies.create(accountId, inputOf(values)), "name");
    if ("errors" in result) return listPage(request, reply, { values, errors: result.errors, status: 400 });
    return reply.redirect("/console/policies?notice=policy-created", 303);
  });

  app.post("/policies/explain", need("policies:read"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const form = formOf(request);
    const explain = Object.fromEntries(EXPLAIN_FIELDS.map((f) => [f, form.text(f)])) as ExplainValues;
    const facts: ExplainFacts = { ...explain, network_id: Number(explain.network_id) };
    const result = await attempt(() => core.policies.explain(accountId, facts), "network_id");
    if ("errors" in result)
      return listPage(request, reply, { explain, explainErrors: result.errors, status: 400 });
    return listPage(request, reply, { explain, explanation: result.ok });
  });

  app.post("/policies/default", need("policies:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const form = formOf(request);
    const values = {
      ...blank(),
      action: form.text("action"),
      reason: form.text("reason"),
      vlan: form.text("vlan"),
    };
    const zone = form.text("time_zone");
    const result = await attempt(() =>
      core.policies.setDefault(accountId, {
        outcome: inputOf(values).outcome,
        time_zone: zone === "" ? null : zone,
      }),
    );
    if ("errors" in result) return listPage(request, reply, { errors: result.errors, status: 400 });
    return reply.redirect("/console/policies?notice=policy-updated", 303);
  });

  app.post("/policies/:id/move", need("policies:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    const policy = await core.policies.get(accountId, id);
    const up = formOf(request).text("direction") === "up";
    const count = (await core.policies.list(accountId)).total;
    const position = Math.min(count, Math.max(1, policy.position + (up ? -1 : 1)));
    await core.policies.move(accountId, id, position);
    return reply.redirect("/console/policies", 303);
  });

  async function editPage(
    request: FastifyRequest,
    reply: FastifyReply,
    id: number,
    state: { values?: Values; errors?: FieldErrors; status?: number } = {},
  ) {
    const policy = await core.policies.get(sessionOf(request).accountId, id);
    return show(
      request,
      reply,
      "policy",
      { title: policy.name, ...section, status: state.status ?? 200 },
      {
        policy,
        values: state.values ?? valuesOf(policy),
        errors: state.errors ?? {},
      },
    );
  }

  app.get("/policies/:id", need("policies:read"), (request, reply) =>
    editPage(request, reply, idParam(request)),
  );

  app.post("/policies/:id", need("policies:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    const values = readValues(formOf(request));
    const result = await attempt(() => core.policies.update(accountId, id, inputOf(values)), "name");
    if ("errors" in result)
      return editPage(request, reply, id, { values, errors: result.errors, status: 400 });
    return reply.redirect(`/console/policies/${id}?notice=policy-updated`, 303);
  });

  app.post("/policies/:id/delete", need("policies:write"), async (request, reply) => {
    await core.policies.delete(sessionOf(request).accountId, idParam(request));
    return reply.redirect("/console/policies?notice=policy-deleted", 303);
  });
}
