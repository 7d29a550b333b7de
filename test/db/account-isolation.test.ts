// Migration 011 on networks that exist already: every row gets its address range keys (the same
// ones the networks service computes), rows that overlap across accounts stay as they were and
// are found as before, and new overlaps are refused from then on.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Kysely, sql } from "kysely";
import { addressRange } from "../../src/core/networks/address.ts";
import { NetworksRepo } from "../../src/core/networks/repo.ts";
import { NetworksService } from "../../src/core/networks/service.ts";
import { createDemoSeeder } from "../../src/core/reports/demo.ts";
import { ConflictError, ValidationError } from "../../src/core/shared/errors.ts";
import { migrate } from "../../src/db/migrate.ts";
import type { Schema } from "../../src/db/schema.ts";
import { dialects, withDatabase } from "../support/databases.ts";

const NOW = "2026-01-01T00:00:00Z";

/** Accounts a and b, made directly in the database; their ids. */
async function twoAccounts(db: Kysely<Schema>): Promise<number[]> {
  for (const name of ["a", "b"]) {
    await sql`insert into accounts (name, created) values (${name}, ${NOW})`.execute(db);
  }
  return (await db.selectFrom("accounts").select("id").orderBy("id").execute()).map((r) => r.id);
}
/** docs/radius.md's query for networks of different accounts that share addresses. */
const OVERLAPS = `select a.id as first, b.id as second from nas a join nas b
  on a.account_id <> b.account_id and a.id < b.id
  and a.range_start <= b.range_end and b.range_start <= a.range_end
  order by a.id, b.id`;

for (const { dialect, skip } of await dialects()) {
  describe(`networks across migration 011 on ${dialect}`, { skip }, () => {
    test("range keys are filled in, old overlaps stay and are listed, new ones are refused", async () => {
      await withDatabase(
        dialect,
        async (database) => {
          const { db } = database;
          for (const name of ["a", "b"]) {
            await sql`insert into accounts (name, created) values (${name}, ${NOW})`.execute(db);
          }
          const [a, b] = (await db.selectFrom("accounts").select("id").orderBy("id").execute()).map(
            (r) => r.id,
          );
          const rows: [number, string][] = [
            [a!, "10.0.0.0/24"],
            [b!, "10.0.0.5"],
            [a!, "0.0.0.0/0"],
            [b!, "192.0.2.7"],
            [a!, "198.51.100.128/25"],
            [a!, "10.255.255.255"],
            [b!, "2001:db8::/32"],
            [a!, "2001:db8:1:2:3:4:5:6"],
            [b!, "fe80::/10"],
            [a!, "::/0"],
            [b!, "2001:db8:ffff::/127"],
            [a!, "not an address"],
          ];
          for (const [account, nasname] of rows) {
            await sql`insert into nas (nasname, shortname, secret, account_id, name, created, updated)
              values (${nasname}, 'x', 'secret-secret', ${account}, ${nasname}, ${NOW}, ${NOW})`.execute(db);
          }

          await migrate(database);
          const stored = await db
            .selectFrom("nas")
            .select(["id", "nasname", "range_start", "range_end"])
            .orderBy("id")
            .execute();
          for (const row of stored) {
            if (row.nasname === "not an address") {
              assert.deepEqual([row.range_start, row.range_end], [null, null]);
              continue;
            }
            const { start, end } = addressRange(row.nasname);
            assert.deepEqual([row.range_start, row.range_end], [start, end], row.nasname);
          }
          const byName = new Map(stored.map((row) => [row.nasname, row]));
          assert.deepEqual(
            [byName.get("10.0.0.0/24")?.range_start, byName.get("10.0.0.0/24")?.range_end],
            ["40a000000", "40a0000ff"],
          );
          assert.deepEqual(
            [byName.get("2001:db8::/32")?.range_start, byName.get("2001:db8::/32")?.range_end],
            [`620010db8${"0".repeat(24)}`, `620010db8${"f".repeat(24)}`],
          );

          // docs/radius.md's query lists the pairs that overlap across accounts, and only those.
          const id = (nasname: string) => byName.get(nasname)!.id;
          const pairs = (await sql<{ first: number; second: number }>`${sql.raw(OVERLAPS)}`.execute(db)).rows;
          assert.deepEqual(
            pairs.map((p) => [Number(p.first), Number(p.second)]),
            [
              [id("10.0.0.0/24"), id("10.0.0.5")],
              [id("10.0.0.5"), id("0.0.0.0/0")],
              [id("0.0.0.0/0"), id("192.0.2.7")],
              [id("2001:db8::/32"), id("2001:db8:1:2:3:4:5:6")],
              [id("2001:db8::/32"), id("::/0")],
              [id("fe80::/10"), id("::/0")],
              [id("::/0"), id("2001:db8:ffff::/127")],
            ],
          );

          // Lookups are as before the migration: the narrowest network holding the source.
          const networks = new NetworksService(new NetworksRepo(db, dialect));
          const owner = async (ip: string) => (await networks.findClientByAddress(ip))?.nasname;
          assert.equal(await owner("10.0.0.5"), "10.0.0.5");
          assert.equal(await owner("10.0.0.6"), "10.0.0.0/24");
          assert.equal(await owner("10.1.0.1"), "0.0.0.0/0");
          // Networks that overlap another account's can still be renamed; moving them is checked.
          await networks.update(b!, id("10.0.0.5"), { name: "renamed" });
          await assert.rejects(networks.update(b!, id("10.0.0.5"), { nas_ip: "10.0.0.6" }), ConflictError);
          // And no new overlap gets in.
          await assert.rejects(networks.create(b!, { name: "new", nas_ip: "10.0.0.128/25" }), ConflictError);
          await assert.rejects(networks.create(b!, { name: "new", nas_ip: "172.16.0.1" }), ConflictError);
          await assert.rejects(networks.create(b!, { name: "new", nas_ip: "fe80::1:2" }), ConflictError);
          // Within a's own 0.0.0.0/0, clear of b's networks: fine.
          const inside = await networks.create(a!, { name: "new", nas_ip: "10.200.0.0/16" });
          assert.equal(await owner("10.200.1.1"), inside.network.nas_ip);

          // The ranges wider than /16 and /48 are listed for the operator (start-up, networks list).
          assert.deepEqual(
            (await networks.tooWide()).map((n) => n.nas_ip),
            ["0.0.0.0/0", "2001:db8::/32", "fe80::/10", "::/0"],
          );
          // a's 0.0.0.0/0 cannot move to another too-wide range; narrowed, it frees the rest for b.
          await assert.rejects(
            networks.update(a!, id("0.0.0.0/0"), { nas_ip: "0.0.0.0/1" }),
            ValidationError,
          );
          await networks.update(a!, id("0.0.0.0/0"), { nas_ip: "198.51.0.0/16" });
          await networks.create(b!, { name: "new", nas_ip: "172.16.0.1" });
          assert.equal(await owner("10.1.0.1"), undefined);
        },
        "009_console_pending_secrets",
      );
    });
  });
}

