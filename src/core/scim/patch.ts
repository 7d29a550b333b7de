// PATCH (RFC 7644 section 3.5.2): add, replace and remove operations, with a path or without one,
// applied to a copy of the resource; the caller validates and writes the result in one
// transaction, so a request is applied whole or not at all. Paths are `attr`, `attr.sub`,
// `attr[filter]` and `attr[filter].sub` (section 3.5.2, figure 3 "PATH"), optionally prefixed by the
// schema URN, with the filters Entra ID and Okta send (members[value eq "..."],
// emails[type eq "work"].value). Entra's capitalised "Replace"/"Add"/"Remove" are read as the
// RFC's operations (Microsoft: "Known issues and resolutions with SCIM 2.0 protocol compliance").
import { invalidPath, invalidSyntax, invalidValue, mutability, noTarget } from "./errors.ts";
import { type Comparison, parseComparison } from "./filter.ts";
import { type Attribute, COMMON_ATTRIBUTES, findAttribute, PATCH_SCHEMA } from "./schema.ts";
import { coerce, isObject, requireSchema, type ScimObject } from "./values.ts";

export type OperationName = "add" | "replace" | "remove";

export interface Operation {
  op: OperationName;
  path: string | undefined;
  value: unknown;
}

/** What a path names: an attribute, maybe a value filter and a sub-attribute. */
interface Target {
  attr: Attribute;
  filter?: { sub: Attribute; value: Comparison["value"] };
  sub?: Attribute;
}

/** The resource's schema: its URN and attributes (the common ones are added here). */
export interface PatchSchema {
  urn: string;
  attributes: readonly Attribute[];
}

const MAX_OPERATIONS = 1000;
const PATH = /^([A-Za-z][\w$-]*)(?:\[(.*)\])?(?:\.([A-Za-z][\w$-]*))?$/s;

/** The body's operations, checked for shape (section 3.5.2: schemas and Operations are required). */
export function readPatch(body: unknown): Operation[] {
  if (!isObject(body)) throw invalidSyntax("the body must be a PatchOp object");
  requireSchema(body, PATCH_SCHEMA);
  const operations = body.Operations ?? body.operations;
  if (!Array.isArray(operations) || operations.length === 0) {
    throw invalidSyntax("Operations must be a non-empty array");
  }
  if (operations.length > MAX_OPERATIONS) throw invalidValue(`more than ${MAX_OPERATIONS} operations`);
  return operations.map((operation, i) => {
    if (!isObject(operation)) throw invalidSyntax(`Operations[${i}] must be an object`);
    const op = typeof operation.op === "string" ? operation.op.toLowerCase() : "";
    if (op !== "add" && op !== "replace" && op !== "remove") {
      throw invalidSyntax(`Operations[${i}].op must be add, replace or remove`);
    }
    const path = operation.path;
    if (path !== undefined && path !== null && (typeof path !== "string" || path.length > 1000)) {
      throw invalidPath(`Operations[${i}].path must be a string of at most 1000 characters`);
    }
    return { op, path: path ?? undefined, value: operation.value };
  });
}

/** The resource after the operations (a copy; `resource` is left as it was). */
export function applyPatch(resource: ScimObject, schema: PatchSchema, operations: Operation[]): ScimObject {
  const doc = structuredClone(resource);
  for (const operation of operations) {
    if (operation.path === undefined) applyWithoutPath(doc, schema, operation);
    else {
      const target = parsePath(operation.path, schema);
      if (target) applyTo(doc, target, operation);
    }
  }
  return doc;
}

/** Section 3.5.2.1 and 3.5.2.3: without a path, the value holds attribute (or path) -> value. */
function applyWithoutPath(doc: ScimObject, schema: PatchSchema, operation: Operation): void {
  if (operation.op === "remove") throw noTarget("remove needs a path");
  if (!isObject(operation.value)) throw invalidValue(`${operation.op} without a path needs an object value`);
  for (const [key, value] of Object.entries(operation.value)) {
    const target = parsePath(key, schema);
    if (!target) continue;
    const name = target.attr.name;
    // Okta sends the group's own id beside its new displayName: the same id changes nothing.
    if (name === "id" && !target.sub && String(value) === String(doc.id)) continue;
    if (name === "schemas") continue;
    applyTo(doc, target, { ...operation, value });
  }
}

/**
 * What a path names; null for an attribute Wisp does not keep (an extension's, an unknown one):
 * operations on those are ignored, as the bodies' unknown attributes are (values.ts).
 */
function parsePath(text: string, schema: PatchSchema): Target | null {
  let rest = text.trim();
  if (rest.toLowerCase().startsWith("urn:")) {
    const prefix = `${schema.urn.toLowerCase()}:`;
    if (!rest.toLowerCase().startsWith(prefix)) return null;
    rest = rest.slice(prefix.length);
  }
  const match = PATH.exec(rest);
  if (!match) throw invalidPath(`"${text}" is not a valid attribute path`);
  const [, name = "", filterText, subName] = match;
  const attr = findAttribute(schema.attributes, name) ?? findAttribute(COMMON_ATTRIBUTES, name);
  if (!attr) return null;
  const target: Target = { attr };
  if (filterText !== undefined) {
    if (!attr.multiValued || attr.type !== "complex") {
      throw invalidPath(`${attr.name} is not a multi-valued complex attribute: no filter applies`);
    }
    const comparison = parseComparison(filterText);
    const subPath = comparison.attribute.replace(new RegExp(`^${attr.name}\\.`, "i"), "");
    const sub = findAttribute(attr.subAttributes ?? [], subPath);
    if (!sub) throw invalidPath(`${attr.name} has no sub-attribute ${comparison.attribute}`);
    target.filter = { sub, value: comparison.value };
  }
  if (subName !== undefined) {
    if (attr.mutability === "readOnly") throw mutability(`${attr.name} is read-only`);
    if (attr.type !== "complex") throw invalidPath(`${attr.name} has no sub-attributes`);
    const sub = findAttribute(attr.subAttributes ?? [], subName);
    if (!sub) return null;
    target.sub = sub;
  }
  return target;
}

