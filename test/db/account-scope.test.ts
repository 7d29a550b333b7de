// Every statement Wisp runs against PostgreSQL names the account of each account-scoped table it
// touches (docs/scaling.md: that is what routes it to one Citus shard). A real server on a fresh
// PostgreSQL database takes a representative workload through its doors (the API over HTTP on
// every resource, reports, the console, a captive portal page, RADIUS authentication and
// accounting over UDP, the worker's jobs: webhook deliveries, report files, disconnects, CoA, the
// sweep); every statement the pg driver sends is captured, parsed by PostgreSQL's own parser, and
// checked (test/support/account-scope.ts). The statements that span accounts on purpose are listed
// below, each with its reason; anything else fails with the statement and the table.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import pg from "pg";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import { EKU_CLIENT_AUTH } from "../../src/core/certs/pem.ts";
import { createAuthority, createLeaf, signerOf } from "../../src/core/certs/x509.ts";
import { accessRequestPap, sendRadius } from "../../src/radius/client.ts";
import { loadParser, type ScopedTables, unscopedTables } from "../support/account-scope.ts";
import { accountingSender, eventually } from "../support/accounting.ts";
import { ConsoleClient } from "../support/browser.ts";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { Receiver } from "../webhooks/receiver.ts";

/**
 * Statements that touch an account's table without naming the account, on purpose. `table` is the
 * table they leave unscoped, `match` a piece of their text; each reason says why it is right and
 * how it runs on Citus (docs/scaling.md, "Statements that span accounts").
 */
