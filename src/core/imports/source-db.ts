// The database an import reads: an existing FreeRADIUS (or daloRADIUS) database on MySQL/MariaDB,
// PostgreSQL or SQLite, named by a connection URL. Read only: nothing here writes to it. Queries
// are written with `?` placeholders and run the same way on each driver.
import fs from "node:fs";
import path from "node:path";
import { ValidationError } from "../shared/errors.ts";
import { within } from "../shared/time.ts";

export type SourceDialect = "mysql" | "postgres" | "sqlite";

export type SourceRow = Record<string, unknown>;

export interface SourceDb {
  dialect: SourceDialect;
  /** Where it is, for messages and the progress key: the URL without its password. */
  label: string;
  query(text: string, params?: unknown[]): Promise<SourceRow[]>;
  close(): Promise<void>;
}

export interface SourceLocation {
  dialect: SourceDialect;
  label: string;
  url?: URL;
  file?: string;
}

const URL_RULE =
  "must be mysql://user:password@host:port/database (or mariadb://), postgres://user:password@host:port/database, or sqlite:/path/to/radius.db";

/** Reads the source's URL; throws a ValidationError naming the forms it takes. */
export function parseSourceUrl(text: string): SourceLocation {
  const sqlite = /^sqlite:(?:\/\/)?(.+)$/i.exec(text);
  if (sqlite) {
    const file = path.resolve(sqlite[1]!);
    return { dialect: "sqlite", label: `sqlite:${file}`, file };
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw ValidationError.field("source", URL_RULE);
  }
  const scheme = url.protocol.replace(/:$/, "").toLowerCase();
  const dialect: SourceDialect | undefined =
    scheme === "mysql" || scheme === "mariadb"
      ? "mysql"
      : scheme === "postgres" || scheme === "postgresql"
        ? "postgres"
        : undefined;
  if (!dialect || !url.hostname || url.pathname.length < 2) throw ValidationError.field("source", URL_RULE);
  const user = url.username ? `${decodeURIComponent(url.username)}@` : "";
  const port = url.port || (dialect === "mysql" ? "3306" : "5432");
  const label = `${dialect}://${user}${url.hostname}:${port}${url.pathname}`;
  return { dialect, label, url };
}

/** Opens the source (one connection: an import reads one query at a time). */
export async function openSource(location: SourceLocation, password?: string): Promise<SourceDb> {
  if (location.dialect === "sqlite") return openSqlite(location);
  if (location.dialect === "mysql") return openMysql(location, password);
  return openPostgres(location, password);
}

async function openSqlite(location: SourceLocation): Promise<SourceDb> {
  const file = location.file!;
  if (!fs.existsSync(file)) throw ValidationError.field("source", `${file} does not exist`);
  const { default: Sqlite } = await import("better-sqlite3");
  const database = new Sqlite(file, { readonly: true, fileMustExist: true });
  database.defaultSafeIntegers(false);
  return {
    dialect: "sqlite",
    label: location.label,
    async query(text, params = []) {
      return database.prepare(text).all(...(params as unknown[])) as SourceRow[];
    },
    async close() {
      database.close();
    },
  };
}

/** How long one query of the source may take (the largest tables are read in chunks). */
const QUERY_TIMEOUT_MS = 300_000;

async function openMysql(location: SourceLocation, password?: string): Promise<SourceDb> {
  const url = location.url!;
  const { default: mysql } = await import("mysql2/promise");
  const connection = await mysql.createConnection({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: password ?? decodeURIComponent(url.password),
    database: decodeURIComponent(url.pathname.slice(1)),
    charset: "utf8mb4",
    // Times are read as Unix seconds by the queries themselves; big counters as exact text.
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    connectTimeout: 10_000,
  });
  // A connection error after connecting (server gone) rejects the query in progress; without a
  // listener it would also be thrown as an unhandled 'error' event.
  connection.on("error", () => {});
  return {
    dialect: "mysql",
    label: location.label,
    async query(text, params = []) {
      // A bound of our own rather than mysql2's `timeout` option: mysql2 clears that timer only when
      // the query ends, so a connection that dies mid-query (the server killed it) left a 5-minute
      // timer holding the process open after the import had failed and been reported.
      const [rows] = await within(connection.query({ sql: text, values: params }), QUERY_TIMEOUT_MS, () => {
        connection.destroy();
        return new Error(`the source did not answer a query within ${QUERY_TIMEOUT_MS / 1000} s`);
      });
      return rows as SourceRow[];
    },
    async close() {
      await connection.end().catch(() => connection.destroy());
    },
  };
}

async function openPostgres(location: SourceLocation, password?: string): Promise<SourceDb> {
  const { default: pg } = await import("pg");
  const url = new URL(location.url!.toString());
  if (url.protocol === "postgresql:") url.protocol = "postgres:";
  const client = new pg.Client({
    connectionString: url.toString(),
    ...(password === undefined ? {} : { password }),
    connectionTimeoutMillis: 10_000,
  });
  client.on("error", () => {});
  await client.connect();
  return {
    dialect: "postgres",
    label: location.label,
    async query(text, params = []) {
      let n = 0;
      const numbered = text.replace(/\?/g, () => `$${++n}`);
      return (await client.query(numbered, params as unknown[])).rows as SourceRow[];
    },
    async close() {
      await client.end().catch(() => {});
    },
  };
}
