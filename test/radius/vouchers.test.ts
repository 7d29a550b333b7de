// Voucher logins through real RADIUS packets: code as username and password ignoring case,
// validity from the first login, usage_limit distinct devices, session_timeout, status moves.
// Stock FreeRADIUS cannot express these rules, so they are Wisp's alone (deploy/freeradius/README.md).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { accessRequestChap, accessRequestPap, sendRadius } from "../../src/radius/client.ts";
import type { AttributeInput } from "../../src/radius/packet.ts";
import { dialects } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "voucher-secret-1";

for (const { dialect, skip } of await dialects()) {
  describe(`voucher logins over RADIUS on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let port: number;
    let accountId: number;

    before(async () => {
      port = await freeUdpPort();
      server = await startTestServer({
        dialect,
        env: {
          RADIUS_HOST: "127.0.0.1",
          RADIUS_AUTH_PORT: String(port),
          RADIUS_ACCT_PORT: String(await freeUdpPort()),
        },
      });
      accountId = (await server.account("default")).id;
      await server.core.networks.create(accountId, { name: "cafe", nas_ip: "127.0.0.1", secret: SECRET });
    });
    after(() => server?.stop());

    const device = (mac: string): AttributeInput[] => [
      ["Calling-Station-Id", mac],
      ["Called-Station-Id", "AA-BB-CC-DD-EE-01:Cafe Guest"],
    ];
    const login = async (request: ReturnType<typeof accessRequestPap>) => {
      const answer = await sendRadius({
        host: "127.0.0.1",
        port,
        secret: SECRET,
        timeoutMs: 2000,
        retries: 1,
        ...request,
      });
      const value = (name: string) => answer.attributes.find((a) => a.name === name)?.value;
      return { type: answer.type, sessionTimeout: value("Session-Timeout"), message: value("Reply-Message") };
    };
    const voucher = (id: number) => server.core.vouchers.get(accountId, id);

    test("the code logs in ignoring case; validity starts then; the session is capped", async () => {
      const created = await server.core.vouchers.create(accountId, {
        validity: 3600,
        session_timeout: 600,
        usage_limit: 2,
      });
      assert.equal(created.status, "unused");
      const lower = created.code.toLowerCase();
      const first = await login(accessRequestPap(lower, lower, device("11-22-33-44-55-01")));
      assert.equal(first.type, "Access-Accept", first.message);
      assert.equal(first.sessionTimeout, "600");
      const after = await voucher(created.id);
      assert.equal(after.status, "active");
      assert.equal(after.devices_used, 1);
      assert.ok(after.first_used && after.expires);
      const lasts = (Date.parse(after.expires!) - Date.parse(after.first_used!)) / 1000;
      assert.ok(Math.abs(lasts - 3600) <= 1, `expires ${lasts} s after first use`);
      const events = await server.core.database.db
        .selectFrom("events")
        .selectAll()
        .where("kind", "=", "voucher.activated")
        .execute();
      assert.ok(events.some((e) => JSON.parse(e.data).voucher_id === created.id));
    });

    test("usage_limit counts distinct devices; a known device keeps logging in", async () => {
      const created = await server.core.vouchers.create(accountId, { validity: 3600, usage_limit: 1 });
      const code = created.code;
      assert.equal(
        (await login(accessRequestPap(code, code, device("aa:aa:aa:aa:aa:01")))).type,
        "Access-Accept",
      );
      const second = await login(accessRequestPap(code, code, device("AA-AA-AA-AA-AA-02")));
      assert.equal(second.type, "Access-Reject");
      assert.match(second.message ?? "", /devices/);
      // The first device again, written another way: still the same device.
      assert.equal((await login(accessRequestPap(code, code, device("AAAAAAAAAA01")))).type, "Access-Accept");
      const after = await voucher(created.id);
      assert.equal(after.status, "exhausted");
      assert.equal(after.devices_used, 1);
    });

    test("CHAP works with the code as typed in either case", async () => {
      const created = await server.core.vouchers.create(accountId, { validity: 600 });
      const answer = await login(
        accessRequestChap(
          created.code.toLowerCase(),
          created.code.toLowerCase(),
          device("11:11:11:11:11:11"),
        ),
      );
      assert.equal(answer.type, "Access-Accept", answer.message);
      assert.equal(answer.sessionTimeout, "600", "without session_timeout the session runs to the expiry");
    });

    test("wrong password, expired voucher, unknown code are rejected", async () => {
      const created = await server.core.vouchers.create(accountId, { validity: 600 });
      const wrong = await login(accessRequestPap(created.code, "NOTTHECODE", device("22:22:22:22:22:22")));
      assert.equal(wrong.type, "Access-Reject");
      assert.equal(
        (await voucher(created.id)).status,
        "unused",
        "a failed login does not start the validity",
      );
      assert.equal(
        (await login(accessRequestPap(created.code, created.code, device("22:22:22:22:22:22")))).type,
        "Access-Accept",
      );
      await server.core.database.db
        .updateTable("vouchers")
        .set({ expires: "2000-01-01T00:00:00Z" })
        .where("id", "=", created.id)
        .execute();
      const expired = await login(accessRequestPap(created.code, created.code, device("22:22:22:22:22:22")));
      assert.equal(expired.type, "Access-Reject");
      assert.match(expired.message ?? "", /expired/);
      assert.equal((await voucher(created.id)).status, "expired");
      assert.equal((await login(accessRequestPap("NOSUCHCODE", "NOSUCHCODE"))).type, "Access-Reject");
    });

    test("every voucher attempt is recorded with the voucher, never the password", async () => {
      const rows = await server.core.database.db
        .selectFrom("radpostauth")
        .selectAll()
        .where("voucher_id", "is not", null)
        .execute();
      assert.ok(rows.length >= 8);
      assert.ok(rows.every((r) => r.pass === "" || r.pass === null));
      assert.ok(rows.some((r) => r.reply === "Access-Reject" && r.reason === "wrong password"));
    });
  });
}