const ALLOWED: { table: string; match: RegExp; reason: string }[] = [
  // Entry lookups: the account is not known until the row is found. The tables are reference tables.
  {
    table: "api_keys",
    match: /from "api_keys" where "key_hash" = /,
    reason: "API key authentication: the key's hash names the account (reference table)",
  },
  {
    table: "nas",
    match: /from "nas" where "nasname" in \(/,
    reason: "RADIUS: the packet's source address names the network and so the account (reference table)",
  },
  {
    table: "captive_portals",
    match: /from "captive_portals" as "p" left join "portal_logos" as "l" .* where "p"\."id" = \$1/,
    reason: "guest page: the portal id in the login URL names the account (reference tables)",
  },
  {
    table: "portal_logos",
    match: /from "captive_portals" as "p" left join "portal_logos" as "l" .* where "p"\."id" = \$1/,
    reason: "guest page: the logo of the portal found by id (reference table)",
  },
  {
    table: "console_admins",
    match: /from "console_admins" inner join "accounts" on .* where "console_admins"\."email" = \$1/,
    reason: "console login: an email is unique across accounts and names the account (reference table)",
  },
  {
    table: "identity_providers",
    match: /^select \* from "identity_providers" where "id" = \$1$/,
    reason:
      "identity provider sign-in: the provider id in the IdP's callback, ACS or SP metadata address names the account (reference table)",
  },
  {
    table: "identity_providers",
    match:
      /^select \* from "identity_providers" where "console_login" = \$1 and "enabled" = \$2 order by "id"$/,
    reason:
      "console login page: the single sign-on buttons of every account (no account is known before login; read at most every 3 s per process; reference table)",
  },
  {
    table: "console_admins",
    match: /^select count\(\*\) as "total" from "console_admins"$/,
    reason: "console: whether anyone can log in yet (the first-run setup page; reference table)",
  },
  {
    table: "nas",
    match: /^select "id" from "nas" where "nasname" = \$1$/,
    reason: "a network's address is unique in the whole installation (reference table)",
  },
  {
    table: "console_sessions",
    match: /"console_sessions"( as "s")?.* where "(s"\.")?token_hash" = \$1/,
    reason: "console session cookie: the token's hash names the session and account (reference table)",
  },
  {
    table: "console_admins",
    match: /from "console_sessions" as "s" inner join "console_admins"/,
    reason: "console session cookie: its admin, joined by id (reference table)",
  },
  {
    table: "nas",
    match:
      /^select "nas"\.\*, "accounts"\."name" as "account_name" from "nas" inner join "accounts" .* where "nas"\."nasname" like \$1/,
    reason:
      "start-up: networks of every account wider than NETWORK_MIN_PREFIX_* are named in the log (once per start; reference table)",
  },
  {
    table: "nas",
    match: /from "nas" where "account_id" <> \$1/,
    reason:
      "a network's addresses must not overlap another account's: the check spans accounts (reference table)",
  },
  {
    table: "nas",
    match:
      /\(select "nas"\."time_zone" from "nas" where "nas"\."id" = \$1 and "nas"\."account_id" = "a"\."id"\) as "network_tz" from "accounts" as "a" where "a"\."id" = \$2/,
    reason:
      "policies at login: the network's time zone in a subquery bound to the account row (a.id = $2) it is correlated with (reference table)",
  },
  {
    table: "directories",
    match: /^select \* from "directories" where "enabled" = \$1 order by "id"$/,
    reason:
      "the worker's scheduled directory sync: which directories of every account are due (a small table of settings, one row per directory)",
  },
  // RadSec handshakes: the certificate names the network, and so the account.
  {
    table: "radsec_certificates",
    match: /^select \* from "radsec_certificates" where "serial" = \$1$/,
    reason:
      "RadSec handshake: a Wisp-issued NAS certificate's serial (unique over the deployment) names the network and account (reference table)",
  },
  {
    table: "radsec_trust",
    match: /^select \* from "radsec_trust" where "ca_subject_hash" = \$1 order by "id"$/,
    reason:
      "RadSec handshake: the uploaded CAs that may have issued a NAS certificate, of every account; only their networks' rules are then matched (reference table)",
  },
  {
    table: "radsec_trust",
    match: /^select distinct "ca_fingerprint" from "radsec_trust" order by "ca_fingerprint"$/,
    reason:
      "RadSec listener's poll (every few seconds): whether the set of trusted CAs changed, over every account (reference table)",
  },
  {
    table: "radsec_trust",
    match: /^select "ca_fingerprint", "ca_cert" from "radsec_trust" order by "ca_fingerprint"$/,
    reason:
      "RadSec listener: the CAs the TLS handshake trusts, over every account, read again only when they changed (reference table)",
  },
  // The worker: the job queue and the sweeps (jobs is a local table on the coordinator).
  {
    table: "jobs",
    match: /"jobs"/,
    reason: "the job queue: workers claim due jobs of every account (local table on the coordinator)",
  },
  {
    table: "report_tasks",
    match: /^select "id", "account_id", "name" from "report_tasks" where "expires" <= \$1 order by "expires"/,
    reason:
      "report cleanup (retention's hourly run, each task's expiry job): expired tasks of every account, then deleted naming their accounts",
  },
  {
    table: "webhook_cursors",
    match: /from webhook_cursors c where exists/,
    reason: "webhook dispatcher: finds the accounts with new events (one statement per pass)",
  },
  {
    table: "events",
    match: /from webhook_cursors c where exists \(select 1 from events e where e\.account_id = c\.account_id/,
    reason: "webhook dispatcher: the new events of each account with endpoints, joined on the account",
  },
  {
    table: "webhook_cursors",
    match: /select "account_id" from "webhook_cursors" limit \$1/,
    reason: "webhook dispatcher: whether any account has endpoints at all (one probe per pass)",
  },
  {
    table: "nas",
    match: /from "nas" where \("stale_after" > \$1 or "interim_interval" > \$2\) limit/,
    reason: "session sweep: whether any network is swept at all (reference table)",
  },
  {
    table: "radacct",
    match:
      /from "radacct" inner join "nas" on "nas"\."id" = "radacct"\."network_id" and "nas"\."account_id" = "radacct"\."account_id" .*"acctstoptime" is null/,
    reason:
      "session sweep: open sessions past their network's stale time, every account (every 30 s, multi-shard)",
  },
  {
    table: "nas",
    match:
      /from "radacct" inner join "nas" on "nas"\."id" = "radacct"\."network_id" and "nas"\."account_id" = "radacct"\."account_id" where/,
    reason: "session sweep: each open session's network, joined on the account (reference table)",
  },
  {
    table: "radcheck",
    match: /from "radcheck" where "attribute" = \$1 limit/,
    reason: "session sweep: whether any user has an Expiration at all (every 30 s, multi-shard)",
  },
  {
    table: "radacct",
    match: /from "radacct" inner join "radcheck" on "radcheck"\."account_id" = "radacct"\."account_id"/,
    reason:
      "session sweep: open sessions of users whose Expiration passed, every account (every 30 s, multi-shard)",
  },
  {
    table: "radcheck",
    match: /from "radacct" inner join "radcheck" on "radcheck"\."account_id" = "radacct"\."account_id"/,
    reason: "session sweep: the Expiration items of those sessions' users, joined on the account (colocated)",
  },
  // Migrations: one-time backfills over every row, run once by whichever process starts first.
  {
    table: "users",
    match:
      /^update accounts set user_count = \(select count\(\*\) from users where users\.account_id = accounts\.id\)$/,
    reason: "migration 008: counts each account's users once",
  },
  {
    table: "users",
    match: /^update users set api_json = json_build_object\(/,
    reason: "migration 008: fills in each user's JSON once",
  },
  ...(["users", "captive_portals"] as const).map((table) => ({
    table,
    match: /update users set source = 'portal', guest_portal_id = /,
    reason: "migration 038: marks the earlier portal registrations once (joined on the account)",
  })),
  ...(["users", "identity_providers"] as const).map((table) => ({
    table,
    match: /update users set source = 'idp', guest_method = 'idp', /,
    reason: "migration 038: marks the earlier identity-provider sign-ins once (joined on the account)",
  })),
  {
    table: "nas",
    match: /^select id, nasname from nas$/,
    reason: "migration 011: computes each network's address range once",
  },
  ...(["radpostauth", "radacct"] as const).map((table) => ({
    table,
    match: new RegExp(`^insert into "${table}" select \\* from "${table}_unpartitioned"$`),
    reason: "migration 020: copies every row into the table partitioned by month, once",
  })),
  {
    table: "radacct",
    match: /^insert into radacct_keys \(acctuniqueid\) select acctuniqueid from radacct$/,
    reason: "migration 020: fills the session keys (radacct_keys) once",
  },
  ...(["radpostauth", "radacct"] as const).map((table) => ({
    table: `${table}_default`,
    match: new RegExp(`from "${table}_default" where "(authdate|acctstarttime)" is not null$`),
    reason:
      "partition upkeep (at start and every 6 hours): the months of rows waiting in the DEFAULT " +
      "partition, over every account (one multi-shard read; normally of an empty partition)",
  })),
];

/** The statements of this workload, each once, with the tables it leaves unscoped. */
interface Finding {
  statement: string;
  table: string;
}

describe("statements on an account's tables name the account (PostgreSQL)", async () => {
  const skip = (await postgresUnavailable()) ?? false;
  let database: TestDatabase;
  let server: TestServer;
  let receiver: Receiver;
  const statements = new Set<string>();
  const originalQuery = pg.Client.prototype.query;

  before(async () => {
    if (skip) return;
    await loadParser();
    database = await createTestDatabase("postgres");
    const name = new URL(database.databaseUrl!).pathname.slice(1);
    // Every statement any pool sends to this test's database, from the first migration on.
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as string | { text?: string };
      const text = typeof config === "string" ? config : config?.text;
      if (text && this.database === name) statements.add(text);
      return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof pg.Client.prototype.query;
    receiver = await Receiver.start();
  });
  after(async () => {
    pg.Client.prototype.query = originalQuery;
    await server?.stop();
    await database?.drop();
    await receiver?.close();
  });

  test("the workload runs, and every statement it sent is scoped or allowed", { skip }, async () => {
    const ports = { auth: await freeUdpPort(), acct: await freeUdpPort() };
    server = await startTestServer({
      database,
      env: {
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(ports.auth),
        RADIUS_ACCT_PORT: String(ports.acct),
        WEBHOOK_ALLOW_PRIVATE: "1",
        WEBHOOK_RETRY_SCHEDULE: "1s",
      },
    });
    const mine = await server.account("scope-mine");
    const hooks = [await workload(server, mine, receiver, ports)];
    // Another account's data, so that both exist wherever a statement could mix them.
    hooks.push(await workload(server, await server.account("scope-theirs"), receiver, ports, "t"));
    await webhookDay(server, receiver, hooks);
    await server.stop();

    const tables: ScopedTables = await scopedTables(database.databaseUrl!);
    assert.ok(tables.size >= 20, `account-scoped tables found: ${[...tables.keys()].join(", ")}`);
    const findings: Finding[] = [];
    for (const statement of statements) {
      const flat = statement.replace(/\s+/g, " ");
      for (const { table } of unscopedTables(statement, tables)) {
        if (!ALLOWED.some((a) => a.table === table && a.match.test(flat)))
          findings.push({ statement: flat, table });
      }
    }
    console.log(`# ${statements.size} distinct statements checked over ${tables.size} account-scoped tables`);
    assert.ok(statements.size > 150, `a representative workload: ${statements.size} distinct statements`);
    assert.deepEqual(
      findings.map((f) => `${f.table}: ${f.statement}`),
      [],
      "statements that touch an account's table without naming its account_id",
    );
    const flat = [...statements].map((s) => s.replace(/\s+/g, " "));
    const unused = ALLOWED.filter(({ match }) => !flat.some((s) => match.test(s))).map((a) =>
      String(a.match),
    );
    assert.deepEqual(unused, [], "allowlist entries no statement of the workload needed: remove them");
  });
});

describe("the check itself, on statements written for it", () => {
  const tables: ScopedTables = new Map([
    ["users", "account_id"],
    ["radacct", "account_id"],
    ["events", "account_id"],
  ]);
  const unscoped = (statement: string) => unscopedTables(statement, tables).map((u) => u.ref);
  before(() => loadParser());

  test("bound by a parameter, a constant, a list, any(), or a join to a bound table", () => {
    assert.deepEqual(unscoped("select * from users where account_id = $1 and id = $2"), []);
    assert.deepEqual(unscoped("select * from users u where u.account_id in ($1, $2)"), []);
    assert.deepEqual(unscoped("select * from users where account_id = any($1::integer[])"), []);
    assert.deepEqual(
      unscoped("select * from radacct r join users u on u.account_id = r.account_id where r.account_id = 7"),
      [],
    );
    assert.deepEqual(
      unscoped(
        "select * from users u where u.account_id = $1 and exists (select 1 from radacct r where r.account_id = u.account_id)",
      ),
      [],
    );
    assert.deepEqual(unscoped("insert into events (account_id, kind) values ($1, $2), ($3, $4)"), []);
    assert.deepEqual(
      unscoped("update radacct set acctstoptime = now() where account_id = $1 and radacctid = $2"),
      [],
    );
  });

  test("refused: no filter, an OR, an inequality, a join on another column, an unbound outer table", () => {
    assert.deepEqual(unscoped("select * from users where id = $1"), ["users"]);
    assert.deepEqual(unscoped("select * from users where account_id = $1 or id = $2"), ["users"]);
    assert.deepEqual(unscoped("select * from users where account_id <> $1"), ["users"]);
    assert.deepEqual(
      unscoped("select * from radacct r join users u on u.id = r.radacctid where r.account_id = $1"),
      ["u"],
    );
    assert.deepEqual(
      unscoped(
        "select * from users u where exists (select 1 from radacct r where r.account_id = u.account_id)",
      ),
      ["u", "r"],
    );
    assert.deepEqual(unscoped("insert into events (kind) values ($1)"), ["events"]);
    assert.deepEqual(unscoped("update radacct set acctstoptime = now() where radacctid = $1"), ["radacct"]);
    assert.deepEqual(unscoped("delete from users using radacct where users.account_id = $1"), ["radacct"]);
    assert.deepEqual(unscoped("with x as (select id from users) select * from x"), ["users"]);
  });
});

/** The tables with an account_id column, as the migrated database has them. */
async function scopedTables(url: string): Promise<ScopedTables> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      `select table_name from information_schema.columns
       where table_schema = 'public' and column_name = 'account_id' order by table_name`,
    );
    return new Map(rows.map((r) => [r.table_name, "account_id"]));
  } finally {
    await client.end();
  }
}

