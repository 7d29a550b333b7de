// The audit log through the REST API: every write operation the OpenAPI document lists (POST, PUT,
// PATCH, DELETE) is called once with a valid request and must leave exactly one new audit row,
// naming the key that made it and the resource it changed. The list comes from the document, so a
// route added later fails here until it has a fixture below and its service records its change.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MASK } from "../../src/core/audit/mask.ts";
import { createAuthority } from "../../src/core/certs/x509.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/** Write operations that legitimately change nothing, each with the reason. */
const WRITES_NOTHING: Record<string, string> = {
  "POST /api/policies/explain": "what a login would get, and why: nothing sent, nothing recorded",
};

/** Write operations whose row is checked by a suite that can drive them, each naming it. */
const CHECKED_ELSEWHERE: Record<string, string> = {
  "POST /api/sessions/{session_id}/disconnect":
    "needs an open session and a DAS that answers: test/audit/worker-walk.test.ts",
};

interface Call {
  path: string;
  body?: unknown;
  /** The resource the audit row must name. */
  resource: string;
}

type Fixture = (server: TestServer, key: string) => Promise<Call>;

let serial = 0;
const unique = (prefix: string) => `${prefix}${++serial}`;

async function json(server: TestServer, key: string, method: string, path: string, body?: unknown) {
  const res = await server.call(method, path, { key, body });
  assert.ok(res.status < 300, `${method} ${path} (fixture set-up): ${res.status} ${res.text}`);
  return res.body;
}

const user = (s: TestServer, k: string) =>
  json(s, k, "POST", "/api/users", { username: unique("walker"), password: "pw-walk" });
const group = (s: TestServer, k: string) => json(s, k, "POST", "/api/groups", { name: unique("walkers") });
const voucher = (s: TestServer, k: string) => json(s, k, "POST", "/api/vouchers", { validity: 3600 });
const device = (s: TestServer, k: string) =>
  json(s, k, "POST", "/api/devices", {
    mac: `02:00:00:00:00:${(++serial % 256).toString(16).padStart(2, "0")}`,
  });
const oidc = () => ({
  name: unique("idp"),
  kind: "oidc",
  display_name: "Campus ID",
  issuer: "https://login.example.edu/",
  client_id: "wisp",
  client_secret: "a client secret",
});
const provider = (s: TestServer, k: string) => json(s, k, "POST", "/api/identityproviders", oidc());
async function network(s: TestServer) {
  const account = await s.account("default");
  return (await s.core.networks.create(account.id, { name: unique("site"), nas_ip: "" })).network;
}
async function radsecCertificate(s: TestServer, k: string) {
  const site = await network(s);
  const path = `/api/networks/${site.id}/radsec/certificates`;
  const issued = await json(s, k, "POST", path, { password: "a p12 password" });
  return { site, serial: issued.certificate.serial as string };
}
async function uploadedCa(s: TestServer, k: string) {
  const site = await network(s);
  const ca = await createAuthority("Outside RadSec CA", 365);
  await json(s, k, "PUT", `/api/networks/${site.id}/radsec/ca`, {
    ca: ca.cert,
    match: { field: "cn", patterns: ["ap*"] },
  });
  return site;
}

const plan = (s: TestServer, k: string) =>
  json(s, k, "POST", "/api/plans", { name: unique("plan"), download_kbps: 2048 });
const policy = (s: TestServer, k: string) =>
  json(s, k, "POST", "/api/policies", { name: unique("policy"), outcome: { action: "accept" } });
const batch = (s: TestServer, k: string) =>
  json(s, k, "POST", "/api/vouchers/batch", { quantity: 2, validity: 3600 });
/** A directory on a port nobody listens on: its sync fails fast and still reports (one row). */
const directoryBody = () => ({
  name: unique("corp"),
  servers: ["ldap://127.0.0.1:9"],
  bind_password: "a bind password",
  user_base: "ou=people,dc=example,dc=org",
  connect_timeout_ms: 200,
  timeout_ms: 200,
});
const directory = (s: TestServer, k: string) => json(s, k, "POST", "/api/directories", directoryBody());

