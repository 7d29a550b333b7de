// The one place a list's order (core/shared/sort.ts) becomes SQL, so every list sorts alike on both
// databases: text ignoring ASCII case in byte order (PostgreSQL's collation could differ from
// SQLite's), missing values (NULL) last either way, and ties broken by the row's unique key in the
// sort's direction, so that pages never overlap or skip a row.
import { type RawBuilder, type SelectQueryBuilder, sql } from "kysely";
import type { Sort } from "../core/shared/sort.ts";
import type { DialectName } from "./database.ts";

export interface SortKey {
  /** A column reference, as Kysely takes it ("id", "users.username"). */
  column: string;
  /** Text compared ignoring case. */
  text?: boolean;
  /** May be NULL: NULL sorts last, ascending or descending. */
  nullable?: boolean;
}

export interface SortPlan<F extends string> {
  /** The column each sortable field reads. */
  keys: Record<F, SortKey>;
  /** The order when none is asked for. */
  defaultOrder: readonly Sort<F>[];
  /** Columns that together identify a row: the tie-break. */
  unique: readonly SortKey[];
}

/** Rows with an id, a name and their times (groups, networks): the same plan for each. */
export const NAMED_ROWS: SortPlan<"id" | "name" | "created" | "updated"> = {
  keys: {
    id: { column: "id" },
    name: { column: "name", text: true },
    created: { column: "created" },
    updated: { column: "updated" },
  },
  defaultOrder: [{ field: "id", descending: false }],
  unique: [{ column: "id" }],
};

/** The terms of `sort` (or of the plan's default), for a query's ORDER BY or an aggregate's. */
export function orderTerms<F extends string>(
  dialect: DialectName,
  plan: SortPlan<F>,
  sort: Sort<F> | undefined,
): RawBuilder<unknown> {
  const terms = (sort ? [sort] : plan.defaultOrder).map((s) => ({
    key: plan.keys[s.field],
    descending: s.descending,
  }));
  const descending = terms[0]?.descending ?? false;
  for (const key of plan.unique) {
    if (!terms.some((t) => t.key.column === key.column)) terms.push({ key, descending });
  }
  return sql.join(
    terms.map(({ key, descending }) => {
      const column = sql.ref(key.column);
      const value = key.text
        ? sql`lower(${column})${sql.raw(dialect === "postgres" ? ' collate "C"' : "")}`
        : column;
      return sql`${value} ${sql.raw(descending ? "desc" : "asc")}${sql.raw(key.nullable ? " nulls last" : "")}`;
    }),
  );
}

/** A select ordered by `sort` (or by the plan's default). */
export function ordered<DB, TB extends keyof DB, O, F extends string>(
  query: SelectQueryBuilder<DB, TB, O>,
  dialect: DialectName,
  plan: SortPlan<F>,
  sort: Sort<F> | undefined,
): SelectQueryBuilder<DB, TB, O> {
  return query.orderBy(orderTerms(dialect, plan, sort));
}
