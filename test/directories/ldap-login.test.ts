// LDAP as an authentication source (issue 30) against a real slapd, on each dialect: PAP through
// radclient, EAP-TTLS/PAP and PEAP through eapol_test, the portal's password check; shadow users
// with mapped groups (their group's reply items apply); a user disabled or removed in the
// directory; filter injection, empty passwords, referrals; the directory stopped mid-test (local
// users keep logging in, directory users are refused fast, /healthz says so); the API's checks.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { ntPasswordHash } from "../../src/core/aaa/nt-hash.ts";
import { sendRadius } from "../../src/radius/client.ts";
import { dialects } from "../support/databases.ts";
import { type EapTestServer, startEapServer } from "../support/eap-server.ts";
import { eapolTest, eapolTestUnavailable } from "../support/eapol.ts";
import { radclient } from "../support/freeradius-lab.ts";
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
} from "../support/slapd.ts";

const missing = eapolTestUnavailable();
const hex = (password: string) => ntPasswordHash(password).toString("hex").toUpperCase();

for (const { dialect, skip } of await dialects()) {
  describe(`LDAP logins on ${dialect}`, { skip: skip || missing || false }, () => {
    let slapd: Slapd;
    let lab: EapTestServer;
    let key: string;
    let directoryId: number;
    let staffId: number;

    const pap = (username: string, password: string) =>
      radclient(lab.authPort, "auth", lab.secret, [
        ["User-Name", username],
        ["User-Password", password],
        ["NAS-IP-Address", "127.0.0.1"],
      ]);
    const lastReason = async (username: string) => {
      await lab.server.core.aaa.drain();
      const row = await lab.server.core.database.db
        .selectFrom("radpostauth")
        .select(["reason", "user_id"])
        .where("username", "=", username)
        .orderBy("id", "desc")
        .executeTakeFirst();
      return row;
    };
    const ttls = (identity: string, password: string) =>
      eapolTest({
        port: lab.authPort,
        secret: lab.secret,
        raw: { eap: "TTLS" },
        network: { identity, password, phase2: "auth=PAP", ca_cert: lab.certs.caFile },
      });
    const peap = (identity: string, password: string) =>
      eapolTest({
        port: lab.authPort,
        secret: lab.secret,
        raw: { eap: "PEAP" },
        network: { identity, password, phase2: "autheap=MSCHAPV2", ca_cert: lab.certs.caFile },
      });

    before(async () => {
      slapd = await startSlapd({
        users: [
          {
            uid: "alice",
            password: "alice-Pw1",
            cn: "Alice Liddell",
            mail: "alice@wisp.test",
            userAccountControl: 512,
          },
          { uid: "bob", password: "bob-Pw2", ntHash: hex("bob-Pw2"), userAccountControl: 512 },
          { uid: "carol", password: "carol-Pw3", userAccountControl: 514 },
          { uid: "dave", password: "dave-Pw4" },
        ],
        groups: [{ cn: "wifi-staff", members: [userDn("alice"), userDn("bob")] }],
        extraLdif:
          `dn: uid=refuser,${PEOPLE}\nobjectClass: referral\nobjectClass: extensibleObject\nuid: refuser\n` +
          `ref: ldap://192.0.2.1:389/uid=refuser,${PEOPLE}\n\n`,
      });
      // On SQLite the directory clients run on their worker thread (the default), on PostgreSQL in the
      // main thread: both paths answer the same logins.
      lab = await startEapServer({ dialect, env: { DIRECTORY_WORKER: dialect === "sqlite" ? "1" : "0" } });
      key = await lab.server.key("default");
      const staff = await lab.server.core.groups.create(lab.accountId, { name: "staff" });
      staffId = staff.id;
      await lab.server.core.attributes.addToGroup(lab.accountId, staff.id, {
        table: "radgroupreply",
        attribute: "Session-Timeout",
        operator: ":=",
        value: "1234",
      });
      await lab.user("local", "local-Pw9");
      const created = await lab.server.call("POST", "/api/directories", {
        key,
        body: {
          name: "corp",
          servers: [slapd.url],
          bind_dn: SERVICE_DN,
          bind_password: SERVICE_PASSWORD,
          user_base: PEOPLE,
          user_filter: "(objectClass=inetOrgPerson)",
          disabled_mode: "ad",
          nt_hash_attribute: "sambaNTPassword",
          group_base: GROUPS,
          group_mappings: [{ directory_group: "wifi-staff", group: "staff" }],
          breaker_failures: 2,
          // Long enough that a busy machine's slow steps below still see the circuit open.
          breaker_cooldown_seconds: 3,
          connect_timeout_ms: 500,
          timeout_ms: 1000,
        },
      });
      assert.equal(created.status, 201, created.text);
      directoryId = created.body.id;
      assert.equal(created.body.bind_password_set, true);
      assert.ok(!created.text.includes(SERVICE_PASSWORD), "the bind password is never returned");
    });
    after(async () => {
      await lab?.stop();
      await slapd?.stop();
    });

    test("PAP: a directory user logs in by binding, gets a shadow user with the mapped group's items", async () => {
      const ok = await pap("alice", "alice-Pw1");
      assert.equal(ok.code, "Access-Accept");
      assert.deepEqual(
        ok.attributes.find(([a]) => a === "Session-Timeout"),
        ["Session-Timeout", "1234"],
      );
      const users = await lab.server.call("GET", "/api/users?limit=100", { key });
      const alice = users.body.data.find((u: { username: string }) => u.username === "alice");
      assert.equal(alice.email, "alice@wisp.test");
      assert.equal(alice.fullname, "Alice Liddell");
      assert.equal((await lastReason("alice"))?.user_id, alice.id);
      const check = await lab.server.core.database.db
        .selectFrom("radcheck")
        .select("attribute")
        .where("username", "=", "alice")
        .execute();
      assert.deepEqual(check, [], "no password is kept for a shadow user");
      // Next login: the shadow is unchanged (nothing written), its items are read once per login
      // and still fresh: an item added to the group since is in the answer.
      await lab.server.core.attributes.addToGroup(lab.accountId, staffId, {
        table: "radgroupreply",
        attribute: "Idle-Timeout",
        operator: ":=",
        value: "321",
      });
      const again = await pap("alice", "alice-Pw1");
      assert.equal(again.code, "Access-Accept");
      assert.deepEqual(
        again.attributes.filter(([a]) => a === "Session-Timeout" || a === "Idle-Timeout").sort(),
        [
          ["Idle-Timeout", "321"],
          ["Session-Timeout", "1234"],
        ],
      );
      assert.equal((await pap("alice", "wrong")).code, "Access-Reject");
      assert.match((await lastReason("alice"))?.reason ?? "", /wrong password/);
      assert.equal((await pap("local", "local-Pw9")).code, "Access-Accept");
      // The portal's password sign-in asks the same rules.
      const portal = await lab.server.core.aaa.precheck(lab.accountId, {
        username: "alice",
        password: "alice-Pw1",
        clientMac: null,
      });
      assert.equal(portal.accepted, true);
    });

    test("a user disabled in the directory (AD userAccountControl 0x2) is refused", async () => {
      assert.equal((await pap("carol", "carol-Pw3")).code, "Access-Reject");
      assert.match((await lastReason("carol"))?.reason ?? "", /disabled in the directory/);
    });

    test("filter injection, NUL, an empty password and referrals never log anyone in", async () => {
      for (const name of ["*", "al*", "alice)(uid=*", "*)(|(uid=*", "alice\\", "(uid=alice)"]) {
        assert.equal((await pap(name, "alice-Pw1")).code, "Access-Reject", name);
      }
      // The RADIUS door reads User-Name up to its first NUL (as FreeRADIUS prints strings): what
      // follows a NUL never reaches the directory, and another user's password does not help.
      for (const name of ["alice\0", "alice\0)(uid=*", "\0*"]) {
        const answer = await sendRadius({
          code: "Access-Request",
          attributes: [
            ["User-Name", name],
            ["User-Password", "bob-Pw2"],
            ["NAS-IP-Address", "127.0.0.1"],
          ],
          host: "127.0.0.1",
          port: lab.authPort,
          secret: lab.secret,
          timeoutMs: 2000,
          retries: 0,
        });
        assert.equal(answer.type, "Access-Reject", JSON.stringify(name));
      }
      // Straight to the directory: a NUL is escaped (\00), matches no entry, finds nobody.
      const [source] = await lab.server.core.directories.runtime.sources(lab.accountId);
      for (const name of ["alice\0", "alice\0)(uid=*", "\0", "alice "]) {
        assert.equal(await source!.findUser(name, false), null, JSON.stringify(name));
      }
      assert.equal((await source!.findUser("ALICE", false))?.user.username, "alice");
      // RFC 4513 section 5.1.2: an empty password would be an anonymous bind, which slapd accepts.
      assert.equal((await pap("dave", "")).code, "Access-Reject");
      const empty = await lab.server.core.aaa.precheck(lab.accountId, {
        username: "dave",
        password: "",
        clientMac: null,
      });
      assert.equal(empty.accepted, false);
      assert.equal((await pap("dave", "dave-Pw4")).code, "Access-Accept");
      // The referral entry is returned as a continuation reference: not followed, nobody found.
      const referral = await pap("refuser", "anything");
      assert.equal(referral.code, "Access-Reject");
      assert.match((await lastReason("refuser"))?.reason ?? "", /unknown user/);
    });

    test("EAP-TTLS/PAP binds; PEAP works with sambaNTPassword only, and says why otherwise", async () => {
      const [ttlsOk, peapBob] = await Promise.all([ttls("alice", "alice-Pw1"), peap("bob", "bob-Pw2")]);
      // After alice's TTLS login is recorded: her last attempt is then this refusal.
      const peapAlice = await peap("alice", "alice-Pw1");
      assert.ok(ttlsOk.success && ttlsOk.mppeOk, ttlsOk.output.slice(-400));
      assert.ok(peapBob.success && peapBob.mppeOk, peapBob.output.slice(-400));
      assert.equal(peapAlice.success, false);
      assert.match((await lastReason("alice"))?.reason ?? "", /NT hash/);
      assert.equal((await peap("bob", "bob-wrong")).success, false);
    });

    test("removed from the directory: refused at the next login; the sync disables and disconnects", async () => {
      assert.equal((await pap("dave", "dave-Pw4")).code, "Access-Accept");
      execFileSync("ldapdelete", [
        "-x",
        "-H",
        slapd.url,
        "-D",
        ADMIN_DN,
        "-w",
        ADMIN_PASSWORD,
        userDn("dave"),
      ]);
      assert.equal((await pap("dave", "dave-Pw4")).code, "Access-Reject");
      assert.match((await lastReason("dave"))?.reason ?? "", /not found in the directory/);
      const sync = await lab.server.call("POST", `/api/directories/${directoryId}/sync`, { key, body: {} });
      assert.equal(sync.status, 200, sync.text);
      assert.equal(sync.body.ok, true);
      assert.equal(sync.body.counts.removed, 1);
      assert.deepEqual(
        sync.body.changes
          .filter((c: { change: string }) => c.change === "removed")
          .map((c: { username: string }) => c.username),
        ["dave"],
      );
      assert.equal(sync.body.counts.conflict, 0);
      const dave = await lab.server.core.database.db
        .selectFrom("users")
        .select("status")
        .where("username", "=", "dave")
        .executeTakeFirstOrThrow();
      assert.equal(dave.status, "disabled");
      const jobs = await lab.server.core.database.db
        .selectFrom("jobs")
        .select("payload")
        .where("kind", "=", "sessions.disconnect")
        .execute();
      assert.ok(
        jobs.some((j) => String(j.payload).includes('"dave"')),
        JSON.stringify(jobs),
      );
    });

    test("the directory stopped: local users go on, directory users fail fast, /healthz shows it", async () => {
      await slapd.stop();
      try {
        const started = Date.now();
        assert.equal((await pap("alice", "alice-Pw1")).code, "Access-Reject");
        assert.match((await lastReason("alice"))?.reason ?? "", /directory unavailable/);
        assert.equal((await pap("bob", "bob-Pw2")).code, "Access-Reject");
        // Two failures opened the circuit: the next one does not even try.
        const fast = Date.now();
        assert.equal((await pap("alice", "alice-Pw1")).code, "Access-Reject");
        assert.match((await lastReason("alice"))?.reason ?? "", /circuit open/);
        assert.ok(Date.now() - fast < 1000, "refused without waiting");
        assert.ok(Date.now() - started < 5000);
        assert.equal((await pap("local", "local-Pw9")).code, "Access-Accept");
        const health = await (await fetch(`${lab.server.url}/healthz`)).json();
        assert.equal(health.status, "degraded");
        assert.deepEqual(health.directories?.[0]?.state, "down");
        const shown = await lab.server.call("GET", `/api/directories/${directoryId}`, { key });
        assert.equal(shown.body.server_status[0].state, "open");
      } finally {
        await slapd.start();
      }
      // After the cooldown, one probe closes the circuit again.
      const until = Date.now() + 10_000;
      let code = "";
      while (Date.now() < until && code !== "Access-Accept") {
        code = (await pap("alice", "alice-Pw1")).code;
        if (code !== "Access-Accept") await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(code, "Access-Accept");
      const health = await (await fetch(`${lab.server.url}/healthz`)).json();
      assert.equal(health.status, "ok");
    });

    test("the API refuses bad settings with field errors", async () => {
      const bad = async (body: object, field: string) => {
        const answer = await lab.server.call("PATCH", `/api/directories/${directoryId}`, { key, body });
        assert.equal(answer.status, 400, answer.text);
        assert.ok(answer.text.includes(field), answer.text);
      };
      await bad({ user_filter: "(uid=a" }, "user_filter");
      await bad({ user_filter: "(&(objectClass=person)" }, "user_filter");
      await bad({ user_filter: "uid=a" }, "user_filter");
      await bad({ servers: ["http://x"] }, "servers");
      await bad({ ca_pem: "not a pem" }, "ca_pem");
      await bad({ username_attribute: "u id" }, "username_attribute");
      await bad({ group_mappings: [{ directory_group: "x", group: "nope" }] }, "group_mappings");
      await bad({ name: "other" }, "name");
      const dup = await lab.server.call("POST", "/api/directories", {
        key,
        body: { name: "corp", servers: [slapd.url], user_base: PEOPLE },
      });
      assert.equal(dup.status, 409);
    });
  });
}