for (const { dialect, skip } of await dialects()) {
  describe(`the demo seed's networks on ${dialect}`, { skip }, () => {
    test("keep apart from other accounts' networks, with their range keys", async () => {
      await withDatabase(dialect, async (database) => {
        const { db } = database;
        const [a, b] = await twoAccounts(db);
        // Account a holds the start of the demo range (198.18.0.0/15), where the seed would begin.
        const networks = new NetworksService(new NetworksRepo(db, dialect));
        await networks.create(a!, { name: "a", nas_ip: "198.18.0.0/24" });
        await createDemoSeeder(database).seed(b!, { days: 1, users: 20, aps: 30 });
        const seeded = await db
          .selectFrom("nas")
          .select(["nasname", "range_start", "range_end"])
          .where("account_id", "=", b!)
          .execute();
        assert.equal(seeded.length, 3);
        for (const row of seeded) {
          assert.ok(!row.nasname.startsWith("198.18.0."), row.nasname);
          const { start, end } = addressRange(row.nasname);
          assert.deepEqual([row.range_start, row.range_end], [start, end]);
        }
        await assert.rejects(networks.create(a!, { name: "a", nas_ip: "198.18.0.0/16" }), ConflictError);
      });
    });
  });
}

for (const { dialect, skip } of await dialects()) {
  describe(`one account cannot claim the world on ${dialect}`, { skip }, () => {
    test("ranges wider than /16 and /48 are refused, so a second account can still add its network", async () => {
      await withDatabase(dialect, async (database) => {
        const { db } = database;
        const [a, b] = await twoAccounts(db);
        const networks = new NetworksService(new NetworksRepo(db, dialect));
        for (const nasIp of ["0.0.0.0/0", "10.0.0.0/8", "128.0.0.0/1", "::/0", "2001:db8::/32", "2000::/3"]) {
          await assert.rejects(
            networks.create(a!, { name: "world", nas_ip: nasIp }),
            (error: unknown) =>
              error instanceof ValidationError &&
              /^nas_ip \S+ is wider than this server allows: /.test(error.message),
            nasIp,
          );
        }
        assert.equal((await db.selectFrom("nas").select("id").execute()).length, 0);
        // a takes a site-sized range of each family; b adds its own beside them.
        await networks.create(a!, { name: "a", nas_ip: "10.1.0.0/16" });
        await networks.create(a!, { name: "a6", nas_ip: "2001:db8:1::/48" });
        const theirs = await networks.create(b!, { name: "b", nas_ip: "10.2.3.0/24" });
        const theirs6 = await networks.create(b!, { name: "b6", nas_ip: "2001:db8:2::/48" });
        assert.equal((await networks.findClientByAddress("10.2.3.4"))?.id, theirs.network.id);
        assert.equal((await networks.findClientByAddress("2001:db8:2::9"))?.id, theirs6.network.id);
      });
    });
  });
}
