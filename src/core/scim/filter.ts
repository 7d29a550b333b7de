// The part of SCIM's filter grammar (RFC 7644 section 3.4.2.2) Wisp answers: one comparison
// `attribute eq value`. It is what Entra ID and Okta send (userName eq "...", externalId eq "...",
// displayName eq "..." for groups) and what the value paths of PATCH use (members[value eq "..."],
// emails[type eq "work"]). Any other operator, a logical expression or a grouping is refused with
// invalidFilter rather than answered wrongly.
import { invalidFilter } from "./errors.ts";

/** `attribute eq value`; the attribute as written (names are case-insensitive, RFC 7643 section 2.1). */
export interface Comparison {
  attribute: string;
  value: string | number | boolean | null;
}

/** RFC 7644 section 3.4.2.2, figure 2 (compareOp). */
const OPERATORS = new Set(["eq", "ne", "co", "sw", "ew", "pr", "gt", "ge", "lt", "le"]);
/** ATTRNAME with an optional sub-attribute and URN prefix (RFC 7644 section 3.4.2.2, figure 1). */
const ATTRIBUTE = /^(?:urn:[A-Za-z0-9:._-]+:)?[A-Za-z][\w$-]*(?:\.[A-Za-z][\w$-]*)?$/;
const MAX_FILTER = 1000;

/** Parses `attribute eq value`, or throws invalidFilter naming what is not supported. */
export function parseComparison(text: string): Comparison {
  if (text.length > MAX_FILTER) throw invalidFilter(`the filter is longer than ${MAX_FILTER} characters`);
  const match = /^\s*(\S+)\s+(\S+)(?:\s+(.*?))?\s*$/s.exec(text);
  if (!match) throw invalidFilter(`the filter "${text}" is not "attribute eq value"`);
  const [, attribute = "", operator = "", rest] = match;
  if (!ATTRIBUTE.test(attribute)) throw invalidFilter(`"${attribute}" is not an attribute name`);
  const op = operator.toLowerCase();
  if (!OPERATORS.has(op)) throw invalidFilter(`"${operator}" is not a SCIM comparison operator`);
  if (op !== "eq") throw invalidFilter(`only the eq operator is supported, not ${op}`);
  if (rest === undefined) throw invalidFilter("eq needs a value");
  return { attribute, value: parseValue(rest) };
}

/** compValue: false / null / true / number / string (JSON's, RFC 7644 section 3.4.2.2). */
function parseValue(text: string): Comparison["value"] {
  const lowered = text.toLowerCase();
  if (lowered === "true") return true;
  if (lowered === "false") return false;
  if (lowered === "null") return null;
  if (text.startsWith('"')) {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === "string") return value;
    } catch {
      // refused below
    }
    throw invalidFilter(`${text} is not one JSON string (logical operators are not supported)`);
  }
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text)) return Number(text);
  throw invalidFilter(`${text} is not a value (a JSON string, number, true, false or null)`);
}
