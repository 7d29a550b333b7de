// The directory client (src/core/directories/ldap.ts) on its own, in this thread and on the directory
// worker thread (worker-client.ts): searches and binds against a real slapd, many at once on shared
// connections, each answer reaching its own caller; paged searches; and a server that accepts
// connections but never answers: every operation fails within its bound (ldapts's timeout per
// request), the connection is dropped, the breaker opens (issue 30 point 4). A worker thread that
// dies fails its calls in flight as "directory unavailable" and is replaced.
import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import {
  type ConnectDirectory,
  DirectoryClient,
  type DirectoryConnection,
  DirectoryUnavailable,
} from "../../src/core/directories/ldap.ts";
import { DirectoryThread } from "../../src/core/directories/worker-client.ts";
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

test("DIRECTORY_WORKER: 0 or 1, by default on", () => {
  assert.equal(loadConfig({ DIRECTORY_WORKER: "1" }).directoryWorker, true);
  assert.equal(loadConfig({ DIRECTORY_WORKER: "0" }).directoryWorker, false);
  assert.equal(loadConfig({}).directoryWorker, true);
  assert.throws(() => loadConfig({ DIRECTORY_WORKER: "yes" }), /DIRECTORY_WORKER must be one of 0, 1/);
});

const inThread: ConnectDirectory = (urls, settings, bind) => new DirectoryClient(urls, settings, bind);
const thread = new DirectoryThread();

for (const [where, connect] of [
  ["in this thread", inThread],
  ["on the worker thread", thread.connect],
] as const)
  describe(`directory client ${where}`, () => {
    let slapd: Slapd;
    let client: DirectoryConnection;

    before(async () => {
      const users = Array.from({ length: USERS }, (_, n) => ({ uid: uid(n), password: `Pw-${n}-x` }));
      slapd = await startSlapd({ users });
      // A bound far above a busy machine's slowest answer: this client must never time out.
      client = connect([slapd.url], { ...settings, timeoutMs: 5_000 }, service);
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
      const silent = await silentServer();
      const mute = connect([silent.url], settings, service);
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
        assert.ok(silent.held.length >= settings.breakerFailures);
        assert.equal(silent.closed(), silent.held.length);
        assert.equal(mute.status()[0]!.state, "open");
        const started = Date.now();
        await assert.rejects(mute.checkPassword(userDn("x"), "pw"), /circuit open/);
        assert.ok(Date.now() - started < 100, "an open circuit answers at once");
      } finally {
        await mute.close();
        await silent.close();
      }
    });

    test("an open breaker shows half-open once its cooldown has passed, before any call", {
      timeout: 20_000,
    }, async () => {
      const silent = await silentServer();
      const mute = connect(
        [silent.url],
        { ...settings, breakerFailures: 1, breakerCooldownMs: 500 },
        service,
      );
      try {
        await assert.rejects(
          mute.search({ base: PEOPLE, scope: "sub", filter: "(uid=x)", attributes: ["uid"] }),
          DirectoryUnavailable,
        );
        assert.equal(mute.status()[0]!.state, "open");
        await new Promise((resolve) => setTimeout(resolve, 600));
        assert.equal(mute.status()[0]!.state, "half-open", "the cooldown is over: the next call probes");
      } finally {
        await mute.close();
        await silent.close();
      }
    });

    test("paged searches read a page at a time; one left early ends; binary attributes stay octets", async () => {
      const spec = { base: PEOPLE, scope: "sub" as const, filter: "(uid=client*)", attributes: ["uid"] };
      const sizes: number[] = [];
      for await (const page of client.pages(spec, 15)) sizes.push(page.length);
      assert.deepEqual(sizes, [15, 15, USERS - 30]);
      for await (const page of client.pages(spec, 15)) {
        assert.equal(page.length, 15);
        break;
      }
      const { entries } = await client.search({ ...spec, filter: `(uid=${uid(7)})`, binary: ["uid"] });
      assert.ok(Buffer.isBuffer(entries[0]!.uid), "uid asked for as octets comes back as a Buffer");
      assert.equal(entries[0]!.uid.toString(), uid(7));
    });

    if (connect === thread.connect)
      test("a worker thread that dies: calls in flight fail as unavailable, the next starts a new worker", {
        timeout: 20_000,
      }, async () => {
        await searchInFlight(connect, async (refused) => {
          const replaced = thread.replaced;
          const started = Date.now();
          thread.post(["crash"]);
          await refused;
          assert.ok(Date.now() - started < 5_000, "failed when the worker died, not at its 10 s bound");
          assert.equal(thread.replaced, replaced + 1);
        });
        // The directories' clients are opened again on the new worker.
        const { entries } = await client.search({
          base: PEOPLE,
          scope: "sub",
          filter: `(uid=${uid(3)})`,
          attributes: ["uid"],
        });
        assert.equal(entries[0]!.dn, userDn(uid(3)));
        assert.equal(await client.checkPassword(userDn(uid(4)), "Pw-4-x"), true);
      });

    if (connect === thread.connect)
      test("stopping the worker (the server shutting down) refuses the calls in flight", {
        timeout: 10_000,
      }, async () => {
        await searchInFlight(connect, async (refused) => {
          await thread.stop();
          await refused;
        });
      });
  });

/**
 * Runs `body` while a search waits on a server that never answers (its bound 10 s), with the
 * assertion that the search is refused because the worker thread stopped.
 */
async function searchInFlight(connect: ConnectDirectory, body: (refused: Promise<void>) => Promise<void>) {
  const silent = await silentServer();
  const mute = connect([silent.url], { ...settings, timeoutMs: 10_000 }, service);
  try {
    const refused = assert.rejects(
      mute.search({ base: PEOPLE, scope: "sub", filter: "(uid=x)", attributes: ["uid"] }),
      (error: Error) => error instanceof DirectoryUnavailable && /worker thread stopped/.test(error.message),
    );
    while (silent.held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await body(refused);
  } finally {
    await mute.close();
    await silent.close();
  }
}

after(() => thread.stop());

/** A TCP server that accepts connections, reads what clients send (binds, searches), never answers. */
async function silentServer() {
  const held: net.Socket[] = [];
  let closed = 0;
  const server = net.createServer((socket) => {
    held.push(socket);
    socket.resume();
    socket.on("close", () => closed++);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `ldap://127.0.0.1:${port}`,
    held,
    closed: () => closed,
    close: async () => {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
