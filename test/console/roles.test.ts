// Console roles route by route (issue 29 point 1): every route the console registers (fastify's own
// list, collected as the console plugin is registered) is in this file's table with the permission
// it must need, declares exactly that permission, and for each of the six roles answers as the
// role table (core/admins/roles.ts) says: refused with the 403 page, or let through. A route added
// without an entry here fails the first test. Then a refused form is shown to write nothing, the
// menu to show only what a role can use, and a role change to count from the very next request.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import Fastify from "fastify";
import { consolePlugin } from "../../src/console/plugin.ts";
import { ROLE_NAMES, type Role, roleAllows } from "../../src/core/admins/roles.ts";
import type { Permission } from "../../src/core/keys/permissions.ts";
import { MemoryCounterStore } from "../../src/http/rate-limit.ts";
import { ConsoleClient } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/** What each console route must need: "public" (no session), "self" (any role), or a permission. */
const ROUTES: Record<string, Permission | "public" | "self"> = {
  "GET /console/static/:name": "public",
  "GET /console/setup": "public",
  "POST /console/setup": "public",
  "GET /console/login": "public",
  "POST /console/login": "public",
  "POST /console/logout": "self",
  "GET /console": "self",
  "GET /console/keys": "keys:read",
  "POST /console/keys": "keys:write",
  "GET /console/keys/:id/secret": "keys:write",
  "GET /console/keys/:id/revoke": "keys:write",
  "POST /console/keys/:id/revoke": "keys:write",
  "GET /console/networks": "networks:read",
  "GET /console/networks/new": "networks:write",
  "POST /console/networks": "networks:write",
  "GET /console/networks/:id": "networks:read",
  "GET /console/networks/:id/edit": "networks:write",
  "POST /console/networks/:id": "networks:write",
  "GET /console/networks/:id/secret": "networks:write",
  "GET /console/networks/:id/rotate": "networks:write",
  "POST /console/networks/:id/rotate": "networks:write",
  "GET /console/networks/:id/delete": "networks:write",
  "POST /console/networks/:id/delete": "networks:write",
  "POST /console/networks/:id/radsec/certificates": "networks:write",
  "GET /console/networks/:id/radsec/certificates/:serial": "networks:read",
  "POST /console/networks/:id/radsec/certificates/:serial/revoke": "networks:write",
  "POST /console/networks/:id/radsec/ca": "networks:write",
  "POST /console/networks/:id/radsec/ca/delete": "networks:write",
  "GET /console/eap/ca.pem": "networks:read",
  "GET /console/eap/ca.der": "networks:read",
  "GET /console/portals": "captiveportals:read",
  "GET /console/portals/new": "captiveportals:write",
  "POST /console/portals": "captiveportals:write",
  "GET /console/portals/:id/edit": "captiveportals:read",
  "POST /console/portals/:id": "captiveportals:write",
  "POST /console/portals/:id/logo": "captiveportals:write",
  "POST /console/portals/:id/logo/delete": "captiveportals:write",
  "GET /console/portals/:id/logo": "captiveportals:read",
  "GET /console/portals/:id/preview": "captiveportals:read",
  "POST /console/portals/:id/preview": "captiveportals:read",
  "POST /console/portals/preview": "captiveportals:read",
  "GET /console/portals/:id/delete": "captiveportals:write",
  "POST /console/portals/:id/delete": "captiveportals:write",
  "GET /console/guests": "users:read",
  "POST /console/guests/:id/decide": "users:write",
  "GET /console/users": "users:read",
  "GET /console/users/new": "users:write",
  "POST /console/users": "users:write",
  "GET /console/users/:id": "users:read",
  "POST /console/users/:id": "users:write",
  "POST /console/users/:id/status": "users:write",
  "POST /console/users/:id/attributes": "attributes:write",
  "POST /console/users/:id/attributes/delete": "attributes:write",
  "POST /console/users/:id/groups": "users:write",
  "POST /console/users/:id/groups/:groupId/delete": "users:write",
  "GET /console/users/:id/delete": "users:write",
  "POST /console/users/:id/delete": "users:write",
  "GET /console/groups": "groups:read",
  "POST /console/groups": "groups:write",
  "GET /console/groups/:id/delete": "groups:write",
  "POST /console/groups/:id/delete": "groups:write",
  "GET /console/vouchers": "vouchers:read",
  "POST /console/vouchers/batches": "vouchers:write",
  "GET /console/vouchers/batches/:id": "vouchers:read",
  "GET /console/vouchers/batches/:id/print": "vouchers:read",
  "GET /console/vouchers/batches/:id/csv": "vouchers:read",
  "GET /console/devices": "devices:read",
  "GET /console/devices/new": "devices:write",
  "POST /console/devices": "devices:write",
  "GET /console/devices/export": "devices:read",
  "GET /console/devices/import": "devices:write",
  "POST /console/devices/import": "devices:write",
  "GET /console/devices/:id": "devices:read",
  "POST /console/devices/:id": "devices:write",
  "POST /console/devices/:id/status": "devices:write",
  "GET /console/devices/:id/delete": "devices:write",
  "POST /console/devices/:id/delete": "devices:write",
  "GET /console/reports": "reports:read",
  "GET /console/reports/csv": "reports:read",
  "POST /console/reports/tasks": "reports:read",
  "GET /console/reports/tasks/:name": "reports:read",
  "GET /console/reports/tasks/:name/download": "reports:read",
  "GET /console/webhooks": "webhooks:read",
  "POST /console/webhooks": "webhooks:write",
  "GET /console/webhooks/:id/secret": "webhooks:write",
  "GET /console/webhooks/:id": "webhooks:read",
  "POST /console/webhooks/:id/enabled": "webhooks:write",
  "POST /console/webhooks/:id/test": "webhooks:write",
  "POST /console/webhooks/:id/deliveries/:delivery/resend": "webhooks:write",
  "GET /console/webhooks/:id/rotate": "webhooks:write",
  "POST /console/webhooks/:id/rotate": "webhooks:write",
  "GET /console/webhooks/:id/delete": "webhooks:write",
  "POST /console/webhooks/:id/delete": "webhooks:write",
  "GET /console/sessions": "sessions:read",
  "GET /console/sessions/live": "sessions:read",
  "POST /console/sessions/:id/disconnect": "sessions:write",
  "GET /console/identity-providers": "identityproviders:read",
  "GET /console/identity-providers/new": "identityproviders:write",
  "GET /console/identity-providers/:id": "identityproviders:read",
  "POST /console/identity-providers": "identityproviders:write",
  "POST /console/identity-providers/:id": "identityproviders:write",
  "GET /console/identity-providers/:id/delete": "identityproviders:write",
  "POST /console/identity-providers/:id/delete": "identityproviders:write",
  "POST /console/identity-providers/password-login": "team:write",
  "GET /console/team": "team:read",
  "POST /console/team/invites": "team:write",
  "POST /console/team/invites/:id/withdraw": "team:write",
  "POST /console/team/:id/role": "team:write",
  "GET /console/team/:id/remove": "team:write",
  "POST /console/team/:id/remove": "team:write",
  "GET /console/team/:id/sessions": "team:write",
  "POST /console/team/:id/sessions/:session/end": "team:write",
  "GET /console/invite/:token": "public",
  "POST /console/invite/:token": "public",
  "GET /console/account/sessions": "self",
  "POST /console/account/sessions/:id/end": "self",
  "GET /console/policies": "policies:read",
  "POST /console/policies": "policies:write",
  "POST /console/policies/explain": "policies:read",
  "POST /console/policies/default": "policies:write",
  "POST /console/policies/:id/move": "policies:write",
  "GET /console/policies/:id": "policies:read",
  "POST /console/policies/:id": "policies:write",
  "POST /console/policies/:id/delete": "policies:write",
  "GET /console/plans": "plans:read",
  "POST /console/plans": "plans:write",
  "GET /console/plans/:id": "plans:read",
  "POST /console/plans/:id": "plans:write",
  "POST /console/plans/:id/delete": "plans:write",
  "GET /console/directories": "directories:read",
  "GET /console/directories/new": "directories:write",
  "POST /console/directories": "directories:write",
  "GET /console/directories/:id": "directories:read",
  "POST /console/directories/:id": "directories:write",
  "POST /console/directories/:id/delete": "directories:write",
  "POST /console/directories/:id/sync": "directories:write",
  "POST /console/groups/:id/plan": "groups:write",
  "POST /console/vouchers/batches/:id/plan": "vouchers:write",
  "GET /console/access-points": "nodes:read",
  "GET /console/audit": "audit:read",
  "GET /console/audit.csv": "audit:read",
  "GET /console/access-points/:mac": "nodes:read",
  "GET /console/security": "self",
  "GET /console/security/totp": "self",
  "POST /console/security/totp": "self",
  "POST /console/security/totp/remove": "self",
  "POST /console/security/passkeys": "self",
  "POST /console/security/passkeys/:id": "self",
  "POST /console/security/passkeys/:id/remove": "self",
  "POST /console/security/recovery-codes": "self",
  "GET /console/security/recovery-codes": "self",
  "POST /console/security/requirement": "team:write",
  "GET /console/login/second-factor": "public",
  "POST /console/login/second-factor/:method": "public",
  "GET /console/login/enrol": "public",
  "POST /console/login/enrol/:method": "public",
  "POST /console/login/passkey": "public",
  "POST /console/login/passkey/finish": "public",
  "POST /console/login/cancel": "public",
  "POST /console/sso": "public",
  "POST /console/sso/:provider": "public",
  "GET /console/sso/:provider/finish/:token": "public",
};

