// rlm_sql's authorize step, over rows already loaded: the user's check and reply items, then
// their groups in priority order with Fall-Through. Pure: the caller loads the rows.
import type { GatewayVendor } from "../networks/rules.ts";
import { withPlan } from "../plans/attributes.ts";
import type { PlanLimits } from "../plans/rules.ts";
import { compareCheckItems, fallThrough, mergePairs, type Pair } from "./pairs.ts";

export interface GroupItems {
  name: string;
  check: Pair[];
  reply: Pair[];
}

export interface SqlUserItems {
  check: Pair[];
  reply: Pair[];
  /** The user's groups, lowest priority number first. */
  groups: GroupItems[];
  /** The user's plan (its own, else its first group's with one): items under the rows' (plans/attributes.ts). */
  plan?: PlanLimits | null | undefined;
}

export interface Authorization {
  /** False when the user is in none of radcheck, radreply, radusergroup (rlm_sql: notfound). */
  found: boolean;
  /** The control list: Cleartext-Password, Auth-Type, Expiration, Simultaneous-Use... */
  control: Pair[];
  reply: Pair[];
}

/** `vendor`: the network's, which picks the attributes of a plan's bandwidth. */
export function authorize(
  request: readonly Pair[],
  items: SqlUserItems,
  vendor: GatewayVendor = "generic",
): Authorization {
  let control: Pair[] = [];
  let reply: Pair[] = [];
  let found = false;
  let fall: "yes" | "no" | "default" = "default";
  const groupNames = items.groups.map((g) => g.name.toLowerCase());
  // SQL-Group == <name> in a check list asks whether the user is in that group.
  const special = (item: Pair) =>
    item.attribute.toLowerCase() === "sql-group" ? groupNames.includes(item.value.toLowerCase()) : undefined;

  let userChecksMatched = true;
  if (items.check.length > 0) {
    found = true;
    userChecksMatched = compareCheckItems(request, items.check, special);
    if (userChecksMatched) control = mergePairs(control, items.check);
  }
  // A user whose own check items fail gets none of its own reply items, but its groups still count.
  if (userChecksMatched && items.reply.length > 0) {
    found = true;
    fall = fallThrough(items.reply);
    reply = mergePairs(reply, items.reply);
  }

  if (fall !== "no" && items.groups.length > 0) {
    found = true;
    for (const group of items.groups) {
      if (group.check.length > 0 && !compareCheckItems(request, group.check, special)) continue;
      control = mergePairs(control, group.check);
      fall = fallThrough(group.reply);
      reply = mergePairs(reply, group.reply);
      if (fall !== "yes") break;
    }
  }
  return withPlan({ found, control, reply }, items.plan ?? null, vendor);
}
