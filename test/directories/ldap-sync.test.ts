// Directory sync (issue 30 point 2) and TLS against a real slapd, on each dialect: `wisp directory
// create` and `wisp directory sync` (a CLI process) pull 10,000 users page by page (RFC 2696) with
// a mapped group, report what changed; a second sync changes nothing; a user disabled or removed
// in the directory is disabled by the next sync (its sessions' disconnection queued); the
// scheduled sync runs only when its interval has passed. ldaps:// with the CA given works; a
// certificate that does not name the host is refused; StartTLS works; the bind password never shows.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { createCore } from "../../src/core/index.ts";
import { openMigratedDatabase } from "../../src/startup.ts";
import { createTestDatabase, dialects, type TestDatabase } from "../support/databases.ts";
import { databaseEnv, wisp } from "../support/processes.ts";
import {
  ADMIN_DN,
  ADMIN_PASSWORD,
  GROUPS,
  PEOPLE,
  SERVICE_DN,
  SERVICE_PASSWORD,
  type Slapd,
  startSlapd,
  userDn,
  userLdif,
} from "../support/slapd.ts";

const USERS = 10_000;

/** The core on a test database, in this process (to seed and to look). */
async function coreOf(database: TestDatabase) {
  const db = await openMigratedDatabase({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
  return createCore(db, { publicUrl: "http://127.0.0.1", dataDir: database.dataDir });
}

function bigLdif(dir: string): string {
  const file = path.join(dir, "users.ldif");
  const fd = fs.openSync(file, "w");
  for (let i = 0; i < USERS; i++) {
    const uid = `user${String(i).padStart(5, "0")}`;
    fs.writeSync(fd, userLdif({ uid, password: `pw-${i}`, mail: `${uid}@wisp.test`, cn: `User ${i}` }));
  }
  // Every other user is in the mapped group.
  fs.writeSync(fd, `dn: cn=wifi,${GROUPS}\nobjectClass: groupOfNames\ncn: wifi\n`);
  for (let i = 0; i < USERS; i += 2)
    fs.writeSync(fd, `member: ${userDn(`user${String(i).padStart(5, "0")}`)}\n`);
  fs.writeSync(fd, "\n");
  fs.closeSync(fd);
  return file;
}

let slapd: Slapd;
before(async () => {
  const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "wisp-ldif-"));
  slapd = await startSlapd({ ldifFile: bigLdif(dir) });
});
after(() => slapd?.stop());

