// Console roles route by route (issue 29 point 1): every route the console registers (fastify's own
// list, collected as the console plugin is registered) is in the table of test/support/console-routes.ts
// with the permission it must need, declares exactly that permission, and for each of the six roles
// answers as the role table (core/admins/roles.ts) says: refused with the 403 page, or let through.
// A route added without an entry there fails the first test. Then a refused form is shown to write nothing, the
// menu to show only what a role can use, and a role change to count from the very next request.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ROLE_NAMES, type Role, roleAllows } from "../../src/core/admins/roles.ts";
import type { Permission } from "../../src/core/keys/permissions.ts";
import { ConsoleClient } from "../support/browser.ts";
import { consoleRoutes, FIELDS, pathOf, ROUTES, type Route } from "../support/console-routes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const PASSWORD = "roles test password";
const REFUSED = /does not allow this: it needs the ([a-z]+:(?:read|write)) permission/;

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
