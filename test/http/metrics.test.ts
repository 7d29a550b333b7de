// GET /metrics through real requests: the token (401 in the error shape without it or with a wrong
// one), and what the series say after real traffic: RADIUS packets over UDP (accept, reject with
// its reason, accounting, a dropped datagram), API requests by route pattern, the job queue read
// from the database, webhook deliveries to a local receiver. Then the separate listener
// (METRICS_LISTEN), in the server and in a `wisp worker` process, and bad settings.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import dgram from "node:dgram";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { insertEvents } from "../../src/core/events/repo.ts";
import { REJECT_REASONS } from "../../src/metrics/radius.ts";
import { sendRadius } from "../../src/radius/client.ts";
import type { AttributeInput } from "../../src/radius/packet.ts";
import { createTestDatabase, dialects, type TestDatabase } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { databaseEnv, entryArgs, freePort, ROOT, runServerToExit } from "../support/processes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { Receiver } from "../webhooks/receiver.ts";

const TOKEN = "metrics-Token-0123456789abcdef";
const SECRET = "metrics-Secret-44";
const STATION: AttributeInput[] = [
  ["NAS-IP-Address", "127.0.0.1"],
  ["Calling-Station-Id", "11-22-33-44-55-66"],
];

/** The value of one sample line, e.g. sample(text, 'wisp_x_total{a="b"}'); undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function scrape(url: string, token: string | undefined = TOKEN) {
  const response = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

for (const { dialect, skip } of await dialects()) {
  describe(`GET /metrics behind METRICS_TOKEN (${dialect})`, { skip }, () => {
    let server: TestServer;
    let receiver: Receiver;
    let authPort: number;
    let acctPort: number;
    let networkId: number;
    let key: string;
    let userId: number;
    const metrics = () => scrape(`${server.url}/metrics`);

    const radius = (code: "Access-Request" | "Accounting-Request", attributes: AttributeInput[]) =>
      sendRadius({
        code,
        attributes: [...attributes, ...STATION],
        host: "127.0.0.1",
        port: code === "Access-Request" ? authPort : acctPort,
        secret: SECRET,
        timeoutMs: 2000,
        retries: 0,
      });

    before(async () => {
      [authPort, acctPort] = [await freeUdpPort(), await freeUdpPort()];
      receiver = await Receiver.start();
      server = await startTestServer({
        dialect,
        env: {
          METRICS_TOKEN: TOKEN,
          RADIUS_HOST: "127.0.0.1",
          RADIUS_AUTH_PORT: String(authPort),
          RADIUS_ACCT_PORT: String(acctPort),
          WEBHOOK_ALLOW_PRIVATE: "1",
          WEBHOOK_RETRY_SCHEDULE: "1h",
        },
      });
      const account = await server.account("default");
      networkId = (
        await server.core.networks.create(account.id, { name: "M", nas_ip: "127.0.0.1", secret: SECRET })
      ).network.id;
      userId = (await server.core.users.create(account.id, { username: "alice", password: "pw-Metrics-1" }))
        .id;
      key = await server.key(account);
    });
    after(async () => {
      await server?.stop();
      await receiver?.close();
    });

    test("no token, a wrong token, another scheme: 401 in the error shape; the token: 200", async () => {
      for (const headers of [
        {} as Record<string, string>,
        { authorization: "Bearer metrics-Token-0123456789abcdeX" },
        { authorization: `Basic ${TOKEN}` },
        { authorization: `Bearer ${TOKEN}x` },
      ]) {
        const response = await fetch(`${server.url}/metrics`, { headers });
        assert.equal(response.status, 401);
        assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer/);
        const body = (await response.json()) as { error: boolean; code: number; message: string };
        assert.equal(body.error, true);
        assert.equal(body.code, 401);
        assert.ok(!body.message.includes(TOKEN));
      }
      const ok = await metrics();
      assert.equal(ok.status, 200);
      assert.match(ok.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
      assert.match(ok.text, /^nodejs_eventloop_lag_seconds \d/m);
      assert.match(ok.text, /^# TYPE wisp_http_request_duration_seconds histogram$/m);
    });

    test("an accept and a reject are counted with their verdict, reason and network", async () => {
      assert.equal(
        (
          await radius("Access-Request", [
            ["User-Name", "alice"],
            ["User-Password", "pw-Metrics-1"],
          ])
        ).type,
        "Access-Accept",
      );
      assert.equal(
        (
          await radius("Access-Request", [
            ["User-Name", "alice"],
            ["User-Password", "wrong"],
          ])
        ).type,
        "Access-Reject",
      );
      assert.equal(
        (
          await radius("Access-Request", [
            ["User-Name", "nobody"],
            ["User-Password", "x"],
          ])
        ).type,
        "Access-Reject",
      );
      const { text } = await metrics();
      const series = (verdict: string, reason: string) =>
        `wisp_radius_requests_total{type="Access-Request",verdict="${verdict}",reason="${reason}",network="${networkId}"}`;
      assert.equal(sample(text, series("accept", "")), 1);
      assert.equal(sample(text, series("reject", "wrong password")), 1);
      assert.equal(sample(text, series("reject", "unknown user")), 1);
      assert.equal(sample(text, series("challenge", "")), 0);
    });

    test("accounting by Acct-Status-Type, and a datagram dropped as malformed", async () => {
      const session: AttributeInput[] = [
        ["User-Name", "alice"],
        ["Acct-Session-Id", "m-1"],
      ];
      assert.equal(
        (await radius("Accounting-Request", [["Acct-Status-Type", "Start"], ...session])).type,
        "Accounting-Response",
      );
      assert.equal(
        (await radius("Accounting-Request", [["Acct-Status-Type", "Interim-Update"], ...session])).type,
        "Accounting-Response",
      );
      const socket = dgram.createSocket("udp4");
      await new Promise<void>((resolve) =>
        socket.send(Buffer.from([1, 2, 0, 10, 0, 0, 0, 0, 0, 0]), authPort, "127.0.0.1", () => resolve()),
      );
      socket.close();
      const { text } = await metrics().then(async (first) => {
        // The datagram is counted when it arrives: wait for it (UDP, no answer to wait for).
        for (let i = 0; i < 50 && !first.text.includes('verdict="dropped"'); i++) {
          await new Promise((r) => setTimeout(r, 20));
          first = await metrics();
        }
        return first;
      });
      assert.equal(
        sample(text, `wisp_radius_accounting_packets_total{status_type="Start",network="${networkId}"}`),
        1,
      );
      assert.equal(
        sample(
          text,
          `wisp_radius_accounting_packets_total{status_type="Interim-Update",network="${networkId}"}`,
        ),
        1,
      );
      assert.equal(
        sample(
          text,
          `wisp_radius_requests_total{type="Accounting-Request",verdict="answered",reason="",network="${networkId}"}`,
        ),
        2,
      );
      assert.equal(
        sample(
          text,
          `wisp_radius_requests_total{type="Access-Request",verdict="dropped",reason="malformed",network=""}`,
        ),
        1,
      );
    });

    test("an API request shows in the histogram under its route pattern, never its URL", async () => {
      assert.equal((await server.call("GET", `/api/users/${userId}`, { key })).status, 200);
      assert.equal((await server.call("GET", "/no/such/path-7431", { key })).status, 404);
      const { text } = await metrics();
      const labels = `method="GET",route="/api/users/:user_id",status="200"`;
      assert.equal(sample(text, `wisp_http_request_duration_seconds_count{${labels}}`), 1);
      assert.equal(sample(text, `wisp_http_request_duration_seconds_bucket{${labels},le="+Inf"}`), 1);
      assert.ok((sample(text, `wisp_http_request_duration_seconds_sum{${labels}}`) ?? 0) > 0);
      assert.equal(
        sample(text, `wisp_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}`),
        1,
      );
      assert.ok(!text.includes(`/api/users/${userId}`) && !text.includes("path-7431"));
      assert.ok((sample(text, "wisp_db_query_duration_seconds_count") ?? 0) > 0, "statements are timed");
    });

    test("queue depth and the oldest due job's age come from the jobs table", async () => {
      const now = Date.now();
      await server.core.jobs.enqueue(server.core.database.db, [
        { kind: "test.metrics", accountId: null, payload: {}, runAt: now - 90_000 },
        { kind: "test.metrics", accountId: null, payload: {}, runAt: now - 1_000 },
        { kind: "test.metrics", accountId: null, payload: {}, runAt: now + 3_600_000 },
      ]);
      const { text } = await metrics();
      assert.equal(sample(text, `wisp_job_queue_depth{kind="test.metrics",state="due"}`), 2);
      assert.equal(sample(text, `wisp_job_queue_depth{kind="test.metrics",state="scheduled"}`), 1);
      assert.equal(sample(text, `wisp_job_queue_depth{kind="test.metrics",state="running"}`), 0);
      const age = sample(text, `wisp_job_oldest_due_age_seconds{kind="test.metrics"}`) ?? 0;
      assert.ok(age >= 90 && age < 120, `oldest age ${age}`);
    });

    test("webhook deliveries are counted by outcome", async () => {
      const account = await server.account("default");
      await server.core.webhooks.create(account.id, { url: receiver.url("/m"), events: "all" });
      receiver.respond = () => ({ status: 200 });
      await insertEvents(server.core.database.db, [
        { accountId: account.id, kind: "user.created", data: { id: 1 } },
      ]);
      await receiver.waitFor(() => receiver.received.length >= 1, 10_000, "a delivery");
      receiver.respond = () => ({ status: 500 });
      await insertEvents(server.core.database.db, [
        { accountId: account.id, kind: "user.created", data: { id: 2 } },
      ]);
      await receiver.waitFor(() => receiver.received.length >= 2, 10_000, "a second delivery");
      let text = "";
      for (let i = 0; i < 100; i++) {
        text = (await metrics()).text;
        if (sample(text, `wisp_webhook_deliveries_total{outcome="retrying"}`) === 1) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(sample(text, `wisp_webhook_deliveries_total{outcome="succeeded"}`), 1);
      assert.equal(sample(text, `wisp_webhook_deliveries_total{outcome="retrying"}`), 1);
      assert.equal(sample(text, `wisp_webhook_deliveries_total{outcome="failed"}`), 0);
    });
  });
}

describe("METRICS_LISTEN: a listener of its own, without a token", () => {
  let server: TestServer;
  let port: number;

  before(async () => {
    port = await freePort();
    server = await startTestServer({ env: { METRICS_LISTEN: `127.0.0.1:${port}` } });
  });
  after(() => server?.stop());

  test("GET /metrics answers there; the HTTP port has no /metrics; other paths and methods refused", async () => {
    assert.equal(server.metricsUrl, `http://127.0.0.1:${port}`);
    const ok = await scrape(`http://127.0.0.1:${port}/metrics`, undefined);
    assert.equal(ok.status, 200);
    assert.match(ok.text, /^# TYPE wisp_radius_requests_total counter$/m);
    const onApi = await server.call("GET", "/metrics");
    assert.equal(onApi.status, 404);
    assert.equal(onApi.body.error, true);
    const other = await fetch(`http://127.0.0.1:${port}/other`);
    assert.equal(other.status, 404);
    assert.equal(((await other.json()) as { code: number }).code, 404);
    const post = await fetch(`http://127.0.0.1:${port}/metrics`, { method: "POST" });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("allow"), "GET, HEAD");
  });
});

describe("neither METRICS_TOKEN nor METRICS_LISTEN", () => {
  test("/metrics is a 404 in the error shape and nothing is counted", async () => {
    const server = await startTestServer();
    try {
      const response = await server.call("GET", "/metrics");
      assert.equal(response.status, 404);
      assert.equal(response.body.code, 404);
      assert.equal(server.metrics, undefined);
    } finally {
      await server.stop();
    }
  });
});

describe("wisp worker with METRICS_LISTEN", () => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase("sqlite");
  });
  after(() => database?.drop());

  test("serves the worker's metrics (queue, webhooks, database) until SIGTERM", async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [...entryArgs("cli"), "worker"], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...databaseEnv(database),
        METRICS_LISTEN: `127.0.0.1:${port}`,
        LOG_LEVEL: "silent",
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    try {
      let text: string | undefined;
      for (let i = 0; i < 200 && text === undefined; i++) {
        text = await fetch(`http://127.0.0.1:${port}/metrics`).then(
          (r) => r.text(),
          () => undefined,
        );
        if (text === undefined) await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(text, `the worker's listener never answered: ${stderr}`);
      assert.match(text, /^wisp_webhook_deliveries_total\{outcome="succeeded"\} 0$/m);
      assert.match(text, /^# TYPE wisp_job_queue_depth gauge$/m);
      assert.match(text, /^wisp_db_query_duration_seconds_count [1-9]/m);
    } finally {
      child.kill("SIGTERM");
    }
    assert.equal(await exited, 0, stderr);
  });
});

describe("bad metrics settings are refused at start", () => {
  test("loadConfig: a short token, a bad address or port", () => {
    const refused = (env: Record<string, string>, pattern: RegExp) =>
      assert.throws(
        () => loadConfig(env),
        (error: Error) => error instanceof ConfigError && pattern.test(error.message),
      );
    refused({ METRICS_TOKEN: "short-secret" }, /^METRICS_TOKEN must be 16-256 printable ASCII/);
    refused({ METRICS_TOKEN: "has a space in it, long enough" }, /METRICS_TOKEN/);
    for (const listen of [
      "9464",
      "127.0.0.1",
      "127.0.0.1:0",
      "127.0.0.1:65536",
      "::1:9464",
      "bad host:9464",
    ]) {
      refused({ METRICS_LISTEN: listen }, /^METRICS_LISTEN must be host:port/);
    }
    assert.deepEqual(loadConfig({ METRICS_LISTEN: "[::1]:9464" }).metricsListen, { host: "::1", port: 9464 });
    assert.deepEqual(loadConfig({ METRICS_LISTEN: "localhost:9464" }).metricsListen, {
      host: "localhost",
      port: 9464,
    });
    assert.equal(loadConfig({}).metricsToken, undefined);
  });

  test("the server stops with one line that does not repeat the token, exit code 1", async () => {
    const token = "tooShort-9";
    const result = await runServerToExit({ METRICS_TOKEN: token, DATA_DIR: "/nonexistent/never-made" });
    assert.equal(result.code, 1);
    const lines = result.stderr.trim().split("\n");
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0]!, /^wisp: configuration error: METRICS_TOKEN must be/);
    assert.ok(!result.stderr.includes(token));
  });
});

describe("reject reasons as labels", () => {
  test("every fixed reject reason in the code is a label of its own, not other", () => {
    const sources = [
      "src/core/aaa/decide.ts",
      "src/core/aaa/service.ts",
      "src/core/vouchers/login.ts",
      "src/radius/eap-door.ts",
      "src/radius/server.ts",
    ];
    const patterns = [
      /reject\("([^"]+)"/g,
      /reason: "([^"]+)"/g,
      /rejected\?\.\("([^"]+)"\)/g,
      /rejectInstead\(\w+, "([^"]+)"\)/g,
    ];
    const found = new Set<string>();
    for (const file of sources) {
      const text = fs.readFileSync(path.join(ROOT, file), "utf8");
      for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.add(match[1]!);
    }
    assert.ok(found.size >= 15, `only ${found.size} reasons found: the patterns no longer match the code`);
    const missing = [...found].filter((reason) => !REJECT_REASONS.includes(reason));
    assert.deepEqual(missing, [], "add these to REJECT_REASONS (src/metrics/radius.ts)");
  });
});
