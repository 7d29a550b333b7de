// The order of a list: `sort=<field>` ascending, `sort=-<field>` descending. Each area says which
// of its fields a list may be sorted by (its rules.ts); db/sort.ts turns the order into SQL.
import { ValidationError } from "./errors.ts";

export interface Sort<F extends string = string> {
  field: F;
  descending: boolean;
}

/** Every value `sort` accepts for these fields: each field, then each field with a leading "-". */
export function sortValues<F extends string>(fields: readonly F[]): (F | `-${F}`)[] {
  return [...fields, ...fields.map((f) => `-${f}` as const)];
}

/** The order asked for, or undefined for the list's default order; an unknown field is a 400. */
export function parseSort<F extends string>(
  value: string | undefined,
  fields: readonly F[],
): Sort<F> | undefined {
  if (value === undefined) return undefined;
  const descending = value.startsWith("-");
  const field = (descending ? value.slice(1) : value) as F;
  if (!fields.includes(field)) {
    throw ValidationError.field("sort", `must be one of ${sortValues(fields).join(", ")}`);
  }
  return { field, descending };
}