/** One account's day: every door, every resource, the worker's jobs. `p` keeps names apart. */
async function workload(
  server: TestServer,
  account: AccountRow,
  receiver: Receiver,
  ports: { auth: number; acct: number },
  p = "m",
): Promise<{ account: AccountRow; webhook: number; path: string }> {
  const key = await server.key(account);
  const call = async (method: string, path: string, body?: unknown, status?: number) => {
    const answer = await server.call(method, path, { key, body });
    if (status !== undefined) assert.equal(answer.status, status, `${method} ${path}: ${answer.text}`);
    return answer.body;
  };
  const core = server.core;
  const secret = `scope-${p}-Secret-1`;
  // Only the first account's network is this host's address: RADIUS packets come from there.
  const radius = p === "m";
  const nasIp = radius ? "127.0.0.1" : "192.0.2.20";

  // The operators' doors (CLI and console call these services): network, portal, webhook, admin.
  const { network } = await core.networks.create(account.id, {
    name: `net-${p}`,
    nas_ip: nasIp,
    secret,
    coa_enabled: false,
    interim_interval: 60,
  });
  await core.networks.update(account.id, network.id, { description: "lobby" });
  await radsecDay(server, core, key, account, p);
  const { webhook } = await core.webhooks.create(account.id, { url: receiver.url(`/${p}`), events: "all" });
  await core.keys.list(account.id);

  // Users, attributes, groups.
  const user = await call("POST", "/api/users", { username: `alice-${p}`, password: "Pw-12345" }, 201);
  await call("GET", "/api/users?search=ali&sort=-created&limit=10", undefined, 200);
  await call("GET", `/api/users/${user.id}`, undefined, 200);
  await call("PUT", `/api/users/${user.id}`, { fullname: "Alice" }, 200);
  await call(
    "POST",
    "/api/attributes",
    {
      userid: user.id,
      table: "radcheck",
      attribute: "Expiration",
      operator: ":=",
      value: "1893456000",
    },
    201,
  );
  const reply = await call(
    "POST",
    "/api/attributes",
    { userid: user.id, table: "radreply", attribute: "Session-Timeout", operator: ":=", value: "3600" },
    201,
  );
  await call("GET", `/api/attributes?userid=${user.id}&table=radreply`, undefined, 200);
  await call("GET", `/api/attributes/${reply.id}?table=radreply`, undefined, 200);
  const group = await call("POST", "/api/groups", { name: `staff-${p}`, description: "Staff" }, 201);
  await call("GET", "/api/groups?search=sta", undefined, 200);
  await call("GET", `/api/groups/${group.id}`, undefined, 200);
  await call("PUT", `/api/groups/${group.id}`, { description: "All staff" }, 200);
  await call("POST", `/api/groups/${group.id}/users`, { userid: user.id, priority: 1 }, 201);
  await call("GET", `/api/groups/${group.id}/users`, undefined, 200);
  await call("GET", `/api/groups/${group.id}/users/${user.id}`, undefined, 200);
  const groupAttribute = await call(
    "POST",
    `/api/groups/${group.id}/attributes`,
    { table: "radgroupreply", attribute: "Idle-Timeout", operator: ":=", value: "600" },
    201,
  );
  await call("GET", `/api/groups/${group.id}/attributes`, undefined, 200);

  // Networks and portals (read-only in the API), and the portal's guest page.
  await call("GET", "/api/networks", undefined, 200);
  await call("GET", `/api/networks/${network.id}`, undefined, 200);
  const portal = await core.portals.create(account.id, {
    name: `lobby-${p}`,
    network_id: network.id,
    vendor: "coovachilli",
    uam_secret: "uam-s3cret",
    methods: ["voucher", "clickthrough"],
  });
  await call("GET", "/api/captiveportals", undefined, 200);
  await call("GET", `/api/captiveportals/${portal.id}`, undefined, 200);
  // A guest clicks through: the page, then the form (a sign-in left for the gateway's RADIUS request).
  const gateway = new URLSearchParams({
    res: "notyet",
    uamip: "10.1.0.1",
    uamport: "3990",
    challenge: "0123456789abcdef0123456789abcdef",
    mac: "AA-BB-CC-DD-EE-01",
  }).toString();
  const signed = `${gateway}&md=${createHash("md5")
    .update(`${server.url}/portal/${portal.id}?${gateway}uam-s3cret`)
    .digest("hex")
    .toUpperCase()}`;
  const guest = new ConsoleClient(server.url);
  assert.equal((await guest.get(`/portal/${portal.id}?${signed}`)).status, 200);
  const clicked = await guest.post(`/portal/${portal.id}`, {
    method: "clickthrough",
    terms: "yes",
    gw: signed,
  });
  assert.equal(clicked.status, 200, clicked.text);

  const providers = await identityProviderDay(server, call, p, account.id, network.id, group.name);

  // Vouchers.
  const voucher = await call("POST", "/api/vouchers", { validity: 3600, usage_limit: 1 }, 201);
  const batch = await call("POST", "/api/vouchers/batch", { quantity: 3, prefix: "SC", validity: 600 }, 201);
  await call(
    "GET",
    `/api/vouchers?status=unused&batch_id=${batch.batch_id ?? batch.data?.[0]?.batch_id ?? 1}`,
  );
  await call("GET", `/api/vouchers/${voucher.id}`, undefined, 200);

  if (radius) await radiusDay(server, key, ports, { secret, user: user.id, voucher });

  // Reports, synchronous and as a file the worker builds.
  for (const report of [110, 115, 120]) {
    await call("GET", `/api/reports/${report}?earliest=-1h&latest=%2B1h`, undefined, 200);
  }
  await call("GET", "/api/reports/120?earliest=-1h&latest=%2B1h&format=csv", undefined, 200);
  const task = await call("GET", "/api/reports/110?earliest=-7d&latest=now&format=csvfile", undefined, 202);
  await eventually(async () => {
    const answer = await server.call("GET", `/api/reports/tasks?task_name=${task.task_name}&format=csvfile`, {
      key,
    });
    return answer.status === 200 ? true : undefined;
  }, 15_000);

  // The console: an operator logs in and opens the pages that read the account's rows.
  const { password } = await core.admins.create(account, { email: `ops-${p}@example.org` });
  const browser = new ConsoleClient(server.url);
  assert.equal((await browser.login(`ops-${p}@example.org`, password)).status, 303);
  for (const page of [
    "/console",
    "/console/users",
    "/console/sessions",
    "/console/networks",
    "/console/keys",
    "/console/identity-providers",
    `/console/identity-providers/${providers.oidc}`,
  ]) {
    await browser.get(page);
  }
  // Console single sign-on: the login page's email form finds the account's providers (its
  // query is the allowlisted one), and the SAML provider's button starts a sign-in.
  const operator = new ConsoleClient(server.url);
  await operator.get("/console/login");
  const email = `ops-${p}@example.org`;
  assert.equal((await operator.post("/console/sso", { email })).status, 200);
  assert.equal((await operator.post(`/console/sso/${providers.saml}`, { email })).status, 200);

  // The sweep job's body, now that there is something to sweep (its 30 s timer would come late).
  await core.sessions.sweep();

  // Deletes, last.
  await call(
    "DELETE",
    `/api/groups/${group.id}/attributes/${groupAttribute.id}?table=radgroupreply`,
    undefined,
    204,
  );
  await call("DELETE", `/api/groups/${group.id}/users/${user.id}`, undefined, 204);
  await call("DELETE", `/api/attributes/${reply.id}?table=radreply`, undefined, 204);
  await call("DELETE", `/api/groups/${group.id}`, undefined, 204);
  await call("DELETE", `/api/vouchers/${voucher.id}`, undefined, 204);
  await call("DELETE", `/api/users/${user.id}`, undefined, 204);
  await core.portals.delete(account.id, portal.id);
  await core.portals.delete(account.id, providers.portal);
  for (const id of [providers.oidc, providers.saml])
    await call("DELETE", `/api/identityproviders/${id}`, undefined, 204);
  return { account, webhook: webhook.id, path: `/${p}` };
}

