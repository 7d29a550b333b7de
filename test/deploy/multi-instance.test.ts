// Several instances, as the README's "Several instances" section runs them: two Wisp servers (API
// and RADIUS, WORKER=0) and two `wisp worker` processes, all real processes on one fresh
// PostgreSQL database and one Redis, driven through both servers at once. Each check names what
// broke. PostgreSQL and Redis are required; without them the file is skipped with the reason
// (WISP_TEST_REQUIRE_SERVICES=1 makes that a failure).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { loadConfig } from "../../src/config.ts";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import { type Core, createCore } from "../../src/core/index.ts";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { sendRadius } from "../../src/radius/client.ts";
import type { AttributeInput } from "../../src/radius/packet.ts";
import { ConsoleClient } from "../support/browser.ts";
import {
  createTestDatabase,
  postgresUnavailable,
  REDIS_URL,
  redisUnavailable,
  type TestDatabase,
} from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import {
  databaseEnv,
  type Env,
  type HttpResult,
  request,
  type ServerProcess,
  startServerProcess,
  startWorkerProcess,
  type WispProcess,
} from "../support/processes.ts";
import { Receiver } from "../webhooks/receiver.ts";

const SECRET = "multi-Instance-Secret-5";
const ADMIN = { email: "ops@example.com", password: "a long enough password" };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Instance extends ServerProcess {
  name: "A" | "B";
  acctPort: number;
}

const skip = (await postgresUnavailable()) ?? (await redisUnavailable()) ?? false;

