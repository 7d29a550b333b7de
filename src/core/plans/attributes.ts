// A plan as the items the login decision already enforces (decide.ts, quotas.ts), merged under the
// user's and groups' own rows: a plan is a default, never an override.
//   time quota  day -> Max-Daily-Session, month -> Max-Monthly-Session (rlm_sqlcounter),
//               validity -> Max-All-Session (noresetcounter)
//   data quota  day / month / validity -> Wisp-Max-Daily- / -Monthly- / -All-Octets (dictionary.wisp)
//   validity    Expire-After (rlm_sqlcounter expire_on_login: seconds from the first session)
//   devices     Simultaneous-Use
//   bandwidth   the vendor's reply attributes (bandwidth.ts)
import type { Authorization } from "../aaa/authorize.ts";
import type { Pair } from "../aaa/pairs.ts";
import type { GatewayVendor } from "../networks/rules.ts";
import { bandwidthReply } from "./bandwidth.ts";
import type { PlanLimits, PlanPeriod } from "./rules.ts";

const TIME: Record<PlanPeriod, string> = {
  day: "Max-Daily-Session",
  month: "Max-Monthly-Session",
  validity: "Max-All-Session",
};
const DATA: Record<PlanPeriod, string> = {
  day: "Wisp-Max-Daily-Octets",
  month: "Wisp-Max-Monthly-Octets",
  validity: "Wisp-Max-All-Octets",
};

const item = (attribute: string, value: number): Pair => ({ attribute, op: ":=", value: String(value) });

/** The control (check) items of a plan. */
export function planControl(plan: PlanLimits): Pair[] {
  const control: Pair[] = [];
  if (plan.time_quota !== null && plan.time_period)
    control.push(item(TIME[plan.time_period], plan.time_quota));
  if (plan.data_quota !== null && plan.data_period)
    control.push(item(DATA[plan.data_period], plan.data_quota));
  if (plan.validity !== null) control.push(item("Expire-After", plan.validity));
  if (plan.devices !== null) control.push(item("Simultaneous-Use", plan.devices));
  return control;
}

/** The reply items of a plan on a network of `vendor`. */
export function planReply(plan: PlanLimits, vendor: GatewayVendor): Pair[] {
  return bandwidthReply(vendor, plan);
}

/** `extra` added to `list` where the list has no item of the same attribute (the list wins). */
function under(list: Pair[], extra: readonly Pair[]): Pair[] {
  const present = new Set(list.map((p) => p.attribute.toLowerCase()));
  const added = extra.filter((p) => !present.has(p.attribute.toLowerCase()));
  return added.length === 0 ? list : [...list, ...added];
}

/**
 * The authorization with the plan's items added where the user's and groups' rows set none of the
 * same attribute: a user's own radcheck/radreply rows win, then its groups', then the plan's.
 * `found` is unchanged: a plan alone makes no one a user.
 */
export function withPlan(
  authz: Authorization,
  plan: PlanLimits | null,
  vendor: GatewayVendor,
): Authorization {
  if (!plan) return authz;
  return {
    ...authz,
    control: under(authz.control, planControl(plan)),
    reply: under(authz.reply, planReply(plan, vendor)),
  };
}