/** A SAML IdP's metadata as the service reads it (the certificate is never used here). */
const SAML_METADATA =
  '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example/saml">' +
  '<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">' +
  '<md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data>' +
  `<ds:X509Certificate>MII${"A".repeat(200)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>` +
  '<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example/sso"/>' +
  "</md:IDPSSODescriptor></md:EntityDescriptor>";

/**
 * Identity providers through the API, a portal offering one, a guest pressing its button (the
 * SAML AuthnRequest is made without the network) and a forged answer at the ACS, Wisp's SP
 * metadata (an entry lookup by the provider's id).
 */
async function identityProviderDay(
  server: TestServer,
  call: (method: string, path: string, body?: unknown, status?: number) => Promise<{ id: number }>,
  p: string,
  accountId: number,
  networkId: number,
  group: string,
): Promise<{ oidc: number; saml: number; portal: number }> {
  const oidc = await call(
    "POST",
    "/api/identityproviders",
    {
      name: `oidc-${p}`,
      kind: "oidc",
      issuer: "https://login.example.edu",
      client_id: "wisp",
      client_secret: "scope-secret",
      group_mappings: [{ idp_group: "staff", group }],
    },
    201,
  );
  const saml = await call(
    "POST",
    "/api/identityproviders",
    { name: `saml-${p}`, kind: "saml", metadata: SAML_METADATA, console_login: true },
    201,
  );
  await call("GET", "/api/identityproviders", undefined, 200);
  await call("GET", `/api/identityproviders/${oidc.id}`, undefined, 200);
  await call("PUT", `/api/identityproviders/${oidc.id}`, { display_name: "Campus", group_mappings: [] }, 200);
  const portal = await server.core.portals.create(accountId, {
    name: `idp-${p}`,
    network_id: networkId,
    vendor: "mikrotik",
    methods: ["idp"],
    identity_providers: [saml.id],
  });
  const gw = new URLSearchParams({
    "link-login-only": "http://10.5.50.1/login",
    mac: "AA:BB:CC:26:0F:01",
  }).toString();
  const guest = new ConsoleClient(server.url);
  assert.equal((await guest.get(`/portal/${portal.id}?${gw}`)).status, 200);
  const started = await guest.post(`/portal/${portal.id}/idp/${saml.id}`, { gw, lang: "en" });
  assert.equal(started.status, 200, started.text.slice(0, 300));
  const forged = await guest.post(
    `/portal/idp/${saml.id}/acs`,
    { SAMLResponse: "PHg+", RelayState: "A".repeat(43) },
    { csrf: null },
  );
  assert.equal(forged.status, 410);
  assert.equal((await guest.get(`/portal/idp/${saml.id}/metadata`)).status, 200);
  return { oidc: oidc.id, saml: saml.id, portal: portal.id };
}