describe("two instances and two workers on one PostgreSQL and one Redis", { skip }, () => {
  let database: TestDatabase;
  let opened: Database;
  let core: Core;
  let receiver: Receiver;
  let account: AccountRow;
  /** A key of `account` no limit gets in the way of. */
  let key: string;
  let a: Instance;
  let b: Instance;
  let workers: WispProcess[] = [];
  const both = () => [a, b];
  const db = () => opened.db;

  async function startInstance(name: "A" | "B", env: Env): Promise<Instance> {
    // Ports are picked seconds of tsx start-up before the bind, and clients elsewhere on
    // the machine take ephemeral ports meanwhile: a port taken in between is picked again.
    for (let attempt = 1; ; attempt++) {
      const acctPort = await freeUdpPort();
      try {
        const server = await startServerProcess(
          { ...env, WORKER: "0", RADIUS_HOST: "127.0.0.1", RADIUS_ACCT_PORT: String(acctPort) },
          60_000,
        );
        return { ...server, name, acctPort };
      } catch (error) {
        if (attempt === 3 || !/already in use/.test((error as Error).message)) throw error;
      }
    }
  }

  before(async () => {
    database = await createTestDatabase("postgres");
    receiver = await Receiver.start();
    const env: Env = {
      ...databaseEnv(database),
      REDIS_URL,
      WEBHOOK_ALLOW_PRIVATE: "1",
      WEBHOOK_RETRY_SCHEDULE: "300ms,300ms,300ms,300ms,300ms",
      // As on several hosts: one key for webhook secrets, given to every process.
      WEBHOOK_SECRET_KEY: randomBytes(32).toString("base64"),
    };
    opened = openDatabase({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
    await migrate(opened);
    core = createCore(opened, loadConfig(env));
    account = await core.accounts.create("multi");
    ({ key } = await core.keys.create(account, { name: "load", rateLimit: 1_000_000 }));
    // The network (RADIUS client 127.0.0.1) exists before the servers start: none waits for its cache.
    await core.networks.create(account.id, { name: "venue", nas_ip: "127.0.0.1", secret: SECRET });
    await core.admins.create(account, ADMIN);
    // Start-up is mostly tsx compiling: the four processes start side by side.
    const started = await Promise.allSettled([
      startInstance("A", env),
      startInstance("B", env),
      startWorkerProcess(env, 60_000),
      startWorkerProcess(env, 60_000),
    ]);
    const value = <T>(result: PromiseSettledResult<T>) =>
      result.status === "fulfilled" ? result.value : undefined;
    a = value(started[0])!;
    b = value(started[1])!;
    workers = started.slice(2).flatMap((r) => (r.status === "fulfilled" ? [r.value as WispProcess] : []));
    // after() stops the ones that started.
    for (const result of started) if (result.status === "rejected") throw result.reason;
  });

  after(async () => {
    await Promise.all([a, b, ...workers].filter(Boolean).map((p) => p.stop()));
    await opened?.close();
    await receiver?.close();
    await database?.drop();
  });

  /** Every process still runs (none ended on an error the test provoked). */
  function assertAllRunning(processes: WispProcess[]): void {
    for (const p of processes) {
      assert.equal(p.child.exitCode, null, `process ${p.pid} exited ${p.child.exitCode}:\n${p.stderr()}`);
      assert.equal(p.child.signalCode, null, `process ${p.pid} was ended by ${p.child.signalCode}`);
    }
  }

  function createUser(instance: Instance, apiKey: string, username: string): Promise<HttpResult> {
    return request(`${instance.url}/api/users`, { method: "POST", key: apiKey, body: { username } });
  }

  function accounting(instance: Instance, attributes: AttributeInput[], timeoutMs = 5000) {
    return sendRadius({
      code: "Accounting-Request",
      attributes: [
        ["NAS-IP-Address", "127.0.0.1"],
        ["Called-Station-Id", "02-00-00-00-00-01:venue"],
        ...attributes,
      ],
      host: "127.0.0.1",
      port: instance.acctPort,
      secret: SECRET,
      timeoutMs,
      retries: 0,
    });
  }

  test("an API key's limit holds exactly over both instances (requests alternating)", async () => {
    const limit = 15;
    // Limits are fixed one-minute windows of the wall clock (these are separate processes, whose
    // clock a test cannot hold). A burst that straddles a window's end, as on a slow machine, is
    // seen in its answers' reset times and made again with a new key in the new window.
    let answers: Awaited<ReturnType<typeof request>>[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const { key: limited } = await core.keys.create(account, {
        name: `limited-${attempt}`,
        rateLimit: limit,
      });
      answers = await Promise.all(
        Array.from({ length: 3 * limit }, (_, i) =>
          request(`${(i % 2 === 0 ? a : b).url}/api/users`, { key: limited }),
        ),
      );
      if (new Set(answers.map((r) => r.headers["x-ratelimit-reset"])).size === 1) break;
    }
    const windows = new Set(answers.map((r) => r.headers["x-ratelimit-reset"]));
    assert.equal(windows.size, 1, `three bursts each spanned two windows: ${[...windows].join(", ")}`);
    const statuses = answers.map((r) => r.status);
    const allowed = statuses.filter((s) => s === 200).length;
    const refused = answers.filter((r) => r.status === 429);
    assert.equal(allowed, limit, `${allowed} of ${answers.length} allowed over both instances, not ${limit}`);
    assert.equal(refused.length, 2 * limit, `every other answer is 429: ${statuses.join(" ")}`);
    for (const r of refused) {
      assert.equal(r.body.code, 429);
      assert.match(r.body.message, /^rate limit of 15 requests per minute exceeded/);
      assert.ok(Number(r.headers["retry-after"]) >= 1, "Retry-After in whole seconds");
    }
  });

  test("a key revoked through instance A's console is refused by B on the very next request", async () => {
    const { key: doomed, row } = await core.keys.create(account, { name: "doomed" });
    for (const instance of both()) {
      const before = await request(`${instance.url}/api/users`, { key: doomed });
      assert.equal(before.status, 200, `instance ${instance.name} takes the key before it is revoked`);
    }
    const admin = new ConsoleClient(a.url);
    assert.equal((await admin.login(ADMIN.email, ADMIN.password)).status, 303, "console login on A");
    assert.equal((await admin.get(`/console/keys/${row.id}/revoke`)).status, 200);
    const revoked = await admin.post(`/console/keys/${row.id}/revoke`);
    assert.equal(revoked.status, 303, revoked.text);
    for (const instance of [b, a]) {
      const after = await request(`${instance.url}/api/users`, { key: doomed });
      assert.equal(after.status, 401, `instance ${instance.name} still took the revoked key: ${after.text}`);
      assert.deepEqual(after.body, { error: true, message: "invalid or revoked API key", code: 401 });
    }
  });

  test("every webhook event is delivered once per endpoint; a retry keeps its webhook-id", async () => {
    const hooks = await core.accounts.create("hooks");
    const { key: hooksKey } = await core.keys.create(hooks, { name: "hooks", rateLimit: 1_000_000 });
    const secrets = new Map<string, string>();
    for (const endpoint of ["/one", "/two", "/flaky"]) {
      const created = await core.webhooks.create(hooks.id, {
        url: receiver.url(endpoint),
        events: "user.created",
      });
      secrets.set(endpoint, created.secret);
    }
    // /flaky fails each delivery's first attempt, then takes it.
    const flakySeen = new Set<string>();
    receiver.respond = (r) => {
      if (r.path !== "/flaky" || flakySeen.has(r.id)) return { status: 200, body: "ok" };
      flakySeen.add(r.id);
      return { status: 503, body: "try again" };
    };
    const count = 30;
    const usernames = Array.from({ length: count }, (_, i) => `hook${i}`);
    const created = await Promise.all(usernames.map((u, i) => createUser(i % 2 === 0 ? a : b, hooksKey, u)));
    for (const r of created) assert.equal(r.status, 201, r.text);
    const ids = (endpoint: string) => receiver.at(endpoint).map((r) => r.id);
    await receiver.waitFor(
      () => ids("/one").length >= count && ids("/two").length >= count && ids("/flaky").length >= 2 * count,
      30_000,
      "every delivery (and /flaky's retries)",
    );
    await sleep(1000); // room for a duplicate to arrive
    for (const endpoint of ["/one", "/two", "/flaky"]) {
      const requests = receiver.at(endpoint);
      const times = new Map<string, number>();
      for (const r of requests) times.set(r.id, (times.get(r.id) ?? 0) + 1);
      const expected = endpoint === "/flaky" ? 2 : 1;
      for (const [id, n] of times) {
        assert.equal(n, expected, `${endpoint} received webhook-id ${id} ${n} times, not ${expected}`);
      }
      const verifier = new Webhook(secrets.get(endpoint)!);
      const names = requests.map((r) => {
        const payload = verifier.verify(r.body, {
          "webhook-id": r.id,
          "webhook-timestamp": r.timestamp,
          "webhook-signature": r.signature,
        }) as { event: string; data: { username: string } };
        assert.equal(payload.event, "user.created");
        return payload.data.username;
      });
      assert.deepEqual([...new Set(names)].sort(), [...usernames].sort(), `${endpoint}: one event per user`);
      assert.equal(times.size, count, `${endpoint}: one webhook-id per event`);
    }
    receiver.respond = () => ({ status: 200, body: "ok" });
  });

  test("each report file is built once, though two workers could take it", async () => {
    const query = "/api/reports/120?earliest=-1d&latest=now&format=csvfile";
    const queued = await Promise.all([a, b, a, b].map((i) => request(`${i.url}${query}`, { key })));
    const names = queued.map((r) => {
      assert.equal(r.status, 202, r.text);
      return String(r.body.task_name);
    });
    // Each file is fetched through the instance that did not queue it.
    const files = await Promise.all(
      names.map(async (name, i) => {
        const other = i % 2 === 0 ? b : a;
        const until = Date.now() + 30_000;
        for (;;) {
          const r = await request(`${other.url}/api/reports/tasks?task_name=${name}&format=csvfile`, { key });
          if (r.status === 200) return r.text;
          assert.equal(r.status, 202, `task ${name}: ${r.text}`);
          assert.ok(Date.now() < until, `task ${name} not built in 30 s`);
          await sleep(200);
        }
      }),
    );
    // report_tasks belongs to the reports area's own schema: read it as SQL.
    const { rows: runs } = await sql<{ name: string; status: string; job_status: string; attempts: number }>`
      select t.name, t.status, j.status as job_status, j.attempts
      from report_tasks t join jobs j on j.id = t.job_id
      where t.name in (${sql.join(names)})`.execute(db());
    assert.equal(runs.length, names.length);
    for (const run of runs) {
      assert.deepEqual(
        { status: run.status, job_status: run.job_status, attempts: run.attempts },
        { status: "done", job_status: "done", attempts: 1 },
        `task ${run.name} ran once`,
      );
    }
    const ready = await db()
      .selectFrom("events")
      .select(sql<string>`data::json->>'task_name'`.as("task"))
      .where("kind", "=", "report.ready")
      .execute();
    for (const name of names) {
      const n = ready.filter((e) => e.task === name).length;
      assert.equal(n, 1, `task ${name} raised report.ready ${n} times`);
    }
    const directory = path.join(database.dataDir, "reports");
    const entries = fs.readdirSync(directory);
    assert.deepEqual(
      entries.filter((e) => e.endsWith(".tmp")),
      [],
      "no temporary file left behind",
    );
    for (const [i, name] of names.entries()) {
      assert.ok(entries.includes(`${name}.csv`), `one file for ${name}`);
      assert.equal(fs.readFileSync(path.join(directory, `${name}.csv`), "utf8"), files[i]);
    }
  });

  test("one session's accounting through both instances, duplicates included, leaves one consistent row", async () => {
    const t0 = Math.floor(Date.now() / 1000) - 600;
    const sessions = Array.from({ length: 8 }, (_, i) => `multi-acct-${i}`);
    const packet = (id: string, i: number, status: string, extra: AttributeInput[] = []) =>
      [
        ["User-Name", `roamer${i}`],
        ["Acct-Session-Id", id],
        ["Acct-Status-Type", status],
        ["Calling-Station-Id", `02-00-00-00-02-${String(i).padStart(2, "0")}`],
        ...extra,
      ] as AttributeInput[];
    const counters = (time: number, input: number, output: number): AttributeInput[] => [
      ["Event-Timestamp", t0 + time],
      ["Acct-Session-Time", time],
      ["Acct-Input-Octets", input],
      ["Acct-Output-Octets", output],
    ];
    const answered = async (sends: Promise<{ type: string }>[]) => {
      for (const answer of await Promise.all(sends)) assert.equal(answer.type, "Accounting-Response");
    };
    await Promise.all(
      sessions.map(async (id, i) => {
        const start = packet(id, i, "Start", [["Event-Timestamp", t0]]);
        const interim = packet(id, i, "Interim-Update", counters(60, 1000, 2000));
        const stop = packet(id, i, "Stop", [
          ...counters(120, 5000, 6000),
          ["Acct-Terminate-Cause", "User-Request"],
        ]);
        // Start at A, retransmitted to B; Interim at B, retransmitted to A; Stop at A with its
        // retransmission at B, while the Interim arrives at B once more, late.
        await answered([accounting(a, start), accounting(b, start)]);
        await answered([accounting(b, interim), accounting(a, interim)]);
        await answered([accounting(a, stop), accounting(b, stop), accounting(b, interim)]);
      }),
    );
    const rows = await db()
      .selectFrom("radacct")
      .select([
        "radacctid",
        "acctsessionid",
        sql<number>`extract(epoch from acctstarttime)::int`.as("start"),
        sql<number>`extract(epoch from acctstoptime)::int`.as("stop"),
        sql<number>`extract(epoch from acctupdatetime)::int`.as("update"),
        "acctsessiontime",
        "acctinputoctets",
        "acctoutputoctets",
        "acctterminatecause",
      ])
      .where("acctsessionid", "in", sessions)
      .execute();
    const events = await db()
      .selectFrom("events")
      .select(["kind", sql<number>`(data::json->>'session_id')::int`.as("session")])
      .where("kind", "in", ["session.started", "session.stopped"])
      .execute();
    for (const id of sessions) {
      const mine = rows.filter((r) => r.acctsessionid === id);
      assert.equal(mine.length, 1, `session ${id} has ${mine.length} rows`);
      const row = mine[0]!;
      const { radacctid, acctsessionid, ...values } = row;
      assert.deepEqual(
        {
          ...values,
          acctinputoctets: Number(values.acctinputoctets),
          acctoutputoctets: Number(values.acctoutputoctets),
        },
        {
          start: t0,
          stop: t0 + 120,
          update: t0 + 120,
          acctsessiontime: 120,
          acctinputoctets: 5000,
          acctoutputoctets: 6000,
          acctterminatecause: "User-Request",
        },
        `session ${id} ends with the Stop's values`,
      );
      for (const kind of ["session.started", "session.stopped"]) {
        const n = events.filter((e) => e.kind === kind && e.session === radacctid).length;
        assert.equal(n, 1, `session ${id} raised ${kind} ${n} times`);
      }
    }
  });

  test("every process survives its database connections being terminated, and delivery goes on", async () => {
    const survivor = await core.accounts.create("survivor");
    const { key: survivorKey } = await core.keys.create(survivor, { name: "survivor", rateLimit: 1_000_000 });
    await core.webhooks.create(survivor.id, { url: receiver.url("/survive"), events: "user.created" });
    const acknowledged: string[] = [];
    const create = async (instance: Instance, username: string) => {
      const r = await createUser(instance, survivorKey, username).catch(() => undefined);
      if (r?.status === 201) acknowledged.push(username);
    };
    // For 3 s every connection to the database (the servers', the workers', this test's pool's) is
    // ended by the server, as a restart or an operator's pg_terminate_backend would, under load.
    const terminator = new pg.Client({ connectionString: database.databaseUrl });
    await terminator.connect();
    let terminated = 0;
    const until = Date.now() + 3000;
    const load = (async () => {
      for (let i = 0; Date.now() < until; i++) await create(i % 2 === 0 ? a : b, `during${i}`);
    })();
    while (Date.now() < until) {
      const { rows } = await terminator.query(
        "select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()",
      );
      terminated += rows[0].n;
      await sleep(50);
    }
    await load;
    await terminator.end();
    assert.ok(terminated > 0, "connections were terminated");
    assertAllRunning([a, b, ...workers]);
    // Afterwards every process works as before: the servers answer, the workers deliver.
    for (let i = 0; i < 6; i++) {
      const r = await createUser(i % 2 === 0 ? a : b, survivorKey, `after${i}`);
      assert.equal(r.status, 201, `instance ${i % 2 === 0 ? "A" : "B"} after the terminations: ${r.text}`);
      acknowledged.push(`after${i}`);
    }
    const delivered = () => new Set(receiver.at("/survive").map((r) => String(r.json?.data?.username)));
    await receiver.waitFor(
      () => acknowledged.every((u) => delivered().has(u)),
      // A job whose claim committed while its answer was lost with the connection waits out its
      // 30 s lease before another worker takes it; nothing waits longer than that.
      40_000,
      `the events of all ${acknowledged.length} users created`,
    );
    assertAllRunning([a, b, ...workers]);
  });

  test("kill -9 of one instance mid-load loses no acknowledged write", async () => {
    const users: string[] = [];
    const sessions: string[] = [];
    let stop = false;
    const apiLoop = async (instance: Instance, lane: number) => {
      for (let i = 0; !stop; i++) {
        const username = `${instance.name}${lane}-${i}`;
        const r = await createUser(instance, key, username).catch(() => undefined);
        if (r?.status === 201) users.push(username);
        else if (!r) await sleep(20); // refused: the instance is gone
      }
    };
    const radiusLoop = async (instance: Instance, lane: number) => {
      for (let i = 0; !stop; i++) {
        const id = `kill-${instance.name}${lane}-${i}`;
        const answer = await accounting(
          instance,
          [
            ["User-Name", `walker${lane}`],
            ["Acct-Session-Id", id],
            ["Acct-Status-Type", "Start"],
            ["Calling-Station-Id", "02-00-00-00-03-01"],
          ],
          1000,
        ).catch(() => undefined);
        if (answer?.type === "Accounting-Response") sessions.push(id);
      }
    };
    const loops = [a, b].flatMap((instance) =>
      [0, 1].flatMap((lane) => [apiLoop(instance, lane), radiusLoop(instance, lane)]),
    );
    await sleep(1500);
    const before = {
      users: users.filter((u) => u.startsWith("A")).length,
      sessions: sessions.filter((s) => s.startsWith("kill-A")).length,
    };
    a.child.kill("SIGKILL");
    await a.exited;
    await sleep(1500);
    stop = true;
    await Promise.all(loops);
    assert.ok(
      before.users > 0 && before.sessions > 0,
      `A acknowledged writes before the kill: ${JSON.stringify(before)}`,
    );
    assert.ok(
      users.some((u) => u.startsWith("B")) && sessions.some((s) => s.startsWith("kill-B")),
      "B took writes",
    );
    const stored = new Set(
      (await db().selectFrom("users").select("username").where("username", "in", users).execute()).map(
        (r) => r.username,
      ),
    );
    const missingUsers = users.filter((u) => !stored.has(u));
    assert.deepEqual(missingUsers, [], `acknowledged users missing after kill -9 of A`);
    const recorded = new Set(
      (
        await db()
          .selectFrom("radacct")
          .select("acctsessionid")
          .where("acctsessionid", "in", sessions)
          .execute()
      ).map((r) => r.acctsessionid),
    );
    const missingSessions = sessions.filter((s) => !recorded.has(s));
    assert.deepEqual(missingSessions, [], "acknowledged accounting missing after kill -9 of A");
    assertAllRunning([b, ...workers]);
  });
});