/** Fields some allowed forms get so that letting them through changes nothing. */
const FIELDS: Record<string, Record<string, string>> = {
  "POST /console/identity-providers/password-login": { password_login: "on" },
};

const PASSWORD = "roles test password";
const REFUSED = /does not allow this: it needs the ([a-z]+:(?:read|write)) permission/;

interface Route {
  method: string;
  url: string;
  permission: string | undefined;
  public: boolean;
}

/** The console's routes as fastify registers them, collected from its onRoute hook. */
async function consoleRoutes(server: TestServer): Promise<Route[]> {
  const routes: Route[] = [];
  const app = Fastify({ logger: false });
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) {
      if (method === "HEAD") continue;
      const config = (route.config ?? {}) as { consolePermission?: string; consolePublic?: boolean };
      routes.push({
        method,
        url: route.url,
        permission: config.consolePermission,
        public: config.consolePublic === true,
      });
    }
  });
  await app.register(consolePlugin, {
    prefix: "/console",
    core: server.core,
    counters: new MemoryCounterStore(),
  });
  await app.ready();
  await app.close();
  return routes;
}

/** A path for the route: ids that name nothing, so an allowed request changes nothing. */
function pathOf(url: string): string {
  return url.replace(/:([A-Za-z]+)/g, (_, name: string) => (name === "name" ? "nothing" : "999999"));
}