function applyTo(doc: ScimObject, target: Target, operation: Operation): void {
  const { attr } = target;
  if (attr.mutability === "readOnly") throw mutability(`${attr.name} is read-only`);
  if (attr.mutability === "writeOnly" && operation.op === "remove") {
    throw mutability(`${attr.name} can be replaced, not removed`);
  }
  if (target.filter) applyFiltered(doc, target, operation);
  else if (target.sub) applySub(doc, attr, target.sub, operation);
  else if (operation.op === "remove") removeWhole(doc, attr, operation.value);
  else setWhole(doc, attr, operation);
}

/** add and replace of a whole attribute. */
function setWhole(doc: ScimObject, attr: Attribute, operation: Operation): void {
  if (attr.multiValued) {
    const items = Array.isArray(operation.value) ? operation.value : [operation.value];
    const values = (coerce(attr, items) as unknown[]) ?? [];
    const current = Array.isArray(doc[attr.name]) ? (doc[attr.name] as unknown[]) : [];
    doc[attr.name] = operation.op === "replace" ? values : merged(current, values);
    return;
  }
  const value = coerce(attr, operation.value);
  if (value === undefined) delete doc[attr.name];
  // Section 3.5.2.3: a complex value's sub-attributes not given are left as they were.
  else if (attr.type === "complex" && isObject(doc[attr.name])) {
    doc[attr.name] = { ...(doc[attr.name] as ScimObject), ...(value as ScimObject) };
  } else doc[attr.name] = value;
}

/** Added values: one with the `value` of one already there replaces nothing and is not doubled. */
function merged(current: unknown[], added: unknown[]): unknown[] {
  const out = [...current];
  for (const item of added) {
    const key = isObject(item) ? item.value : undefined;
    if (key !== undefined && out.some((o) => isObject(o) && o.value === key)) continue;
    out.push(item);
  }
  return out;
}

/**
 * Remove of a whole attribute. Entra ID removes members by naming them in `value`
 * ({"op":"Remove","path":"members","value":[{"value":"<id>"}]}): those values only go.
 */
function removeWhole(doc: ScimObject, attr: Attribute, value: unknown): void {
  if (attr.multiValued && Array.isArray(value) && Array.isArray(doc[attr.name])) {
    const gone = new Set(value.map((v) => (isObject(v) ? v.value : v)).filter((v) => v !== undefined));
    doc[attr.name] = (doc[attr.name] as unknown[]).filter((o) => !(isObject(o) && gone.has(o.value)));
    return;
  }
  delete doc[attr.name];
}

/** `attr.sub` of a single complex attribute, e.g. name.familyName. */
function applySub(doc: ScimObject, attr: Attribute, sub: Attribute, operation: Operation): void {
  if (attr.multiValued) throw invalidPath(`${attr.name}.${sub.name}: name one value with a filter`);
  const parent = isObject(doc[attr.name]) ? (doc[attr.name] as ScimObject) : {};
  const value = operation.op === "remove" ? undefined : coerce(sub, operation.value);
  if (value === undefined) delete parent[sub.name];
  else parent[sub.name] = value;
  doc[attr.name] = parent;
}

/** Whether a value matches a filter: strings compared ignoring case unless the sub-attribute is caseExact. */
function matches(item: unknown, filter: NonNullable<Target["filter"]>): boolean {
  if (!isObject(item)) return false;
  const actual = item[filter.sub.name];
  const wanted = filter.value;
  if (typeof actual === "string" && typeof wanted === "string" && !filter.sub.caseExact) {
    return actual.toLowerCase() === wanted.toLowerCase();
  }
  return actual === wanted || (wanted === null && actual === undefined);
}

/** `attr[filter]` and `attr[filter].sub`: the values the filter selects. */
function applyFiltered(doc: ScimObject, target: Target, operation: Operation): void {
  const { attr, sub } = target;
  const filter = target.filter as NonNullable<Target["filter"]>;
  const items = Array.isArray(doc[attr.name]) ? [...(doc[attr.name] as ScimObject[])] : [];
  const hits = items.filter((item) => matches(item, filter));
  const single = { ...attr, multiValued: false };
  if (operation.op === "remove") {
    doc[attr.name] = sub
      ? items.map((item) => (hits.includes(item) ? withoutKey(item, sub.name) : item))
      : items.filter((item) => !hits.includes(item));
    return;
  }
  // Section 3.5.2.3: a replace whose filter selects nothing fails with noTarget.
  if (hits.length === 0 && operation.op === "replace") {
    throw noTarget(`no ${attr.name} value matches the path's filter`);
  }
  const change = (item: ScimObject): ScimObject =>
    sub
      ? { ...item, [sub.name]: coerce(sub, operation.value) }
      : { ...item, ...(coerce(single, operation.value) as ScimObject) };
  if (hits.length > 0) doc[attr.name] = items.map((item) => (hits.includes(item) ? change(item) : item));
  // An add the filter selects nothing for makes the value it describes (Entra ID adds a user's
  // first work address as emails[type eq "work"].value).
  else doc[attr.name] = [...items, change({ [filter.sub.name]: filter.value })];
}

function withoutKey(item: ScimObject, key: string): ScimObject {
  const { [key]: _gone, ...rest } = item;
  return rest;
}
