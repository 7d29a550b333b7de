// TLS of EAP conversations on worker threads (issue 32, EAP_TLS_WORKERS): PEAP, TTLS and EAP-TLS
// log in through eapol_test with their conversations spread over two workers; a worker that dies
// fails its conversations cleanly (Access-Reject, conversation freed) and is replaced, and the
// server goes on logging users in.
import assert from "node:assert/strict";
import { availableParallelism } from "node:os";
import { after, before, describe, test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import { type EapTestServer, peapLogin, startEapServer } from "../support/eap-server.ts";
import { PEAP, Supplicant } from "../support/eap-supplicant.ts";
import { eapolTest, eapolTestUnavailable } from "../support/eapol.ts";

test("EAP_TLS_WORKERS: a whole number from 0 to 256", () => {
  assert.equal(loadConfig({ EAP_TLS_WORKERS: "3" }).eapLimits.tlsWorkers, 3);
  assert.equal(loadConfig({ EAP_TLS_WORKERS: "0" }).eapLimits.tlsWorkers, 0);
  assert.throws(() => loadConfig({ EAP_TLS_WORKERS: "-1" }), /EAP_TLS_WORKERS must be a whole number/);
  assert.throws(() => loadConfig({ EAP_TLS_WORKERS: "257" }), /EAP_TLS_WORKERS must be between 0 and 256/);
  // Unset: TLS in the main thread on 2 cores or fewer, else all cores but one (at most 16).
  const cores = availableParallelism();
  assert.equal(loadConfig({}).eapLimits.tlsWorkers, cores > 2 ? Math.min(16, cores - 1) : 0);
});

const missing = eapolTestUnavailable();
if (missing) console.log(`# skipping EAP worker tests: ${missing}`);
describe("EAP TLS on worker threads", { skip: missing ?? false }, () => {
  let lab: EapTestServer;
  before(async () => {
    lab = await startEapServer({ env: { EAP_TLS_WORKERS: "2" } });
    await lab.user("alice", "alice-pw");
  });
  after(() => lab?.stop());
  const engine = () => lab.server.radius.eap!;

  test("PEAP, TTLS/PAP and EAP-TLS log in with MPPE keys, their TLS on the workers", async () => {
    assert.equal(engine().pool?.size, 2, "two TLS worker threads");
    assert.equal(engine().pool?.workers.length, 0, "started with the first conversation");
    const alice = lab.certs.client("alice");
    const [peap, ttls, tls] = await Promise.all([
      peapLogin(lab),
      eapolTest({
        port: lab.authPort,
        secret: lab.secret,
        raw: { eap: "TTLS" },
        network: { identity: "alice", password: "alice-pw", phase2: "auth=PAP", ca_cert: lab.certs.caFile },
      }),
      eapolTest({
        port: lab.authPort,
        secret: lab.secret,
        raw: { eap: "TLS" },
        network: {
          identity: "alice",
          client_cert: alice.cert,
          private_key: alice.key,
          ca_cert: lab.certs.caFile,
        },
      }),
    ]);
    for (const [result, name] of [
      [peap, "PEAP"],
      [ttls, "TTLS"],
      [tls, "EAP-TLS"],
    ] as const) {
      assert.ok(result.success, `${name} logs in:\n${result.output.slice(-1500)}`);
      assert.ok(result.mppeOk, `${name}: MPPE keys match`);
    }
    assert.equal(engine().pool?.workers.length, 2);
    const wrong = await peapLogin(lab, "alice", "not-her-password");
    assert.equal(wrong.code, 252, "a wrong password is still rejected");
    assert.equal(engine().openConversations, 0);
  });

  test("a worker that dies fails its conversations cleanly and is replaced", async () => {
    const peer = new Supplicant(lab, PEAP);
    try {
      await peer.begin();
      assert.equal((await peer.hello()).type, "Access-Challenge", "the server's first flight");
      assert.equal(engine().openConversations, 1);
      const pool = engine().pool!;
      const replacedBefore = pool.replaced;
      // Both workers: whichever holds this conversation's TLS is gone.
      await Promise.all(pool.workers.map((worker) => worker.terminate()));
      for (let i = 0; i < 100 && pool.replaced < replacedBefore + 2; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(pool.replaced, replacedBefore + 2, "both workers replaced");
      const answer = await peer.exchange(peer.takeOutgoing());
      assert.equal(answer.type, "Access-Reject", "the conversation fails, the supplicant starts over");
      const reason = answer.attributes.find((a) => a.name === "Reply-Message")?.value;
      assert.match(String(reason), /TLS worker thread stopped/);
      assert.equal(engine().openConversations, 0, "conversation freed");
    } finally {
      peer.close();
    }
    const again = await peapLogin(lab);
    assert.ok(
      again.success && again.mppeOk,
      `a new login succeeds on the new workers:\n${again.output.slice(-1500)}`,
    );
    assert.equal(engine().pool?.size, 2);
  });

  test("workers that crash mid-login: those logins fail cleanly and are recorded, a retry logs in, the process carries on", async () => {
    const pool = engine().pool!;
    const replacedBefore = pool.replaced;
    const workerFailures = () =>
      lab.server.core.database.db
        .selectFrom("radpostauth")
        .select(["username", "reply", "reason"])
        .where("reason", "like", "%TLS worker thread stopped%")
        .orderBy("id")
        .execute();
    const recordedBefore = (await workerFailures()).length;
    const login = () => peapLogin(lab);
    const running = Array.from({ length: 8 }, login);
    // Crash both workers (an uncaught error, as a bug would) while they hold conversations' TLS.
    for (let i = 0; i < 500 && pool.openTunnels < 2; i++) await new Promise((r) => setTimeout(r, 2));
    assert.ok(pool.openTunnels >= 2, "logins in flight on the workers");
    for (const worker of pool.workers) worker.postMessage([["crash"]]);
    const results = await Promise.all(running);
    for (const r of results) {
      assert.ok(r.code === 0 || r.code === 252, `an EAP answer, not a timeout (exit ${r.code})`);
      if (r.code === 0) assert.ok(r.success && r.mppeOk, "a login the crash missed completes");
    }
    const failed = results.filter((r) => r.code === 252).length;
    assert.ok(failed >= 1, "the crash failed the logins it held");
    // A worker that held none of the last logins may end a moment after they did.
    for (let i = 0; i < 100 && pool.replaced < replacedBefore + 2; i++)
      await new Promise((r) => setTimeout(r, 10));
    assert.equal(pool.replaced, replacedBefore + 2, "both workers replaced");
    assert.equal(pool.size, 2);
    // Each failed login is recorded as an attempt, with the reason.
    const rows = (await workerFailures()).slice(recordedBefore);
    assert.equal(rows.length, failed, JSON.stringify(rows));
    for (const row of rows) assert.deepEqual([row.username, row.reply], ["alice", "Access-Reject"]);
    // The supplicants start over (as wpa_supplicant does after EAP-Failure) and log in.
    const retries = await Promise.all(Array.from({ length: failed }, login));
    for (const r of retries) assert.ok(r.success && r.mppeOk, `a retry logs in:\n${r.output.slice(-1500)}`);
    assert.equal(engine().openConversations, 0);
    assert.equal(pool.openTunnels, 0);
  });
});

describe("EAP TLS in the main thread (EAP_TLS_WORKERS=0)", { skip: missing ?? false }, () => {
  let lab: EapTestServer;
  before(async () => {
    lab = await startEapServer({ env: { EAP_TLS_WORKERS: "0" } });
    await lab.user("alice", "alice-pw");
  });
  after(() => lab?.stop());

  test("PEAP logs in without a pool", async () => {
    assert.equal(lab.server.radius.eap!.pool, undefined);
    const result = await peapLogin(lab);
    assert.ok(result.success && result.mppeOk, result.output.slice(-1500));
  });
});
