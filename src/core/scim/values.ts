// Reading attribute values from outside against their definitions (schema.ts): canonical names
// (names are case-insensitive, RFC 7643 section 2.1), the JSON type each must have, Wisp's limits.
// Attributes no schema Wisp serves defines (phoneNumbers, addresses, the enterprise extension and
// any vendor's) are dropped: Entra ID and Okta send them by default, and Wisp keeps none of them.
import { hasControlCharacters } from "../shared/text.ts";
import { invalidValue } from "./errors.ts";
import { type Attribute, COMMON_ATTRIBUTES, findAttribute } from "./schema.ts";

export type ScimObject = Record<string, unknown>;

export function isObject(value: unknown): value is ScimObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const MAX_VALUES = 100;

/**
 * One value of the attribute, as Wisp keeps it; undefined for null (the attribute unassigned,
 * RFC 7644 section 3.5.1). Entra ID sends booleans as the strings "True" and "False" (Microsoft:
 * "Known issues and resolutions with SCIM 2.0 protocol compliance"): those are read as booleans.
 */
export function coerce(attr: Attribute, value: unknown, where = attr.name): unknown {
  if (value === null || value === undefined) return undefined;
  if (attr.multiValued) {
    if (!Array.isArray(value)) throw invalidValue(`${where} must be an array`);
    const limit = attr.maxValues ?? MAX_VALUES;
    if (value.length > limit) throw invalidValue(`${where} has more than ${limit} values`);
    const single = { ...attr, multiValued: false };
    return value.map((v, i) => coerce(single, v, `${where}[${i}]`)).filter((v) => v !== undefined);
  }
  switch (attr.type) {
    case "complex":
      if (!isObject(value)) throw invalidValue(`${where} must be an object`);
      return coerceObject(attr.subAttributes ?? [], value, where);
    case "boolean":
      if (typeof value === "boolean") return value;
      if (typeof value === "string" && /^(true|false)$/i.test(value)) return value.toLowerCase() === "true";
      throw invalidValue(`${where} must be true or false`);
    default:
      return coerceString(attr, value, where);
  }
}

function coerceString(attr: Attribute, value: unknown, where: string): string {
  if (typeof value !== "string") throw invalidValue(`${where} must be a string`);
  const limit = attr.maxLength ?? 255;
  if (value.length > limit) throw invalidValue(`${where} must be at most ${limit} characters`);
  if (hasControlCharacters(value)) throw invalidValue(`${where} must not contain control characters`);
  return value;
}

/** The known sub-attributes of a complex value, by their canonical names; the others dropped. */
function coerceObject(subAttributes: Attribute[], value: ScimObject, where: string): ScimObject {
  const out: ScimObject = {};
  for (const [key, raw] of Object.entries(value)) {
    const sub = findAttribute(subAttributes, key);
    if (!sub) continue;
    const coerced = coerce(sub, raw, `${where}.${sub.name}`);
    if (coerced !== undefined) out[sub.name] = coerced;
  }
  return out;
}

/**
 * A POST or PUT body as a resource of the schema: its attributes by canonical name, externalId
 * beside them. The read-only ones (id, meta, groups) are ignored, as RFC 7644 section 3.5.1 says
 * for PUT; attributes no schema here defines are dropped (see the opening comment).
 */
export function readResource(attributes: readonly Attribute[], body: ScimObject): ScimObject {
  const out: ScimObject = {};
  for (const [key, raw] of Object.entries(body)) {
    const attr = findAttribute(attributes, key) ?? findAttribute(COMMON_ATTRIBUTES, key);
    if (!attr || attr.mutability === "readOnly") continue;
    const value = coerce(attr, raw);
    if (value !== undefined) out[attr.name] = value;
  }
  return out;
}

/** The schemas a body must name (RFC 7643 section 3: "schemas" is REQUIRED). */
export function requireSchema(body: ScimObject, schema: string): void {
  const schemas = body.schemas;
  if (
    !Array.isArray(schemas) ||
    !schemas.some((s) => typeof s === "string" && s.toLowerCase() === schema.toLowerCase())
  ) {
    throw invalidValue(`schemas must include "${schema}"`);
  }
}
