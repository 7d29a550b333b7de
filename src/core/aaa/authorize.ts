// rlm_sql's authorize step, over rows already loaded: the user's check and reply items, then
// their groups in priority order with Fall-Through. Pure: the caller loads the rows.
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
}

export interface Authorization {
  /** False when the user is in none of radcheck, radreply, radusergroup (rlm_sql: notfound). */
  found: boolean;
  /** The control list: Cleartext-Password, Auth-Type, Expiration, Simultaneous-Use... */
  control: Pair[];
  reply: Pair[];
}

export function authorize(request: readonly Pair[], items: SqlUserItems): Authorization {
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
  return { found, control, reply };
}
