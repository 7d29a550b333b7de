// The databases a suite runs against: SQLite always, PostgreSQL when a server answers. Each run gets
// a fresh PostgreSQL database, so parallel runs never collide.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
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

export async function createTestDatabase(dialect: "sqlite" | "postgres"): Promise<TestDatabase> {
  const dataDir = tempDir(dialect);
  if (dialect === "sqlite") {
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
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
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
  const testDb = await createTestDatabase(dialect);
  const database = openDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl });
  try {
    await migrate(database, target);
    await fn(database, testDb);
  } finally {
    await database.close();
    await testDb.drop();
  }
}