/**
 * Webhooks, once both accounts' events are out: the worker delivered each account's events (the
 * dispatcher waits for every older transaction on the server, so this waits for the slowest);
 * then the attempt log, an update, a test event and the endpoint's deletion.
 */
async function webhookDay(
  server: TestServer,
  receiver: Receiver,
  hooks: { account: AccountRow; webhook: number; path: string }[],
): Promise<void> {
  const core = server.core;
  await eventually(
    async () => (hooks.every((h) => receiver.received.some((r) => r.path === h.path)) ? true : undefined),
    30_000,
  ).catch(async () => {
    const { rows } = await sql<{
      datname: string;
      age: string;
    }>`select datname, (now() - xact_start)::text as age
      from pg_stat_activity where backend_xmin is not null and pid <> pg_backend_pid()
      order by xact_start limit 3`.execute(core.database.db);
    throw new Error(
      `no webhook delivered in 30 s; transactions holding the snapshot back: ${JSON.stringify(rows)}`,
    );
  });
  for (const { account, webhook } of hooks) {
    const deliveries = await core.webhooks.deliveries(account.id, webhook, 10);
    await core.webhooks.delivery(account.id, deliveries[0]!.id);
    await core.webhooks.update(account.id, webhook, { events: "user.created,session.started" });
    await core.webhooks.sendTest(account.id, webhook);
    await core.webhooks.delete(account.id, webhook);
  }
}

