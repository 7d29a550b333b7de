// Reads FreeRADIUS's own configuration text (the stock rlm_sql queries.conf) and expands its
// queries the way rlm_sql would for one request, so tests can run the real queries against Wisp's
// database. Covers the part of FreeRADIUS's config and xlat syntax those queries use.
import fs from "node:fs";

/** A value may be given several times: rlm_sql tries the `query`s of a section in order. */
export type ConfigSection = { [name: string]: string[] | ConfigSection };

export const FREERADIUS_SQL_DIR = "/etc/freeradius/3.0/mods-config/sql/main";

/** The sql module's settings that queries.conf refers to (mods-available/sql defaults). */
const SQL_MODULE_SETTINGS: Record<string, string> = {
  acct_table1: "radacct",
  acct_table2: "radacct",
  postauth_table: "radpostauth",
  authcheck_table: "radcheck",
  groupcheck_table: "radgroupcheck",
  authreply_table: "radreply",
  groupreply_table: "radgroupreply",
  usergroup_table: "radusergroup",
  client_table: "nas",
  group_attribute: "SQL-Group",
};

/** Parses queries.conf for a dialect ("sqlite", "postgresql") as it sits inside the sql module. */
export function loadQueries(dialect: "sqlite" | "postgresql"): ConfigSection {
  const text = fs.readFileSync(`${FREERADIUS_SQL_DIR}/${dialect}/queries.conf`, "utf8");
  const settings = Object.fromEntries(Object.entries(SQL_MODULE_SETTINGS).map(([k, v]) => [k, [v]]));
  return { ...settings, ...parseConfig(text) };
}

export function parseConfig(text: string): ConfigSection {
  const root: ConfigSection = {};
  const stack: ConfigSection[] = [root];
  // A backslash at the end of a line continues the line.
  const lines = text.replace(/\\\r?\n/g, "").split("\n");
  for (const raw of lines) {
    const line = stripComment(raw).trim();
    if (!line) continue;
    const top = stack[stack.length - 1]!;
    if (line === "}") {
      stack.pop();
      continue;
    }
    const section = /^([\w.-]+)\s*\{$/.exec(line);
    if (section) {
      const child: ConfigSection = {};
      top[section[1]!] = child;
      stack.push(child);
      continue;
    }
    const pair = /^(-?[\w.-]+)\s*=\s*(.*)$/.exec(line);
    if (pair) {
      const existing = top[pair[1]!];
      const value = unquote(pair[2]!.trim());
      top[pair[1]!] = Array.isArray(existing) ? [...existing, value] : [value];
    }
  }
  return root;
}

function stripComment(line: string): string {
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '"' && line[i - 1] !== "\\") quoted = !quoted;
    if (line[i] === "#" && !quoted) return line.slice(0, i);
  }
  return line;
}

function unquote(value: string): string {
  return value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

/** Every value at a dotted path, with ${...} references resolved relative to where they stand. */
export function configStrings(root: ConfigSection, path: string): string[] {
  const parts = path.split(".");
  const values = lookup(root, parts);
  if (!Array.isArray(values)) throw new Error(`no value at ${path}`);
  return values.map((value) => resolveReferences(root, parts.slice(0, -1), value));
}

/** The first value at a dotted path. */
export function configString(root: ConfigSection, path: string): string {
  return configStrings(root, path)[0]!;
}

function lookup(root: ConfigSection, parts: string[]): string[] | ConfigSection | undefined {
  let node: string[] | ConfigSection | undefined = root;
  for (const part of parts) node = node && !Array.isArray(node) ? node[part] : undefined;
  return node;
}

function resolveReferences(root: ConfigSection, section: string[], value: string): string {
  return value.replace(/\$\{(\.*)([\w.-]+)\}/g, (_, dots: string, name: string) => {
    // One dot is the current section; each further dot goes one section up.
    const base = dots.length === 0 ? [] : section.slice(0, Math.max(0, section.length - (dots.length - 1)));
    const parts = [...base, ...name.split(".")];
    const found = lookup(root, parts);
    if (!Array.isArray(found)) throw new Error(`unresolved reference \${${dots}${name}}`);
    return resolveReferences(root, parts.slice(0, -1), found[0]!);
  });
}

export type Request = Record<string, string | undefined>;

/** Expands %{...} and %X the way FreeRADIUS's xlat does for these queries. */
export function expand(template: string, request: Request, now = new Date()): string {
  let out = "";
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (c !== "%") {
      out += c;
      continue;
    }
    const next = template[i + 1];
    if (next === "{") {
      const end = matchingBrace(template, i + 1);
      out += expandExpression(template.slice(i + 2, end), request, now);
      i = end;
      continue;
    }
    const seconds = Math.floor(now.getTime() / 1000);
    if (next === "l") out += String(seconds);
    else if (next === "S") out += now.toISOString().slice(0, 19).replace("T", " ");
    else if (next === "M") out += String(now.getMilliseconds() * 1000).padStart(6, "0");
    else out += `%${next}`;
    i++;
  }
  return out;
}

function matchingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "{") depth++;
    if (text[i] === "}" && --depth === 0) return i;
  }
  throw new Error(`unbalanced braces in ${text}`);
}

function expandExpression(inner: string, request: Request, now: Date): string {
  // %{a:-b}: a, or b when a is empty. The split is at the first ":-" outside nested braces.
  let depth = 0;
  for (let i = 0; i < inner.length - 1; i++) {
    if (inner[i] === "{") depth++;
    if (inner[i] === "}") depth--;
    if (depth === 0 && inner[i] === ":" && inner[i + 1] === "-") {
      const first = expand(inner.slice(0, i), request, now);
      return first !== "" ? first : expand(inner.slice(i + 2), request, now);
    }
  }
  const call = /^(integer|tolower|reply):(.*)$/s.exec(inner);
  if (call) {
    const [, fn, argument = ""] = call;
    if (fn === "tolower") return expand(argument, request, now).toLowerCase();
    if (fn === "reply") return request[`reply:${argument}`] ?? "";
    return request[argument] ?? "";
  }
  if (inner.includes("%")) return request[expand(inner, request, now)] ?? "";
  return request[inner] ?? "";
}

/**
 * FreeRADIUS's PostgreSQL accounting INSERTs end in "ON CONFLICT (AcctUniqueId) ...", which needs a
 * unique index on acctuniqueid alone; Wisp's partitioned radacct (migration 020) cannot have one.
 * Without the clause a duplicate key fails with a unique violation (radacct_keys), an SQLSTATE of
 * class 23, which rlm_sql answers as it did before ON CONFLICT: by running the section's next
 * query (the alternate UPDATE of a Start; nothing more for Interim-Update and Stop, as DO NOTHING).
 * deploy/freeradius/README.md gives the same change for a FreeRADIUS on PostgreSQL.
 */
export function withoutOnConflict(query: string): string {
  return query.replace(/\s+ON CONFLICT \(AcctUniqueId\)[\s\S]*$/i, "");
}