for (const { dialect, skip } of await dialects()) {
  describe(`directory sync on ${dialect}`, { skip }, () => {
    let database: TestDatabase;
    let env: Record<string, string | undefined>;
    before(async () => {
      database = await createTestDatabase(dialect);
      env = databaseEnv(database);
    });

    test(`wisp directory sync pulls ${USERS} users page by page, then only what changed`, async () => {
      const core = await coreOf(database);
      try {
        const account = await core.accounts.resolve(undefined);
        await core.groups.create(account.id, { name: "wifi-users" });
      } finally {
        await core.database.close();
      }
      const again = await wisp(
        [
          "directory",
          "create",
          "corp",
          "--server",
          slapd.url,
          "--bind-dn",
          SERVICE_DN,
          "--bind-password-stdin",
        ]
          .concat(["--user-base", PEOPLE, "--set", "user_filter=(objectClass=inetOrgPerson)"])
          .concat(["--set", `group_base=${GROUPS}`, "--map", "wifi=wifi-users"]),
        env,
        SERVICE_PASSWORD,
      );
      assert.equal(again.code, 0, again.stderr);
      assert.ok(again.stdout.includes("set (never shown)"));
      assert.ok(!again.stdout.includes(SERVICE_PASSWORD) && !again.stderr.includes(SERVICE_PASSWORD));
      assert.match((await wisp(["directory", "list"], env)).stdout, /corp/);

      const started = Date.now();
      const first = await wisp(["directory", "sync", "corp", "--json"], env);
      const seconds = (Date.now() - started) / 1000;
      assert.equal(first.code, 0, first.stderr);
      const report = JSON.parse(first.stdout);
      console.log(
        `# ${dialect}: first sync of ${USERS} users in ${seconds.toFixed(1)} s (CLI process included)`,
      );
      assert.equal(report.ok, true);
      assert.equal(report.seen, USERS);
      assert.equal(report.counts.created, USERS);
      assert.equal(report.changes.length + report.more, USERS);

      const check = await coreOf(database);
      const account = await check.accounts.resolve(undefined);
      const ldap = (tool: string, input: string) =>
        execFileSync(tool, ["-x", "-H", slapd.url, "-D", ADMIN_DN, "-w", ADMIN_PASSWORD], { input });
      try {
        // Later syncs in this process (the same service the CLI, API and job call).
        const t2 = Date.now();
        const second = await check.directories.sync(account.id, "corp");
        console.log(`# ${dialect}: a sync with nothing changed: ${((Date.now() - t2) / 1000).toFixed(1)} s`);
        assert.equal(second.counts.unchanged, USERS);
        assert.equal(second.changes.length, 0);

        ldap(
          "ldapmodify",
          `dn: ${userDn("user00002")}\nchangetype: modify\nreplace: mail\nmail: new@wisp.test\n`,
        );
        ldap("ldapmodify", `dn: ${userDn("user00003")}\nchangetype: delete\n`);
        const third = await check.directories.sync(account.id, "corp");
        assert.equal(third.counts.updated, 1);
        assert.equal(third.counts.removed, 1);
        assert.deepEqual(
          third.changes.map((c) => [c.change, c.username]),
          [
            ["updated", "user00002"],
            ["removed", "user00003"],
          ],
        );
        const db = check.database.db;
        const gone = await db
          .selectFrom("users")
          .select("status")
          .where("username", "=", "user00003")
          .executeTakeFirst();
        assert.equal(gone?.status, "disabled");
        const members = await db
          .selectFrom("radusergroup")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("groupname", "=", "wifi-users")
          .executeTakeFirstOrThrow();
        assert.equal(Number(members.n), USERS / 2);
        const jobs = await db
          .selectFrom("jobs")
          .select("payload")
          .where("kind", "=", "sessions.disconnect")
          .execute();
        assert.ok(jobs.some((j) => String(j.payload).includes("user00003")));
        // The scheduled sync: interval 0 never, else once it has passed since the last run (a
        // second directory over ten of the users, to keep this quick).
        assert.deepEqual(await check.directories.syncDue(), []);
        await check.directories.create(account.id, {
          name: "few",
          servers: [slapd.url],
          bind_dn: SERVICE_DN,
          bind_password: SERVICE_PASSWORD,
          user_base: PEOPLE,
          user_filter: "(uid=user0010*)",
          sync_interval: 5,
        });
        const due = await check.directories.syncDue();
        assert.deepEqual(
          due.map((r) => [r.directory, r.seen, r.counts.conflict]),
          [["few", 10, 10]],
          "never synced: due; its users are corp's (conflicts, left alone)",
        );
        assert.deepEqual(await check.directories.syncDue(), [], "synced less than 5 minutes ago");
        assert.equal((await check.directories.syncDue(Date.now() + 6 * 60_000)).length, 1);
      } finally {
        await check.directories.runtime.close();
        await check.database.close();
        // The directory is shared with the next dialect's run: as it was.
        ldap(
          "ldapadd",
          userLdif({ uid: "user00003", password: "pw-3", mail: "user00003@wisp.test", cn: "User 3" }),
        );
        ldap(
          "ldapmodify",
          `dn: ${userDn("user00002")}\nchangetype: modify\nreplace: mail\nmail: user00002@wisp.test\n`,
        );
      }
    });
  });
}

describe("directory TLS", () => {
  let mismatched: Slapd;
  before(async () => {
    mismatched = await startSlapd({
      certName: "other.example",
      users: [{ uid: "amy", password: "amy-Pw1" }],
    });
  });
  after(() => mismatched?.stop());

  test("ldaps:// with the CA and StartTLS work; a certificate for another name is refused", async () => {
    const database = await createTestDatabase("sqlite");
    const core = await coreOf(database);
    try {
      const account = await core.accounts.resolve(undefined);
      const make = (name: string, servers: string[], ca: string, startTls = false) =>
        core.directories.create(account.id, {
          name,
          servers,
          start_tls: startTls,
          ca_pem: ca,
          bind_dn: SERVICE_DN,
          bind_password: SERVICE_PASSWORD,
          user_base: PEOPLE,
          breaker_failures: 5,
        });
      const good = await make("good", [slapd.ldapsUrl], slapd.caPem);
      const starttls = await make("starttls", [slapd.url], slapd.caPem, true);
      const bad = await make("bad", [mismatched.ldapsUrl], mismatched.caPem);
      const badStart = await make("bad-start", [mismatched.url], mismatched.caPem, true);
      const noCa = await make("no-ca", [slapd.ldapsUrl], "");
      const sources = await core.directories.runtime.sources(account.id);
      const by = (id: number) => sources.find((s) => s.row.id === id)!;
      assert.equal((await by(good.id).findUser("user00001", false))?.user.username, "user00001");
      assert.equal((await by(starttls.id).findUser("user00001", false))?.user.username, "user00001");
      assert.equal(await by(good.id).client.checkPassword(userDn("user00001"), "pw-1"), true);
      for (const refused of [bad, badStart, noCa]) {
        await assert.rejects(by(refused.id).findUser("amy", false), (error: Error) => {
          assert.match(error.message, /altnames|certificate|self.signed|IP: 127\.0\.0\.1/i);
          return true;
        });
      }
      const shown = await core.directories.get(account.id, "bad");
      assert.match(shown.server_status[0]!.last_error, /altnames|IP/);
      assert.equal(JSON.stringify(await core.directories.list(account.id)).includes(SERVICE_PASSWORD), false);
    } finally {
      await core.directories.runtime.close();
      await core.database.close();
    }
  });
});
