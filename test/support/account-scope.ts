// Whether a SQL statement names the account of every account-scoped table it touches: each such
// table, wherever it appears (FROM, JOIN, UPDATE, DELETE ... USING, INSERT, subqueries, CTEs), must
// have its account_id bound by an equality or IN list with values of the statement (parameters,
// constants), directly or through an equality with another table's account_id that is bound (a
// colocated join), or, in a correlated subquery, with a bound table of the outer query. That is
// what lets Citus route the statement to one shard (docs/scaling.md). The statement is parsed by
// PostgreSQL's own parser (libpg-query), so the check reads what the server reads.
import { loadModule, parseSync } from "libpg-query";

/** A table the check applies to, and the column that names the account (account_id; accounts: id). */
export type ScopedTables = ReadonlyMap<string, string>;

export interface Unscoped {
  table: string;
  /** How the statement refers to it (its alias, or its name). */
  ref: string;
}

// biome-ignore lint/suspicious/noExplicitAny: libpg-query's JSON tree, read generically
type Node = any;

interface Relation {
  table: string;
  ref: string;
}

/** What a query level knows of the levels around it: which refs there have a bound account. */
interface Outer {
  bound: Set<string>;
  refs: Set<string>;
  outer: Outer | undefined;
}

export async function loadParser(): Promise<void> {
  await loadModule();
}

/** The account-scoped tables the statement touches without naming the account; [] when it does. */
export function unscopedTables(statement: string, tables: ScopedTables): Unscoped[] {
  const tree = parseSync(statement) as Node;
  const found: Unscoped[] = [];
  for (const { stmt } of tree.stmts ?? []) visitStatement(stmt, tables, undefined, found);
  return found;
}

function visitStatement(stmt: Node, tables: ScopedTables, outer: Outer | undefined, found: Unscoped[]): void {
  if (!stmt || typeof stmt !== "object") return;
  if (stmt.SelectStmt) visitSelect(stmt.SelectStmt, tables, outer, found);
  else if (stmt.InsertStmt) visitInsert(stmt.InsertStmt, tables, outer, found);
  else if (stmt.UpdateStmt) {
    const u = stmt.UpdateStmt;
    visitWith(u.withClause, tables, outer, found);
    visitLevel(
      [{ RangeVar: u.relation }, ...(u.fromClause ?? [])],
      [u.whereClause, ...(u.targetList ?? [])],
      tables,
      outer,
      found,
    );
  } else if (stmt.DeleteStmt) {
    const d = stmt.DeleteStmt;
    visitWith(d.withClause, tables, outer, found);
    visitLevel([{ RangeVar: d.relation }, ...(d.usingClause ?? [])], [d.whereClause], tables, outer, found);
  }
  // Anything else (SET, BEGIN, DDL, a bare function call) touches no table rows here.
}

function visitWith(
  withClause: Node,
  tables: ScopedTables,
  outer: Outer | undefined,
  found: Unscoped[],
): void {
  for (const cte of withClause?.WithClause?.ctes ?? withClause?.ctes ?? []) {
    visitStatement(cte.CommonTableExpr?.ctequery, tables, outer, found);
  }
}

function visitSelect(select: Node, tables: ScopedTables, outer: Outer | undefined, found: Unscoped[]): void {
  visitWith(select.withClause, tables, outer, found);
  if (select.op && select.op !== "SETOP_NONE") {
    visitSelect(select.larg, tables, outer, found);
    visitSelect(select.rarg, tables, outer, found);
    return;
  }
  for (const row of select.valuesLists ?? []) visitExpressions([row], tables, outer, found);
  visitLevel(
    select.fromClause ?? [],
    [select.whereClause, select.havingClause, ...(select.targetList ?? [])],
    tables,
    outer,
    found,
  );
}

function visitInsert(insert: Node, tables: ScopedTables, outer: Outer | undefined, found: Unscoped[]): void {
  visitWith(insert.withClause, tables, outer, found);
  const table = insert.relation?.relname as string;
  const column = tables.get(table);
  if (column !== undefined) {
    const columns = (insert.cols ?? []).map((c: Node) => c.ResTarget?.name);
    // The rows come from VALUES (each a value of the statement) or a SELECT checked on its own.
    if (!columns.includes(column)) found.push({ table, ref: insert.relation.alias?.aliasname ?? table });
  }
  if (insert.selectStmt) visitStatement(insert.selectStmt, tables, outer, found);
  visitExpressions([insert.onConflictClause?.OnConflictClause?.whereClause], tables, outer, found);
}

