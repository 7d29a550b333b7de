// The databases a suite runs against: SQLite always, PostgreSQL when a server answers. Each run gets
// a fresh PostgreSQL database, so parallel runs never collide.
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import SqliteDatabase from "better-sqlite3";
import pg from "pg";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";

export const PG_ADMIN_URL = process.env.WISP_TEST_PG_URL || "postgres://postgres@127.0.0.1:5432/test";
export const REDIS_URL = process.env.WISP_TEST_REDIS_URL || "redis://127.0.0.1:6379";
/** Set by .ci/run where the servers exist, so a missing server fails instead of skipping. */
const REQUIRED = process.env.WISP_TEST_REQUIRE_SERVICES === "1";

export interface TestDatabase {
  dialect: "sqlite" | "postgres";
  dataDir: string;
  databaseUrl: string | undefined;
  drop(): Promise<void>;
}

let pgReachable: Promise<string | null> | undefined;

/** null when PostgreSQL answers, otherwise the reason it cannot be used. */
export function postgresUnavailable(): Promise<string | null> {
  pgReachable ??= (async () => {
    const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query("select 1");
      return null;
    } catch (error) {
      const reason = `PostgreSQL not reachable at ${PG_ADMIN_URL}: ${(error as Error).message}`;
      if (REQUIRED) throw new Error(`${reason} (required by WISP_TEST_REQUIRE_SERVICES=1)`);
      console.log(`# skipping PostgreSQL tests: ${reason}`);
      return reason;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return pgReachable;
}

export function tempDir(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `wisp-${label}-`));
}

export interface CreateOptions {
  /**
   * Already migrated to the latest step: a copy of a template migrated once per day and set of
   * migrations (see migratedTemplate), with a deployment identity of its own. Otherwise empty, for
   * tests of the migrations themselves and of a first start.
   */
  migrated?: boolean;
}

export async function createTestDatabase(
  dialect: "sqlite" | "postgres",
  { migrated = false }: CreateOptions = {},
): Promise<TestDatabase> {
  const dataDir = tempDir(dialect);
  if (dialect === "sqlite") {
    if (migrated) copySqliteTemplate(await migratedTemplate("sqlite"), dataDir);
    return {
      dialect,
      dataDir,
      databaseUrl: undefined,
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `wisp_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(
      `create database ${name}${migrated ? ` template ${await migratedTemplate("postgres")}` : ""}`,
    );
  } finally {
    await admin.end();
  }
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  if (migrated) await renameDeployment(url.toString());
  return {
    dialect,
    dataDir,
    databaseUrl: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: PG_ADMIN_URL });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The dialects to run a suite on, with the reason PostgreSQL is skipped when it is. */
export async function dialects(): Promise<{ dialect: "sqlite" | "postgres"; skip: string | false }[]> {
  const reason = await postgresUnavailable();
  return [
    { dialect: "sqlite", skip: false },
    { dialect: "postgres", skip: reason ?? false },
  ];
}

/**
 * SQLite only, for the CLI suites that spawn dozens of `wisp` processes each (networks, radius,
 * operators, devices): on these 2-core machines their PostgreSQL runs took about 100 s of the
 * suite's 15 minutes. What those runs proved is proved elsewhere on PostgreSQL: the services and
 * SQL behind the commands in the HTTP and core suites, and the CLI's own PostgreSQL path
 * (DATABASE_URL, migrations, output) in test/cli/cli.test.ts, server-process.test.ts and the CLI walk.
 */
export async function cliDialects(): ReturnType<typeof dialects> {
  return (await dialects()).filter((d) => d.dialect === "sqlite");
}

let redisReachable: Promise<string | null> | undefined;

/** null when Redis answers PING, otherwise the reason it cannot be used. */
export function redisUnavailable(): Promise<string | null> {
  redisReachable ??= (async () => {
    const { Redis } = await import("ioredis");
    const redis = new Redis(REDIS_URL, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      retryStrategy: () => null,
    });
    redis.on("error", () => {});
    try {
      await redis.connect();
      await redis.ping();
      return null;
    } catch (error) {
      const reason = `Redis not reachable at ${REDIS_URL}: ${(error as Error).message}`;
      if (REQUIRED) throw new Error(`${reason} (required by WISP_TEST_REQUIRE_SERVICES=1)`);
      console.log(`# skipping Redis tests: ${reason}`);
      return reason;
    } finally {
      redis.disconnect();
    }
  })();
  return redisReachable;
}

/**
 * Runs fn on a fresh database of the dialect, opened (migrated to `target`, or to the latest step)
 * and closed and dropped afterwards, whatever fn does.
 */
export async function withDatabase(
  dialect: "sqlite" | "postgres",
  fn: (database: Database, testDb: TestDatabase) => Promise<void>,
  target?: string,
): Promise<void> {
  const testDb = await createTestDatabase(dialect, { migrated: target === undefined });
  const database = openDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl });
  try {
    // Nothing left to run on a migrated copy; still asked, as every start asks.
    await migrate(database, target);
    await fn(database, testDb);
  } finally {
    await database.close();
    await testDb.drop();
  }
}

