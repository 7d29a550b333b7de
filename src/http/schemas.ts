// Schemas shared by every route: the error body, pagination, the list envelope.
import { type TSchema, type TUnsafe, Type } from "typebox";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../core/shared/pages.ts";
import { sortValues } from "../core/shared/sort.ts";

export const ErrorBody = Type.Object(
  {
    error: Type.Literal(true),
    message: Type.String(),
    code: Type.Integer(),
    details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
  },
  { $id: "Error", description: "Every non-2xx answer has this shape" },
);

/** A string enum as plain JSON Schema `enum`, which gives clearer validation messages than anyOf. */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: object = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}

/** Ids are PostgreSQL `integer`s: anything beyond is refused before it reaches the database. */
export const Id = (description: string) => Type.Integer({ minimum: 1, maximum: 2_147_483_647, description });

export const PageQuery = {
  page: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 10_000_000, default: 1, description: "1-based page" }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_PAGE_SIZE,
      default: DEFAULT_PAGE_SIZE,
      description: "page size",
    }),
  ),
};

/**
 * The `sort` parameter of a list: one of `fields`, ascending, or with a leading "-", descending.
 * Listed as an enum, so the OpenAPI document names every order and validation refuses the rest.
 */
export function SortQuery(fields: readonly string[], defaultOrder = "id", tieBreak = "id") {
  return Type.Optional(
    StringEnum(sortValues(fields), {
      description:
        `order of the list: a field ascending, or "-field" descending (default: ${defaultOrder}). ` +
        `Text ignores case; missing values come last; ties are broken by ${tieBreak} in the same ` +
        "direction, so pages neither overlap nor skip.",
    }),
  );
}

export function ListOf<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item),
    page: Type.Integer(),
    total: Type.Integer(),
    limit: Type.Integer(),
  });
}

/** Error responses every /api route can give; documented once, referenced by each route. */
export const errorResponses = {
  "4xx": Type.Ref("Error"),
  "5xx": Type.Ref("Error"),
};