/** One query level: its relations, the conditions that bind them, then its subqueries. */
function visitLevel(
  fromItems: Node[],
  expressions: Node[],
  tables: ScopedTables,
  outer: Outer | undefined,
  found: Unscoped[],
): void {
  const relations: Relation[] = [];
  const conditions: Node[] = [];
  const subqueries: Node[] = [];
  for (const item of fromItems) collectFrom(item, relations, conditions, subqueries);
  const where = expressions[0];
  if (where) conditions.push(where);

  const refs = new Set(relations.map((r) => r.ref));
  const scopedRefs = relations.filter((r) => tables.has(r.table));
  const columnOf = (ref: string) => tables.get(relations.find((r) => r.ref === ref)?.table ?? "");
  // The ref an account column reference belongs to: "ref.column", or a bare column of the one
  // scoped relation here that has it; undefined when it is not an account column at all.
  const accountRef = (node: Node, level: "here" | "outer"): string | undefined => {
    const fields = (node?.ColumnRef?.fields ?? []).map((f: Node) => f.String?.sval);
    if (fields.length === 2) {
      const [ref, name] = fields;
      if (level === "here") return refs.has(ref) && columnOf(ref) === name ? ref : undefined;
      return boundOutside(outer, ref, name, tables) ? ref : undefined;
    }
    if (fields.length === 1 && level === "here") {
      const owner = scopedRefs.find((r) => tables.get(r.table) === fields[0]);
      return owner?.ref;
    }
    return undefined;
  };
  const isValue = (node: Node): boolean => {
    if (!node) return false;
    if (node.ParamRef || node.A_Const) return true;
    if (node.TypeCast) return isValue(node.TypeCast.arg);
    return accountRef(node, "outer") !== undefined;
  };

  // Union-find over refs, with "bound" meaning: equal to a value of the statement.
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let root = x;
    while (parent.has(root) && parent.get(root) !== root) root = parent.get(root)!;
    return root;
  };
  const union = (a: string, b: string) => parent.set(find(a), find(b));
  const BOUND = "\u0000bound";
  for (const conjunct of conditions.flatMap(conjuncts)) {
    const e = conjunct.A_Expr;
    if (!e) continue;
    const op = e.name?.[0]?.String?.sval;
    if (e.kind === "AEXPR_OP" && op === "=") {
      const left = accountRef(e.lexpr, "here");
      const right = accountRef(e.rexpr, "here");
      if (left && right) union(left, right);
      else if (left && isValue(e.rexpr)) union(left, BOUND);
      else if (right && isValue(e.lexpr)) union(right, BOUND);
    } else if (e.kind === "AEXPR_IN" && op === "=") {
      const left = accountRef(e.lexpr, "here");
      const items = e.rexpr?.List?.items ?? [];
      if (left && items.length > 0 && items.every(isValue)) union(left, BOUND);
    } else if (e.kind === "AEXPR_OP_ANY" && op === "=") {
      const left = accountRef(e.lexpr, "here");
      if (left && isValue(e.rexpr)) union(left, BOUND);
    }
  }
  const bound = new Set(relations.filter((r) => find(r.ref) === find(BOUND)).map((r) => r.ref));
  for (const relation of scopedRefs) {
    if (!bound.has(relation.ref)) found.push({ table: relation.table, ref: relation.ref });
  }

  const here: Outer = { bound, refs, outer };
  for (const subquery of subqueries) visitStatement(subquery, tables, outer, found);
  visitExpressions([...conditions, ...expressions.slice(1)], tables, here, found);
}

/** Whether ref.column names a relation of an enclosing level whose account is bound. */
function boundOutside(outer: Outer | undefined, ref: string, name: string, tables: ScopedTables): boolean {
  for (let level = outer; level; level = level.outer) {
    if (level.refs.has(ref)) return level.bound.has(ref) && [...tables.values()].includes(name);
  }
  return false;
}

function collectFrom(item: Node, relations: Relation[], conditions: Node[], subqueries: Node[]): void {
  if (!item) return;
  if (item.RangeVar) {
    const table = item.RangeVar.relname as string;
    relations.push({ table, ref: item.RangeVar.alias?.aliasname ?? table });
  } else if (item.JoinExpr) {
    collectFrom(item.JoinExpr.larg, relations, conditions, subqueries);
    collectFrom(item.JoinExpr.rarg, relations, conditions, subqueries);
    if (item.JoinExpr.quals) conditions.push(item.JoinExpr.quals);
  } else if (item.RangeSubselect) {
    subqueries.push(item.RangeSubselect.subquery);
  }
  // Function calls in FROM (json_each, generate_series) hold no table rows.
}

/** The parts of an AND chain (a condition that is not an AND is its own only part). */
function conjuncts(node: Node): Node[] {
  if (node?.BoolExpr?.boolop === "AND_EXPR") return node.BoolExpr.args.flatMap(conjuncts);
  return node ? [node] : [];
}

/** Visits the subqueries (SubLinks) anywhere inside these expressions, as levels inside `outer`. */
function visitExpressions(
  nodes: Node[],
  tables: ScopedTables,
  outer: Outer | undefined,
  found: Unscoped[],
): void {
  const walk = (node: Node): void => {
    if (!node || typeof node !== "object") return;
    if (Array.isArray(node)) {
      node.forEach(walk);
      return;
    }
    if (node.SubLink) {
      walk(node.SubLink.testexpr);
      visitStatement(node.SubLink.subselect, tables, outer, found);
      return;
    }
    for (const value of Object.values(node)) walk(value);
  };
  nodes.forEach(walk);
}