// Migrated templates. Every suite used to migrate its fresh database through every step (about
// 0.1 s of CPU on SQLite, 0.5 s of CPU and 1-2 s on PostgreSQL, each time); now each test process
// copies a database migrated once. The migrations from an empty database are still run by the tests
// of a first start and of the migrations (createTestDatabase without `migrated`, withDatabase with
// a target, migrate() in test/db).

const MIGRATIONS = new URL("../../src/db/", import.meta.url);

/**
 * What a migrated database depends on: the migration code, Kysely's version, and the day (020
 * makes this month's partitions and the next ones, 012 stamps the day the deployment was named).
 */
function templateKey(): string {
  const hash = createHash("sha256");
  const files = [
    "migrate.ts",
    ...fs
      .readdirSync(new URL("migrations/", MIGRATIONS))
      .sort()
      .map((f) => `migrations/${f}`),
  ];
  for (const file of files) hash.update(file).update(fs.readFileSync(new URL(file, MIGRATIONS)));
  hash.update(fs.readFileSync(new URL("../../node_modules/kysely/package.json", import.meta.url)));
  return `${today()}_${hash.digest("hex").slice(0, 16)}`;
}

/** YYYYMMDD (UTC): the day a template was made, the first part of its name. */
function today(offsetDays = 0): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10).replaceAll("-", "");
}

const templates = new Map<string, Promise<string>>();

/** The template of the dialect for this process: a SQLite file path, or a PostgreSQL database name. */
function migratedTemplate(dialect: "sqlite" | "postgres"): Promise<string> {
  let made = templates.get(dialect);
  if (!made) {
    made = dialect === "sqlite" ? sqliteTemplate(templateKey()) : postgresTemplate(templateKey());
    templates.set(dialect, made);
    made.catch(() => templates.delete(dialect));
  }
  return made;
}

/**
 * A migrated SQLite file in the temporary folder, made by whichever process needs it first: made
 * beside it and renamed into place, so a reader never sees half a file (two processes racing both
 * make one, and the second rename replaces an equal file). Files of days before yesterday go.
 */
async function sqliteTemplate(key: string): Promise<string> {
  const file = path.join(os.tmpdir(), `wisp-template-${key}.db`);
  if (fs.existsSync(file)) return file;
  for (const old of fs.readdirSync(os.tmpdir())) {
    const day = /^wisp-template-(\d{8})_/.exec(old)?.[1];
    if (day && day < today(-1)) fs.rmSync(path.join(os.tmpdir(), old), { force: true });
  }
  const dataDir = tempDir("template");
  try {
    const database = openDatabase({ dataDir });
    try {
      await migrate(database);
    } finally {
      await database.close(); // checkpoints the WAL into wisp.db
    }
    const partial = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
    fs.copyFileSync(path.join(dataDir, "wisp.db"), partial);
    fs.renameSync(partial, file);
    return file;
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function copySqliteTemplate(template: string, dataDir: string): void {
  const file = path.join(dataDir, "wisp.db");
  fs.copyFileSync(template, file);
  const sqlite = new SqliteDatabase(file);
  try {
    const { identity, created } = newDeployment();
    sqlite.prepare("update deployment set identity = ?, created = ? where id = 1").run(identity, created);
  } finally {
    sqlite.close();
  }
}

/**
 * A migrated PostgreSQL database, made once by the first process that needs it, under an advisory
 * lock (parallel test processes, and parallel runs of other checkouts, wait for it instead of making
 * their own). It is migrated under another name and renamed when done, so the name only ever
 * denotes a complete template. Templates of earlier days are dropped when a new one is made.
 */
async function postgresTemplate(key: string): Promise<string> {
  const name = `wisp_template_${key}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query("select pg_advisory_lock(hashtext('wisp test templates'))");
    const { rowCount } = await admin.query("select 1 from pg_database where datname = $1", [name]);
    if (rowCount) return name;
    const building = `${name}_building_${process.pid}`;
    await admin.query(`drop database if exists ${building} with (force)`);
    await admin.query(`create database ${building}`);
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${building}`;
    const database = openDatabase({ dataDir: os.tmpdir(), databaseUrl: url.toString() });
    try {
      await migrate(database);
    } finally {
      await database.close();
    }
    await admin.query(`alter database ${building} rename to ${name}`);
    await dropOldTemplates(admin);
    return name;
  } finally {
    await admin.query("select pg_advisory_unlock(hashtext('wisp test templates'))").catch(() => {});
    await admin.end();
  }
}

/** Templates (and abandoned half-made ones) of days before yesterday: a run's own day stays. */
async function dropOldTemplates(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>(
    "select datname from pg_database where datname like 'wisp\\_template\\_%' and substr(datname, 15, 8) < $1",
    [today(-1)],
  );
  for (const { datname } of rows) {
    await admin.query(`drop database if exists ${datname} with (force)`).catch(() => {});
  }
}

/** A copy of a template is another deployment: its own identity (it names Redis keys, see 012). */
function newDeployment(): { identity: string; created: string } {
  return { identity: randomBytes(12).toString("hex"), created: `${new Date().toISOString().slice(0, 19)}Z` };
}

async function renameDeployment(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { identity, created } = newDeployment();
    await client.query("update deployment set identity = $1, created = $2 where id = 1", [identity, created]);
  } finally {
    await client.end();
  }
}