/** RADIUS over UDP: logins (user, wrong password, voucher), a session's accounting, and the jobs
 * it leads to (a CoA for a changed reply item, a disconnect for a disabled voucher). */
async function radiusDay(
  server: TestServer,
  key: string,
  ports: { auth: number; acct: number },
  { secret, user, voucher }: { secret: string; user: number; voucher: { id: number; code: string } },
): Promise<void> {
  const call = async (method: string, path: string, body?: unknown, status?: number) => {
    const answer = await server.call(method, path, { key, body });
    if (status !== undefined) assert.equal(answer.status, status, `${method} ${path}: ${answer.text}`);
    return answer.body;
  };
  const username = (await call("GET", `/api/users/${user}`, undefined, 200)).username as string;
  const login = (username: string, password: string) =>
    sendRadius({
      ...accessRequestPap(username, password, [["Calling-Station-Id", "02-00-00-00-09-09"]]),
      host: "127.0.0.1",
      port: ports.auth,
      secret,
      timeoutMs: 2000,
      retries: 0,
    });
  assert.equal((await login(username, "Pw-12345")).type, "Access-Accept");
  assert.equal((await login(username, "wrong")).type, "Access-Reject");
  assert.equal((await login(voucher.code, voucher.code)).type, "Access-Accept");
  const send = accountingSender(ports.acct, secret);
  const station = { user: username, session: "s-1", mac: "02-00-00-00-04-01" };
  await send(station, "Start");
  await send(station, "Interim-Update", [
    ["Acct-Session-Time", 30],
    ["Acct-Output-Octets", 1000],
  ]);
  const voucherStation = { user: voucher.code, session: "s-2", mac: "02-00-00-00-09-09" };
  await send(voucherStation, "Start");

  // Sessions through the API; a disconnect refused (CoA off) and one recorded through the worker.
  const sessions = await call("GET", "/api/sessions?status=active", undefined, 200);
  const open = sessions.data.find((s: { acct_session_id: string }) => s.acct_session_id === station.session);
  await call("GET", `/api/sessions/${open.id}`, undefined, 200);
  await call("POST", `/api/sessions/${open.id}/disconnect`, { reason: "test" }, 409);
  // A reply item a gateway applies changes: a CoA job; disabling the voucher: a disconnect job.
  await call(
    "POST",
    "/api/attributes",
    { userid: user, table: "radreply", attribute: "Idle-Timeout", operator: ":=", value: "300" },
    201,
  );
  await call("PATCH", `/api/vouchers/${voucher.id}`, { status: "disabled" }, 200);
  await eventually(async () => {
    const row = await call("GET", `/api/sessions?client_mac=${voucherStation.mac}`, undefined, 200);
    return row.data[0]?.disconnect?.result === "error" ? true : undefined;
  }, 10_000);
  await send(station, "Stop", [
    ["Acct-Session-Time", 60],
    ["Acct-Terminate-Cause", "User-Request"],
  ]);
}