const FIXTURES: Record<string, Fixture> = {
  "PUT /api/vouchers/batch/{batch_id}": async (s, k) => ({
    path: `/api/vouchers/batch/${(await batch(s, k)).batch_id}`,
    body: { plan_id: (await plan(s, k)).id },
    resource: "voucher_batch",
  }),
  "PATCH /api/vouchers/batch/{batch_id}": async (s, k) => ({
    path: `/api/vouchers/batch/${(await batch(s, k)).batch_id}`,
    body: { plan_id: null },
    resource: "voucher_batch",
  }),
  "POST /api/policies": async () => ({
    path: "/api/policies",
    body: { name: unique("policy"), outcome: { action: "reject", reason: "walk" } },
    resource: "policy",
  }),
  "PUT /api/policies/default": async () => ({
    path: "/api/policies/default",
    body: { time_zone: "Europe/Paris" },
    resource: "policy_default",
  }),
  "PUT /api/policies/order": async (s, k) => {
    await policy(s, k);
    const list = await json(s, k, "GET", "/api/policies");
    const ids = (list.data as { id: number }[]).map((p) => p.id).reverse();
    return { path: "/api/policies/order", body: { ids }, resource: "policy_order" };
  },
  "PUT /api/policies/{policy_id}": async (s, k) => ({
    path: `/api/policies/${(await policy(s, k)).id}`,
    body: { description: "put" },
    resource: "policy",
  }),
  "PATCH /api/policies/{policy_id}": async (s, k) => ({
    path: `/api/policies/${(await policy(s, k)).id}`,
    body: { description: "patch" },
    resource: "policy",
  }),
  "DELETE /api/policies/{policy_id}": async (s, k) => ({
    path: `/api/policies/${(await policy(s, k)).id}`,
    resource: "policy",
  }),
  "POST /api/policies/{policy_id}/move": async (s, k) => {
    await policy(s, k);
    return {
      path: `/api/policies/${(await policy(s, k)).id}/move`,
      body: { position: 1 },
      resource: "policy",
    };
  },
  "POST /api/plans": async () => ({
    path: "/api/plans",
    body: { name: unique("plan"), download_kbps: 1024 },
    resource: "plan",
  }),
  "PUT /api/plans/{plan_id}": async (s, k) => ({
    path: `/api/plans/${(await plan(s, k)).id}`,
    body: { upload_kbps: 512 },
    resource: "plan",
  }),
  "PATCH /api/plans/{plan_id}": async (s, k) => ({
    path: `/api/plans/${(await plan(s, k)).id}`,
    body: { description: "patch" },
    resource: "plan",
  }),
  "DELETE /api/plans/{plan_id}": async (s, k) => ({
    path: `/api/plans/${(await plan(s, k)).id}`,
    resource: "plan",
  }),
  "POST /api/directories": async () => ({
    path: "/api/directories",
    body: directoryBody(),
    resource: "directory",
  }),
  "PUT /api/directories/{directory}": async (s, k) => ({
    path: `/api/directories/${(await directory(s, k)).id}`,
    body: { user_filter: "(objectClass=person)" },
    resource: "directory",
  }),
  "PATCH /api/directories/{directory}": async (s, k) => ({
    path: `/api/directories/${(await directory(s, k)).id}`,
    body: { bind_password: "another bind password" },
    resource: "directory",
  }),
  "DELETE /api/directories/{directory}": async (s, k) => ({
    path: `/api/directories/${(await directory(s, k)).id}`,
    resource: "directory",
  }),
  "POST /api/directories/{directory}/sync": async (s, k) => ({
    path: `/api/directories/${(await directory(s, k)).id}/sync`,
    resource: "directory",
  }),
  "POST /api/users": async () => ({
    path: "/api/users",
    body: { username: unique("new"), password: "pw" },
    resource: "user",
  }),
  "PUT /api/users/{user_id}": async (s, k) => ({
    path: `/api/users/${(await user(s, k)).id}`,
    body: { fullname: "Put" },
    resource: "user",
  }),
  "PATCH /api/users/{user_id}": async (s, k) => ({
    path: `/api/users/${(await user(s, k)).id}`,
    body: { password: "new secret" },
    resource: "user",
  }),
  "DELETE /api/users/{user_id}": async (s, k) => ({
    path: `/api/users/${(await user(s, k)).id}`,
    resource: "user",
  }),
  "POST /api/attributes": async (s, k) => ({
    path: "/api/attributes",
    body: {
      userid: (await user(s, k)).id,
      table: "radreply",
      attribute: "Session-Timeout",
      operator: "=",
      value: "60",
    },
    resource: "user_attribute",
  }),
  "DELETE /api/attributes/{attribute_id}": async (s, k) => {
    const item = await json(s, k, "POST", "/api/attributes", {
      userid: (await user(s, k)).id,
      table: "radreply",
      attribute: "Session-Timeout",
      operator: "=",
      value: "60",
    });
    return { path: `/api/attributes/${item.id}?table=radreply`, resource: "user_attribute" };
  },
  "POST /api/groups": async () => ({ path: "/api/groups", body: { name: unique("g") }, resource: "group" }),
  "PUT /api/groups/{group_id}": async (s, k) => ({
    path: `/api/groups/${(await group(s, k)).id}`,
    body: { description: "put" },
    resource: "group",
  }),
  "PATCH /api/groups/{group_id}": async (s, k) => ({
    path: `/api/groups/${(await group(s, k)).id}`,
    body: { description: "patch" },
    resource: "group",
  }),
  "DELETE /api/groups/{group_id}": async (s, k) => ({
    path: `/api/groups/${(await group(s, k)).id}`,
    resource: "group",
  }),
  "POST /api/groups/{group_id}/users": async (s, k) => ({
    path: `/api/groups/${(await group(s, k)).id}/users`,
    body: { userid: (await user(s, k)).id },
    resource: "group_member",
  }),
  "DELETE /api/groups/{group_id}/users/{userid}": async (s, k) => {
    const g = await group(s, k);
    const u = await user(s, k);
    await json(s, k, "POST", `/api/groups/${g.id}/users`, { userid: u.id });
    return { path: `/api/groups/${g.id}/users/${u.id}`, resource: "group_member" };
  },
  "POST /api/groups/{group_id}/attributes": async (s, k) => ({
    path: `/api/groups/${(await group(s, k)).id}/attributes`,
    body: { table: "radgroupreply", attribute: "Session-Timeout", operator: "=", value: "60" },
    resource: "group_attribute",
  }),
  "DELETE /api/groups/{group_id}/attributes/{attribute_id}": async (s, k) => {
    const g = await group(s, k);
    const item = await json(s, k, "POST", `/api/groups/${g.id}/attributes`, {
      table: "radgroupreply",
      attribute: "Session-Timeout",
      operator: "=",
      value: "60",
    });
    return {
      path: `/api/groups/${g.id}/attributes/${item.id}?table=radgroupreply`,
      resource: "group_attribute",
    };
  },
  "POST /api/vouchers": async () => ({
    path: "/api/vouchers",
    body: { validity: 3600 },
    resource: "voucher",
  }),
  "PUT /api/vouchers/{voucher_id}": async (s, k) => ({
    path: `/api/vouchers/${(await voucher(s, k)).id}`,
    body: { status: "disabled" },
    resource: "voucher",
  }),
  "PATCH /api/vouchers/{voucher_id}": async (s, k) => ({
    path: `/api/vouchers/${(await voucher(s, k)).id}`,
    body: { status: "disabled" },
    resource: "voucher",
  }),
  "DELETE /api/vouchers/{voucher_id}": async (s, k) => ({
    path: `/api/vouchers/${(await voucher(s, k)).id}`,
    resource: "voucher",
  }),
  "POST /api/vouchers/batch": async () => ({
    path: "/api/vouchers/batch",
    body: { quantity: 5, validity: 3600 },
    resource: "voucher_batch",
  }),
  "POST /api/identityproviders": async () => ({
    path: "/api/identityproviders",
    body: oidc(),
    resource: "identity_provider",
  }),
  "PUT /api/identityproviders/{provider_id}": async (s, k) => ({
    path: `/api/identityproviders/${(await provider(s, k)).id}`,
    body: { display_name: "Put" },
    resource: "identity_provider",
  }),
  "PATCH /api/identityproviders/{provider_id}": async (s, k) => ({
    path: `/api/identityproviders/${(await provider(s, k)).id}`,
    body: { client_secret: "another secret" },
    resource: "identity_provider",
  }),
  "DELETE /api/identityproviders/{provider_id}": async (s, k) => ({
    path: `/api/identityproviders/${(await provider(s, k)).id}`,
    resource: "identity_provider",
  }),
  "POST /api/devices": async () => ({
    path: "/api/devices",
    body: { mac: "02:aa:00:00:00:01" },
    resource: "device",
  }),
  "PUT /api/devices/{device_id}": async (s, k) => ({
    path: `/api/devices/${(await device(s, k)).id}`,
    body: { name: "put" },
    resource: "device",
  }),
  "PATCH /api/devices/{device_id}": async (s, k) => ({
    path: `/api/devices/${(await device(s, k)).id}`,
    body: { name: "patch" },
    resource: "device",
  }),
  "DELETE /api/devices/{device_id}": async (s, k) => ({
    path: `/api/devices/${(await device(s, k)).id}`,
    resource: "device",
  }),
  "POST /api/networks/{network_id}/radsec/certificates": async (s) => ({
    path: `/api/networks/${(await network(s)).id}/radsec/certificates`,
    body: { password: "a p12 password" },
    resource: "radsec_certificate",
  }),
  "POST /api/networks/{network_id}/radsec/certificates/{serial}/revoke": async (s, k) => {
    const { site, serial: number } = await radsecCertificate(s, k);
    return {
      path: `/api/networks/${site.id}/radsec/certificates/${number}/revoke`,
      resource: "radsec_certificate",
    };
  },
  "PUT /api/networks/{network_id}/radsec/ca": async (s) => {
    const ca = await createAuthority("Outside RadSec CA", 365);
    return {
      path: `/api/networks/${(await network(s)).id}/radsec/ca`,
      body: { ca: ca.cert, match: { field: "cn", patterns: ["ap*"] } },
      resource: "radsec_ca",
    };
  },
  "DELETE /api/networks/{network_id}/radsec/ca": async (s, k) => ({
    path: `/api/networks/${(await uploadedCa(s, k)).id}/radsec/ca`,
    resource: "radsec_ca",
  }),
};