describe("console roles, route by route", () => {
  let server: TestServer;
  let routes: Route[];
  const clients = new Map<Role, ConsoleClient>();

  before(async () => {
    server = await startTestServer();
    const account = await server.account("default");
    await Promise.all(
      ROLE_NAMES.map((role) =>
        server.core.admins.create(account, { email: `${role}@example.com`, password: PASSWORD, role }),
      ),
    );
    for (const role of ROLE_NAMES) {
      const client = new ConsoleClient(server.url);
      assert.equal((await client.login(`${role}@example.com`, PASSWORD)).status, 303);
      clients.set(role, client);
    }
    routes = await consoleRoutes(server);
  });
  after(() => server?.stop());

  test("a help desk POST to the networks form is refused and writes nothing; the menu hides it", async () => {
    const desk = new ConsoleClient(server.url);
    await desk.login("help_desk@example.com", PASSWORD);
    const home = await desk.get("/console");
    assert.equal(home.status, 200);
    assert.match(home.text, /href="\/console\/users"/);
    assert.match(home.text, /href="\/console\/networks"/, "networks:read: in the menu");
    assert.doesNotMatch(home.text, /href="\/console\/keys"/, "no API keys entry in the menu");
    assert.doesNotMatch(home.text, /href="\/console\/webhooks"/, "no Webhooks entry in the menu");
    const refused = await desk.post("/console/networks", { name: "Lobby", nas_ip: "10.1.2.3" });
    assert.equal(refused.status, 403);
    assert.match(
      refused.text,
      /Your role \(Help desk\) does not allow this: it needs the networks:write permission/,
    );
    const account = await server.account("default");
    assert.equal((await server.core.networks.list(account.id, {}, { page: 1, limit: 10 })).total, 0);
    // The owner's same form makes the network.
    const owner = clients.get("owner") as ConsoleClient;
    await owner.get("/console/networks/new");
    const made = await owner.post("/console/networks", { name: "Lobby", nas_ip: "10.1.2.3" });
    assert.equal(made.status, 303, made.text.slice(0, 300));
    assert.equal((await server.core.networks.list(account.id, {}, { page: 1, limit: 10 })).total, 1);
  });

  test("the voucher desk sees vouchers (and the plans they may name) only", async () => {
    const desk = new ConsoleClient(server.url);
    await desk.login("voucher_desk@example.com", PASSWORD);
    const home = await desk.get("/console");
    assert.equal(home.status, 200);
    const menu = [...home.text.matchAll(/<nav[\s\S]*?<\/nav>/g)].map((m) => m[0]).join("");
    const links = [...menu.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
    // plans:read is the voucher desk's too (to choose a batch's plan): the plan list is readable.
    assert.deepEqual(links, ["/console", "/console/vouchers", "/console/plans"]);
    assert.doesNotMatch(home.text, /class="tile" href="\/console\/users"/, "no users tile");
    assert.match(home.text, /class="tile" href="\/console\/vouchers"/);
    assert.equal((await desk.get("/console/vouchers")).status, 200);
    assert.equal((await desk.get("/console/users")).status, 403);
  });

  test("every route the console registers is in the table and declares the permission it lists", () => {
    assert.ok(routes.length > 100, `found ${routes.length} routes`);
    const listed = new Set(Object.keys(ROUTES));
    for (const route of routes) {
      const key = `${route.method} ${route.url}`;
      assert.ok(listed.has(key), `${key} is a console route missing from this test's table`);
      const expected = ROUTES[key];
      if (expected === "public") assert.ok(route.public, `${key} should be public`);
      else assert.equal(route.permission, expected, `${key} declares ${route.permission}`);
      listed.delete(key);
    }
    assert.deepEqual([...listed], [], "routes in the table that the console no longer has");
  });

  test("each role is refused exactly the routes its grants do not cover", async () => {
    const checked = routes.filter((r) => !r.public && ROUTES[`${r.method} ${r.url}`] !== undefined);
    // Logging out ends the session: last.
    checked.sort((a, b) => Number(a.url.endsWith("/logout")) - Number(b.url.endsWith("/logout")));
    let refusals = 0;
    for (const role of ROLE_NAMES) {
      const client = clients.get(role) as ConsoleClient;
      for (const route of checked) {
        const key = `${route.method} ${route.url}`;
        const needed = ROUTES[key] as Permission | "self";
        const allowed = needed === "self" || roleAllows(role, needed);
        const path = pathOf(route.url);
        const answer =
          route.method === "GET" ? await client.get(path) : await client.post(path, FIELDS[key] ?? {});
        const refusal = REFUSED.exec(answer.text);
        if (allowed) {
          assert.ok(!refusal && answer.status !== 403, `${role} ${key} was refused (${answer.status})`);
          if (!route.url.endsWith("/logout")) {
            assert.notEqual(
              answer.location?.startsWith("/console/login"),
              true,
              `${role} ${key} lost its session`,
            );
          }
        } else {
          assert.equal(answer.status, 403, `${role} ${key} answered ${answer.status}`);
          assert.equal(refusal?.[1], needed, `${role} ${key}: the page names the permission`);
          refusals++;
        }
      }
    }
    // The table is not trivially permissive: the five roles below owner are refused a good part.
    assert.ok(refusals > 150, `${refusals} refusals`);
  });
});
