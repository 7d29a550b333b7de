// SCIM 2.0 at /scim/v2 over real HTTP, on SQLite and PostgreSQL: the request sequences Entra ID and
// Okta send (bodies copied from their documentation: fixtures.ts), what they do to Wisp's users,
// groups and RADIUS logins (real UDP Access-Requests), and the bad input of issue 30.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sendRadius } from "../../src/radius/client.ts";
import { dialects } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { entra, okta } from "./fixtures.ts";

const SECRET = "scim-Secret-30";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";

interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the server answered
  body: any;
}

for (const { dialect, skip } of await dialects()) {
  describe(`SCIM 2.0 on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let authPort: number;
    let token: string;
    let accountId: number;

    before(async () => {
      authPort = await freeUdpPort();
      server = await startTestServer({
        dialect,
        env: { RADIUS_HOST: "127.0.0.1", RADIUS_AUTH_PORT: String(authPort), RADIUS_ACCT_PORT: "0" },
      });
      const account = await server.account("default");
      accountId = account.id;
      token = await server.key(account, { permissions: "scim:write", rateLimit: 100_000 });
      await server.core.networks.create(accountId, { name: "SCIM lab", nas_ip: "127.0.0.1", secret: SECRET });
    });
    after(() => server?.stop());

    async function scim(
      method: string,
      path: string,
      body?: unknown,
      key = token,
      type = "application/scim+json",
    ): Promise<Answer> {
      const headers: Record<string, string> = {
        authorization: `Bearer ${key}`,
        accept: "application/scim+json",
      };
      if (body !== undefined) headers["content-type"] = type;
      const init: RequestInit = { method, headers };
      if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
      const response = await fetch(`${server.url}/scim/v2${path}`, init);
      const text = await response.text();
      if (text) assert.match(response.headers.get("content-type") ?? "", /^application\/scim\+json/, text);
      return {
        status: response.status,
        headers: response.headers,
        body: text ? JSON.parse(text) : undefined,
      };
    }

    /** RFC 7644 section 3.12: the error's schema, its status as a string, the scimType when one applies. */
    function assertError(answer: Answer, status: number, scimType?: string): void {
      assert.equal(answer.status, status, JSON.stringify(answer.body));
      assert.deepEqual(answer.body.schemas, [ERROR]);
      assert.equal(answer.body.status, String(status));
      assert.equal(answer.body.scimType, scimType);
      assert.equal(typeof answer.body.detail, "string");
    }

    const pap = (username: string, password: string) =>
      sendRadius({
        code: "Access-Request",
        attributes: [
          ["User-Name", username],
          ["User-Password", password],
          ["NAS-IP-Address", "127.0.0.1"],
        ],
        host: "127.0.0.1",
        port: authPort,
        secret: SECRET,
        timeoutMs: 2000,
        retries: 0,
      }).then((answer) => answer.type);

    const wispUser = (id: string) => server.core.users.get(accountId, Number(id));
    const disconnectsQueued = async (username: string) =>
      (
        await server.core.database.db
          .selectFrom("jobs")
          .select("payload")
          .where("kind", "=", "sessions.disconnect")
          .execute()
      ).filter((job) => (JSON.parse(job.payload).usernames as string[] | undefined)?.includes(username))
        .length;

    test("Entra ID's user sequence: query, create, patch, disable (RADIUS refuses), enable, delete", async () => {
      const none = await scim("GET", entra.noUserQuery);
      assert.equal(none.status, 200);
      assert.deepEqual(none.body, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
        totalResults: 0,
        startIndex: 1,
        itemsPerPage: 0,
        Resources: [],
      });

      const created = await scim("POST", "/Users", entra.createUser);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id = created.body.id as string;
      assert.equal(created.headers.get("location"), `${created.body.meta.location}`);
      assert.match(created.body.meta.location, new RegExp(`/scim/v2/Users/${id}$`));
      assert.equal(created.body.userName, entra.createUser.userName);
      assert.equal(created.body.externalId, entra.createUser.externalId);
      assert.equal(created.body.active, true);
      assert.deepEqual(created.body.name, entra.createUser.name);
      assert.deepEqual(created.body.emails, entra.createUser.emails);
      assert.equal(created.body.roles, undefined, "attributes Wisp does not keep are not stored");
      const stored = await wispUser(id);
      assert.equal(stored.email, entra.createUser.emails[0]?.value);
      assert.equal(stored.fullname, "givenName familyName");

      const found = await scim("GET", entra.userQuery(entra.createUser.userName));
      assert.equal(found.body.totalResults, 1);
      assert.equal(found.body.Resources[0].id, id);

      const patched = await scim("PATCH", `/Users/${id}`, entra.patchMultiValued);
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.deepEqual(patched.body.emails, [
        { primary: true, type: "work", value: "updatedEmail@microsoft.com" },
      ]);
      assert.equal(patched.body.name.familyName, "updatedFamilyName");
      assert.equal((await wispUser(id)).email, "updatedEmail@microsoft.com");

      assert.equal((await scim("PATCH", `/Users/${id}`, entra.patchExtension)).status, 200);
      const renamed = await scim("PATCH", `/Users/${id}`, entra.patchSingleValued);
      assert.equal(renamed.body.userName, "5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com");
      const username = renamed.body.userName as string;
      assert.equal((await wispUser(id)).username, username);

      const password = {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", path: "password", value: "entra-Pw-1" }],
      };
      const withPassword = await scim("PATCH", `/Users/${id}`, password);
      assert.equal(withPassword.status, 200);
      assert.equal(withPassword.body.password, undefined, "the password is never returned");
      assert.equal(await pap(username, "entra-Pw-1"), "Access-Accept");

      const disabled = await scim("PATCH", `/Users/${id}`, entra.disableUser);
      assert.equal(disabled.body.active, false);
      assert.equal((await wispUser(id)).status, "disabled");
      assert.equal(await disconnectsQueued(username), 1, "the user's sessions are disconnected");
      assert.equal(await pap(username, "entra-Pw-1"), "Access-Reject");

      assert.equal((await scim("PATCH", `/Users/${id}`, entra.enableUserAsString)).body.active, true);
      assert.equal(await pap(username, "entra-Pw-1"), "Access-Accept");
      assert.equal((await scim("PATCH", `/Users/${id}`, entra.disableUserAsString)).body.active, false);
      assert.equal(await pap(username, "entra-Pw-1"), "Access-Reject");

      const deleted = await fetch(`${server.url}/scim/v2/Users/${id}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(deleted.status, 204);
      assertError(await scim("GET", `/Users/${id}`), 404);
      assertError(await scim("DELETE", `/Users/${id}`), 404);
    });

    test("Okta's user sequence: query, create with a password, PUT, deactivate by PATCH and by PUT", async () => {
      assert.equal((await scim("GET", okta.userQuery(okta.createUser.userName))).body.totalResults, 0);
      const created = await scim("POST", "/Users", okta.createUser);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id = created.body.id as string;
      assert.equal(created.body.displayName, "Test User");
      assert.equal(created.body.password, undefined);
      assert.equal(await pap("test.user@okta.local", "1mz050nq"), "Access-Accept");
      const found = await scim("GET", okta.userQuery(okta.createUser.userName));
      assert.equal(found.body.totalResults, 1);
      assert.equal(found.body.itemsPerPage, 1);

      const replaced = await scim("PUT", `/Users/${id}`, okta.replaceUser(id, true));
      assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
      assert.equal(replaced.body.displayName, "Another User");
      assert.equal(replaced.body.externalId, "00u1dhhb1fkIGP7RL1d8");
      assert.equal((await wispUser(id)).fullname, "Another User");
      assert.equal(
        await pap("test.user@okta.local", "1mz050nq"),
        "Access-Accept",
        "a PUT without password keeps it",
      );

      assert.equal((await scim("PATCH", `/Users/${id}`, okta.deactivateUser)).body.active, false);
      assert.equal(await pap("test.user@okta.local", "1mz050nq"), "Access-Reject");
      assert.equal((await scim("PUT", `/Users/${id}`, okta.replaceUser(id, true))).body.active, true);
      assert.equal(await pap("test.user@okta.local", "1mz050nq"), "Access-Accept");
      assert.equal((await scim("PUT", `/Users/${id}`, okta.replaceUser(id, false))).body.active, false);
      assert.equal(await pap("test.user@okta.local", "1mz050nq"), "Access-Reject");
      const listing = await server.core.users.list(
        accountId,
        { search: "okta.local" },
        { page: 1, limit: 10 },
      );
      assert.equal(listing.data[0]?.source, "scim");
    });

    test("groups: Entra ID's and Okta's creates, renames and membership patches", async () => {
      const member = async (userName: string) =>
        (await scim("POST", "/Users", { schemas: [USER], userName })).body.id as string;
      const alice = await member("alice.groups");
      const bob = await member("bob.groups");
      const radiusMembers = async (groupname: string) =>
        (
          await server.core.database.db
            .selectFrom("radusergroup")
            .select("username")
            .where("groupname", "=", groupname)
            .orderBy("username")
            .execute()
        ).map((r) => r.username);

      const created = await scim("POST", "/Groups", entra.createGroup);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id = created.body.id as string;
      assert.deepEqual(created.body.members, []);
      const found = await scim("GET", entra.groupQuery("displayName"));
      assert.equal(found.body.totalResults, 1);
      assert.equal(found.body.Resources[0].members, undefined, "excludedAttributes=members");

      const added = await scim("PATCH", `/Groups/${id}`, entra.addMember(alice));
      assert.deepEqual(
        added.body.members.map((m: { value: string }) => m.value),
        [alice],
      );
      assert.deepEqual(await radiusMembers("displayName"), ["alice.groups"]);
      const user = await scim("GET", `/Users/${alice}`);
      assert.deepEqual(
        user.body.groups.map((g: { value: string }) => g.value),
        [id],
      );
      assert.deepEqual((await scim("PATCH", `/Groups/${id}`, entra.removeMember(alice))).body.members, []);
      await scim("PATCH", `/Groups/${id}`, entra.addMember(bob));
      assert.deepEqual(
        (await scim("PATCH", `/Groups/${id}`, entra.removeMemberByFilter(bob))).body.members,
        [],
      );
      const renamed = await scim("PATCH", `/Groups/${id}`, entra.renameGroup);
      assert.equal(renamed.body.displayName, entra.renameGroup.Operations[0]?.value);
      assert.equal(
        (await server.core.groups.get(accountId, Number(id))).name,
        entra.renameGroup.Operations[0]?.value,
      );

      const pushed = await scim("POST", "/Groups", okta.createGroup);
      assert.equal(pushed.status, 201);
      const oktaId = pushed.body.id as string;
      assert.equal(pushed.body.displayName, "Test SCIMv2");
      assert.equal((await server.core.groups.get(accountId, Number(oktaId))).name, "Test_SCIMv2");
      const byName = await scim(
        "GET",
        `/Groups?filter=${encodeURIComponent('displayName eq "test scimv2"')}&startIndex=1&count=100`,
      );
      assert.equal(byName.body.Resources[0].id, oktaId);
      await scim("PATCH", `/Groups/${oktaId}`, entra.addMember(alice));
      const swapped = await scim("PATCH", `/Groups/${oktaId}`, okta.membership(alice, bob));
      assert.deepEqual(
        swapped.body.members.map((m: { value: string }) => m.value),
        [bob],
      );
      assert.deepEqual(await radiusMembers("Test_SCIMv2"), ["bob.groups"]);
      const okRename = await scim("PATCH", `/Groups/${oktaId}`, okta.renameGroup(oktaId));
      assert.equal(okRename.body.displayName, "Test SCIMv2 renamed");
      assert.deepEqual(
        await radiusMembers("Test_SCIMv2_renamed"),
        ["bob.groups"],
        "memberships follow the rename",
      );
      assertError(await scim("PATCH", `/Groups/${oktaId}`, okta.renameGroup(id)), 400, "mutability");

      const unknownMember = await scim("PATCH", `/Groups/${oktaId}`, {
        schemas: [PATCH_OP],
        Operations: [
          { op: "add", path: "members", value: [{ value: alice }] },
          { op: "add", path: "members", value: [{ value: "999999" }] },
        ],
      });
      assertError(unknownMember, 400, "invalidValue");
      assert.deepEqual(
        await radiusMembers("Test_SCIMv2_renamed"),
        ["bob.groups"],
        "nothing of the request was applied",
      );

      const gone = await fetch(`${server.url}/scim/v2/Groups/${oktaId}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(gone.status, 204);
      assertError(await scim("GET", `/Groups/${oktaId}`), 404);
      assert.equal((await wispUser(bob)).username, "bob.groups", "the group's users stay");
    });

    test("discovery: ServiceProviderConfig, ResourceTypes and Schemas", async () => {
      const config = await scim("GET", "/ServiceProviderConfig");
      assert.equal(config.body.patch.supported, true);
      assert.equal(config.body.filter.maxResults, 200);
      assert.equal(config.body.authenticationSchemes[0].type, "oauthbearertoken");
      const types = await scim("GET", "/ResourceTypes");
      assert.deepEqual(
        types.body.Resources.map((t: { endpoint: string }) => t.endpoint),
        ["/Users", "/Groups"],
      );
      assert.equal((await scim("GET", "/ResourceTypes/User")).body.schema, USER);
      const schemas = await scim("GET", "/Schemas");
      assert.deepEqual(
        schemas.body.Resources.map((s: { id: string }) => s.id),
        [USER, GROUP],
      );
      const user = await scim("GET", `/Schemas/${USER}`);
      const password = user.body.attributes.find((a: { name: string }) => a.name === "password");
      assert.deepEqual([password.mutability, password.returned], ["writeOnly", "never"]);
      assertError(await scim("GET", "/Schemas/urn:nothing"), 404);
    });

    test("paging: 1-based, counts clamped, itemsPerPage tells", async () => {
      for (const n of [1, 2, 3]) await scim("POST", "/Users", { schemas: [USER], userName: `page.${n}` });
      const all = await scim("GET", "/Users?count=1000000");
      assert.equal(all.status, 200);
      const total = all.body.totalResults as number;
      assert.ok(total >= 3);
      assert.equal(all.body.itemsPerPage, Math.min(200, total));
      assert.equal(all.body.Resources.length, all.body.itemsPerPage);
      const second = await scim("GET", "/Users?startIndex=2&count=2");
      assert.deepEqual([second.body.startIndex, second.body.itemsPerPage], [2, 2]);
      assert.equal(second.body.Resources[0].id, all.body.Resources[1].id);
      assert.equal((await scim("GET", "/Users?startIndex=0&count=1")).body.startIndex, 1);
      const none = await scim("GET", "/Users?count=-5");
      assert.deepEqual([none.body.itemsPerPage, none.body.totalResults], [0, total]);
      assert.equal((await scim("GET", "/Users?startIndex=99999999999999999999")).body.itemsPerPage, 0);
      assertError(await scim("GET", "/Users?count=many"), 400, "invalidValue");
    });

    test("bad filters: 400 invalidFilter", async () => {
      for (const filter of [
        'userName co "page"',
        'title eq "x"',
        'userName eq "a" and externalId eq "b"',
        "userName eq",
        '(userName eq "a")',
        'emails[type eq "work"]',
        "userName eq unquoted",
      ]) {
        assertError(await scim("GET", `/Users?filter=${encodeURIComponent(filter)}`), 400, "invalidFilter");
      }
      assertError(
        await scim("GET", `/Groups?filter=${encodeURIComponent('userName eq "x"')}`),
        400,
        "invalidFilter",
      );
      const byExternal = await scim(
        "GET",
        `/Users?filter=${encodeURIComponent('externalId eq "00u1dhhb1fkIGP7RL1d8"')}`,
      );
      assert.equal(byExternal.body.totalResults, 1);
    });

    test("bodies: unknown attributes ignored; bad JSON, types and schemas refused", async () => {
      const extra = await scim("POST", "/Users", {
        schemas: [USER, "urn:example:custom"],
        userName: "extra.attrs",
        nickName: "Ex",
        phoneNumbers: [{ value: "+1 555", type: "work" }],
        "urn:example:custom": { costCenter: "42" },
        id: "12345",
      });
      assert.equal(extra.status, 201);
      assert.notEqual(extra.body.id, "12345", "id is Wisp's (read-only)");
      assert.equal(extra.body.nickName, undefined);
      assert.equal(extra.body.phoneNumbers, undefined);
      assertError(await scim("POST", "/Users", "{not json"), 400, "invalidSyntax");
      assertError(await scim("POST", "/Users", { userName: "no.schemas" }), 400, "invalidValue");
      assertError(
        await scim("POST", "/Users", { schemas: [USER], userName: "bad name!" }),
        400,
        "invalidValue",
      );
      assertError(
        await scim("POST", "/Users", { schemas: [USER], userName: "x.y", active: "maybe" }),
        400,
        "invalidValue",
      );
      assertError(
        await scim("POST", "/Users", {
          schemas: [USER],
          userName: "x.y",
          emails: [{ value: "not-an-email" }],
        }),
        400,
        "invalidValue",
      );
      assertError(
        await scim("POST", "/Users", { schemas: [USER], userName: "x.y" }, token, "text/plain"),
        415,
      );
      assert.equal(
        (await scim("GET", `/Users?filter=${encodeURIComponent('userName eq "x.y"')}`)).body.totalResults,
        0,
      );
    });

    test("PATCH: read-only attributes (mutability), bad operations, never half-applied", async () => {
      const user = await scim("POST", "/Users", {
        schemas: [USER],
        userName: "patch.target",
        displayName: "Before",
      });
      const id = user.body.id as string;
      const patch = (...Operations: unknown[]) =>
        scim("PATCH", `/Users/${id}`, { schemas: [PATCH_OP], Operations });
      const rename = { op: "replace", path: "displayName", value: "After" };
      assertError(await patch(rename, { op: "replace", path: "id", value: "7" }), 400, "mutability");
      assertError(
        await patch(rename, { op: "replace", path: "meta.lastModified", value: "2020-01-01T00:00:00Z" }),
        400,
        "mutability",
      );
      assertError(await patch(rename, { op: "remove", path: "meta" }), 400, "mutability");
      assertError(
        await patch(rename, { op: "add", path: "groups", value: [{ value: "1" }] }),
        400,
        "mutability",
      );
      assertError(await patch(rename, { op: "replace", value: { id: "7" } }), 400, "mutability");
      assertError(
        await patch(rename, { op: "replace", path: 'emails[type eq "home"].value', value: "a@b.example" }),
        400,
        "noTarget",
      );
      assertError(await patch(rename, { op: "remove" }), 400, "noTarget");
      assertError(await patch(rename, { op: "move", path: "displayName" }), 400, "invalidSyntax");
      assertError(await patch(rename, { op: "replace", path: "name..x", value: "y" }), 400, "invalidPath");
      assertError(await scim("PATCH", `/Users/${id}`, { Operations: [rename] }), 400, "invalidValue");
      assertError(
        await scim("PATCH", `/Users/${id}`, { schemas: [PATCH_OP], Operations: [] }),
        400,
        "invalidSyntax",
      );
      assert.equal(
        (await scim("GET", `/Users/${id}`)).body.displayName,
        "Before",
        "no refused request changed anything",
      );
      const fine = await patch({
        op: "replace",
        value: { id, displayName: "After", "name.givenName": "Pat" },
      });
      assert.equal(fine.status, 200, JSON.stringify(fine.body));
      assert.deepEqual([fine.body.displayName, fine.body.name.givenName], ["After", "Pat"]);
    });

    test("userName taken: 409 uniqueness, on create and on rename", async () => {
      const first = await scim("POST", "/Users", { schemas: [USER], userName: "Taken.Name" });
      assert.equal(first.status, 201);
      assertError(
        await scim("POST", "/Users", { schemas: [USER], userName: "taken.name" }),
        409,
        "uniqueness",
      );
      const other = await scim("POST", "/Users", { schemas: [USER], userName: "free.name" });
      const rename = {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", path: "userName", value: "TAKEN.NAME" }],
      };
      assertError(await scim("PATCH", `/Users/${other.body.id}`, rename), 409, "uniqueness");
      assert.equal((await wispUser(other.body.id)).username, "free.name");
    });

    test("tokens: none 401, without the scim permission 403, read-only 403 on writes, all in SCIM's shape", async () => {
      const response = await fetch(`${server.url}/scim/v2/Users`);
      assert.equal(response.status, 401);
      assert.deepEqual((await response.json()).schemas, [ERROR]);
      const full = await server.key(accountId ? await server.account("default") : "default", {
        permissions: "users:write",
      });
      assertError(await scim("GET", "/Users", undefined, full), 403);
      const reader = await server.key("default", { permissions: "scim:read" });
      assert.equal((await scim("GET", "/Users", undefined, reader)).status, 200);
      assertError(await scim("POST", "/Users", { schemas: [USER], userName: "reader.made" }, reader), 403);
      assertError(await scim("GET", "/Nothing"), 404);
    });

    test("another account's users and groups are not found", async () => {
      const other = await server.account(`other-${dialect}`);
      const otherToken = await server.key(other, { permissions: "scim:write" });
      const mine = await scim("POST", "/Users", { schemas: [USER], userName: "mine.only" });
      const group = await scim("POST", "/Groups", { schemas: [GROUP], displayName: "mine-only" });
      for (const path of [`/Users/${mine.body.id}`, `/Groups/${group.body.id}`]) {
        assertError(await scim("GET", path, undefined, otherToken), 404);
        assertError(
          await scim(
            "PATCH",
            path,
            { schemas: [PATCH_OP], Operations: [{ op: "replace", path: "externalId", value: "x" }] },
            otherToken,
          ),
          404,
        );
        assertError(await scim("DELETE", path, undefined, otherToken), 404);
      }
      assert.equal((await scim("GET", "/Users", undefined, otherToken)).body.totalResults, 0);
      const theirs = await scim(
        "POST",
        "/Groups",
        { schemas: [GROUP], displayName: "theirs", members: [{ value: mine.body.id }] },
        otherToken,
      );
      assertError(theirs, 400, "invalidValue");
      assert.equal((await scim("GET", `/Users/${mine.body.id}`)).status, 200);
    });
  });
}
