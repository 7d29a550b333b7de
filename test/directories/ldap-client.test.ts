// The directory client (src/core/directories/ldap.ts) on its own: searches and binds against a real
// slapd, many at once on shared connections, each answer reaching its own caller; and a server that
// accepts connections but never answers: every operation fails within its bound (ldapts's timeout
// per request), the connection is dropped, the breaker opens (issue 30 point 4).
import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { DirectoryClient, DirectoryUnavailable } from "../../src/core/directories/ldap.ts";
import { PEOPLE, SERVICE_DN, SERVICE_PASSWORD, type Slapd, startSlapd, userDn } from "../support/slapd.ts";

const settings = {
  startTls: false,
  caPem: "",
  connectTimeoutMs: 500,
  timeoutMs: 300,
  poolSize: 4,
  breakerFailures: 2,
  breakerCooldownMs: 60_000,
};
const service = { dn: SERVICE_DN, password: SERVICE_PASSWORD };
const USERS = 40;
const uid = (n: number) => `client${String(n).padStart(3, "0")}`;

describe("directory client", () => {
  let slapd: Slapd;
  let client: DirectoryClient;

  before(async () => {
    const users = Array.from({ length: USERS }, (_, n) => ({ uid: uid(n), password: `Pw-${n}-x` }));
    slapd = await startSlapd({ users });
    // A bound far above a busy machine's slowest answer: this client must never time out.
    client = new DirectoryClient([slapd.url], { ...settings, timeoutMs: 5_000 }, service);
  });

  after(async () => {
    await client?.close();
    await slapd?.stop();
  });

  test("searches and binds at once on shared connections each get their own answer", async () => {
    const searches = Array.from({ length: USERS }, (_, n) =>
      client.search({ base: PEOPLE, scope: "sub", filter: `(uid=${uid(n)})`, attributes: ["uid"] }),
    );
    const found = await Promise.all(searches);
    found.forEach(({ entries }, n) => {
      assert.equal(entries.length, 1);
      assert.equal(entries[0]!.dn, userDn(uid(n)));
      assert.equal(entries[0]!.uid, uid(n));
    });
    // Ten times as many binds as the pool has connections: the rest wait their turn.
    const binds = await Promise.all(
      Array.from({ length: USERS }, (_, n) =>
        client.checkPassword(userDn(uid(n)), n % 2 === 0 ? `Pw-${n}-x` : "wrong"),
      ),
    );
    assert.deepEqual(
      binds,
      Array.from({ length: USERS }, (_, n) => n % 2 === 0),
    );
    assert.equal(client.status()[0]!.state, "closed");
  });

  test("a server that never answers: each operation fails within its bound, then the breaker opens", {
    timeout: 20_000,
  }, async () => {
    const held: net.Socket[] = [];
    let closed = 0;
    const silent = net.createServer((socket) => {
      held.push(socket);
      // Reads what the client sends (its binds and searches) and never answers.
      socket.resume();
      socket.on("close", () => closed++);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as net.AddressInfo).port;
    const mute = new DirectoryClient([`ldap://127.0.0.1:${port}`], settings, service);
    try {
      for (let attempt = 0; attempt < settings.breakerFailures; attempt++) {
        const started = Date.now();
        await assert.rejects(
          mute.search({ base: PEOPLE, scope: "sub", filter: "(uid=x)", attributes: ["uid"] }),
          (error: Error) => error instanceof DirectoryUnavailable && /timed out/.test(error.message),
        );
        const took = Date.now() - started;
        // The service's bind is the first operation that waits: it fails at its bound.
        assert.ok(took >= settings.timeoutMs - 5, `failed after ${took} ms, before its bound`);
        assert.ok(took < settings.timeoutMs + 1_000, `took ${took} ms`);
      }
      // The bound dropped each connection it gave up on.
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.ok(held.length >= settings.breakerFailures);
      assert.equal(closed, held.length);
      assert.equal(mute.status()[0]!.state, "open");
      const started = Date.now();
      await assert.rejects(mute.checkPassword(userDn("x"), "pw"), /circuit open/);
      assert.ok(Date.now() - started < 100, "an open circuit answers at once");
    } finally {
      await mute.close();
      for (const s of held) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