const WRITE_METHODS = ["post", "put", "patch", "delete"];

async function writeOperations(server: TestServer): Promise<string[]> {
  const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.keys(operations)
      .filter((method) => WRITE_METHODS.includes(method))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
}

async function lastRows(server: TestServer, afterId: number) {
  return server.core.database.db
    .selectFrom("audit_log")
    .selectAll()
    .where("id", ">", afterId)
    .orderBy("id")
    .execute();
}

async function maxId(server: TestServer): Promise<number> {
  const row = await server.core.database.db
    .selectFrom("audit_log")
    .select((eb) => eb.fn.max("id").as("id"))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}

for (const { dialect, skip } of await dialects()) {
  describe(`audit log: every API write on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let key: string;
    let keyId: string;

    before(async () => {
      // The walk makes a few hundred calls with one key: above the default 100 a minute.
      server = await startTestServer({ dialect, env: { RATE_LIMIT_PER_MINUTE: "10000" } });
      key = await server.key("default", { name: "auditor walk", permissions: "full" });
      const listed = await server.core.keys.list();
      keyId = String(listed.find((k) => k.name === "auditor walk")!.id);
    });
    after(() => server?.stop());

    test("each write operation of the OpenAPI document leaves exactly one audit row naming the key", async () => {
      const operations = await writeOperations(server);
      assert.ok(operations.length >= 30, `only ${operations.length} write operations found`);
      // PostgreSQL: a short run of a few operations (the SQL is the same; the walk is long).
      const walked =
        dialect === "sqlite"
          ? operations
          : operations.filter((op) =>
              ["POST /api/users", "PATCH /api/users/{user_id}", "POST /api/vouchers/batch"].includes(op),
            );
      const unaudited: string[] = [];
      for (const operation of walked) {
        if (operation in WRITES_NOTHING || operation in CHECKED_ELSEWHERE) continue;
        const fixture = FIXTURES[operation];
        if (!fixture) {
          unaudited.push(
            `${operation}: no fixture in test/audit/api-walk.test.ts (add one, and make its service call repo.audit)`,
          );
          continue;
        }
        const call = await fixture(server, key);
        const method = operation.split(" ")[0]!;
        const start = await maxId(server);
        const body = call.body ?? (method === "DELETE" ? undefined : {});
        const res = await server.call(method, call.path, { key, body });
        assert.ok(res.status < 300, `${operation} ${call.path}: ${res.status} ${res.text}`);
        const rows = await lastRows(server, start);
        if (rows.length !== 1) {
          unaudited.push(
            `${operation}: ${rows.length} audit rows (want exactly 1): ${rows.map((r) => `${r.resource}/${r.action}`).join(", ")}`,
          );
          continue;
        }
        const row = rows[0]!;
        assert.equal(row.actor_type, "api_key", operation);
        assert.equal(row.actor_id, keyId, operation);
        assert.equal(row.actor_name, "auditor walk", operation);
        assert.equal(row.address, "127.0.0.1", operation);
        assert.equal(row.resource, call.resource, operation);
        assert.match(row.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      }
      assert.deepEqual(
        unaudited,
        [],
        `write operations without exactly one audit row:\n${unaudited.join("\n")}`,
      );
    });

    test("secrets are masked: a user's password and an identity provider's client secret", async () => {
      const start = await maxId(server);
      await json(server, key, "POST", "/api/users", { username: unique("masked"), password: "hunter2" });
      await json(server, key, "POST", "/api/identityproviders", oidc());
      const rows = await lastRows(server, start);
      assert.equal(rows.length, 2);
      const text = rows.map((r) => `${r.before} ${r.after}`).join(" ");
      assert.doesNotMatch(text, /hunter2|a client secret/);
      assert.equal(JSON.parse(rows[0]!.after!).password, MASK);
      assert.equal(JSON.parse(rows[1]!.after!).client_secret, MASK);
    });

    test("GET /api/audit: filters, CSV, audit:read (not in read), bad dates and huge ranges 400", async () => {
      const created = await json(server, key, "POST", "/api/users", { username: unique("listed") });
      const query = `/api/audit?resource=user&resource_id=${created.id}&actor=${keyId}`;
      const list = await server.call("GET", query, { key });
      assert.equal(list.status, 200, list.text);
      assert.equal(list.body.total, 1);
      assert.equal(list.body.data[0].action, "create");
      assert.equal(list.body.data[0].actor_name, "auditor walk");
      const csv = await server.call("GET", `${query}&format=csv`, { key });
      assert.equal(csv.status, 200);
      assert.match(csv.headers.get("content-type") ?? "", /text\/csv/);
      assert.match(csv.text, /^id,time,actor_type,/);
      assert.equal(csv.text.trim().split("\r\n").length, 2);
      const reader = await server.key("default", { permissions: "read" });
      assert.equal((await server.call("GET", "/api/audit", { key: reader })).status, 403);
      const auditor = await server.key("default", { permissions: "audit:read" });
      assert.equal((await server.call("GET", "/api/audit", { key: auditor })).status, 200);
      for (const bad of [
        "from=yesterday",
        "to=2025-13-40",
        "from=2020-01-01&to=2025-01-01",
        "from=2025-02-01&to=2025-01-01",
      ]) {
        const res = await server.call("GET", `/api/audit?${bad}`, { key });
        assert.equal(res.status, 400, `${bad}: ${res.text}`);
        assert.equal(res.body.error, true);
      }
    });

    test("SCIM writes (users, groups): one row each, naming the SCIM key", async () => {
      const scimKey = await server.key("default", { name: "entra scim", permissions: "scim:write" });
      const scimKeyId = String((await server.core.keys.list()).find((k) => k.name === "entra scim")!.id);
      const scim = async (method: string, path: string, body?: unknown) => {
        const start = await maxId(server);
        const headers: Record<string, string> = { authorization: `Bearer ${scimKey}` };
        if (body !== undefined) headers["content-type"] = "application/scim+json";
        const init: RequestInit = { method, headers };
        if (body !== undefined) init.body = JSON.stringify(body);
        const res = await fetch(`${server.url}/scim/v2${path}`, init);
        const text = await res.text();
        assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
        const rows = await lastRows(server, start);
        assert.equal(rows.length, 1, `${method} ${path}: ${rows.map((r) => `${r.resource}/${r.action}`)}`);
        assert.equal(rows[0]!.actor_type, "api_key");
        assert.equal(rows[0]!.actor_id, scimKeyId);
        assert.equal(rows[0]!.actor_name, "entra scim");
        return { row: rows[0]!, body: text ? JSON.parse(text) : undefined };
      };
      const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
      const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
      const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
      const userName = unique("scim-user");
      const made = await scim("POST", "/Users", {
        schemas: [USER],
        userName,
        password: "scim secret",
        active: true,
      });
      assert.equal(made.row.resource, "user");
      assert.equal(made.row.action, "create");
      assert.equal(JSON.parse(made.row.after!).password, MASK);
      const id = made.body.id as string;
      const off = [{ op: "replace", path: "active", value: false }];
      const patched = await scim("PATCH", `/Users/${id}`, { schemas: [PATCH], Operations: off });
      assert.equal(patched.row.action, "update");
      await scim("PUT", `/Users/${id}`, { schemas: [USER], userName, active: true });
      const group = await scim("POST", "/Groups", { schemas: [GROUP], displayName: unique("scim-group") });
      assert.equal(group.row.resource, "group");
      const gid = group.body.id as string;
      const add = [{ op: "add", path: "members", value: [{ value: id }] }];
      const joined = await scim("PATCH", `/Groups/${gid}`, { schemas: [PATCH], Operations: add });
      assert.deepEqual(JSON.parse(joined.row.after!).members, [userName]);
      assert.equal((await scim("DELETE", `/Groups/${gid}`)).row.action, "delete");
      assert.equal((await scim("DELETE", `/Users/${id}`)).row.action, "delete");
    });

    test("the audit log cannot be changed or deleted through the API", async () => {
      for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
        for (const path of ["/api/audit", "/api/audit/1"]) {
          const res = await server.call(method, path, { key, body: method === "DELETE" ? undefined : {} });
          assert.ok([404, 405].includes(res.status), `${method} ${path}: ${res.status}`);
        }
      }
    });
  });
}