/** A network's RadSec set-up through the API, and the listener's questions (authorities, identify). */
async function radsecDay(
  server: TestServer,
  core: TestServer["core"],
  key: string,
  account: AccountRow,
  p: string,
) {
  const { network } = await core.networks.create(account.id, { name: `radsec-${p}`, nas_ip: "" });
  const path = `/api/networks/${network.id}/radsec`;
  const call = async (method: string, url: string, body?: unknown) => {
    const answer = await server.call(method, url, { key, body });
    assert.ok(answer.status < 300, `${method} ${url}: ${answer.text}`);
    return answer.body;
  };
  const issued = await call("POST", `${path}/certificates`, { password: "scope p12 password" });
  const outside = await createAuthority(`Scope CA ${p}`, 30);
  await call("PUT", `${path}/ca`, { ca: outside.cert, match: { field: "cn", patterns: ["*"] } });
  await call("GET", path);
  await call("GET", `${path}/certificates/${issued.certificate.serial}`);
  await call("GET", `/api/networks?limit=5`);
  const leaf = await createLeaf(await signerOf(outside), {
    commonName: `nas-${p}`,
    names: [{ type: "dns", value: `nas-${p}.example` }],
    purpose: EKU_CLIENT_AUTH,
    days: 5,
  });
  await core.radsec.authorities();
  for (const der of [Buffer.from(issued.cert.replace(/-----[^-]+-----|\s/g, ""), "base64"), leaf.der]) {
    const identity = await core.radsec.identify({ chain: [der] });
    assert.ok("network" in identity && identity.network.id === network.id, JSON.stringify(identity));
  }
  await call("POST", `${path}/certificates/${issued.certificate.serial}/revoke`, {});
  await call("DELETE", `${path}/ca`);
  await core.networks.delete(account.id, network.id);
}
