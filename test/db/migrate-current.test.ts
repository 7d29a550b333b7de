// migrate() on a database that is already current answers from one read (src/db/migrate.ts,
// upToDate): it must still refuse a database that recorded a step this build does not know.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createTestDatabase } from "../support/databases.ts";

test("a current database is left as it is; one with a step from a newer build is refused", async () => {
  const testDb = await createTestDatabase("sqlite");
  const database = openDatabase({ dataDir: testDb.dataDir });
  try {
    await migrate(database);
    const count = async () =>
      Number(
        (await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(database.db)).rows[0]!
          .n,
      );
    const steps = await count();
    await migrate(database);
    assert.equal(await count(), steps);
    await sql`insert into kysely_migration (name, timestamp) values ('999_from_a_newer_wisp', '2030-01-01T00:00:00Z')`.execute(
      database.db,
    );
    await assert.rejects(migrate(database), /999_from_a_newer_wisp|corrupted/);
  } finally {
    await database.close();
  }
});
