// The audit log through the console, route by route (issue 29 point 3): every console route with a
// writing method, as fastify registers them (test/support/console-routes.ts), is either walked here
// or listed with the reason it is not. A walked route's form is read from the page that shows it
// (the fields and values a browser would send), changed as its fixture says and submitted by an
// admin whose role is the least one holding the route's permission; it must leave exactly the rows
// its fixture lists, each naming that admin, their role and address, with no secret in clear. A
// write route added later, or a listed route the console no longer has, fails the first test.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import { ROLE_NAMES, type Role, roleAllows } from "../../src/core/admins/roles.ts";
import { MASK } from "../../src/core/audit/mask.ts";
import { createAuthority } from "../../src/core/certs/x509.ts";
import type { Permission } from "../../src/core/keys/permissions.ts";
import { png } from "../console/logo-fixtures.ts";
import { ConsoleClient } from "../support/browser.ts";
import { consoleRoutes, ROUTES, type Route } from "../support/console-routes.ts";
import { startTestDas, type TestDas } from "../support/das.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { TestSmtp } from "../support/smtp.ts";

/** Write routes that change nothing an audit row records, each with the reason. */
const WRITES_NOTHING: Record<string, string> = {
  "POST /console/login": "signs in: a session, not a change to the account's data",
  "POST /console/logout": "signs out: ends the caller's own session",
  "POST /console/login/second-factor/:method": "the second step of signing in (a code checked)",
  "POST /console/login/passkey": "starts a passkey sign-in: a challenge in the pending session",
  "POST /console/login/passkey/finish": "finishes a passkey sign-in: a session",
  "POST /console/login/cancel": "abandons a pending sign-in",
  "POST /console/sso": "finds the email's single sign-on providers and starts a sign-in: a redirect",
  "POST /console/sso/:provider": "starts a sign-in at an identity provider: a redirect",
  "POST /console/portals/preview": "renders a portal page from the form: nothing stored",
  "POST /console/portals/:id/preview": "renders a portal page from the form: nothing stored",
  "POST /console/policies/explain": "what a login would get, and why: nothing sent, nothing recorded",
  "POST /console/reports/tasks": "queues a report file for the admin to download: a read of the reports",
};

/**
 * Write routes whose row is checked by the suite that can drive them (a first run, a sign-in an
 * owner's requirement forces, a portal's sponsor request, Chromium's virtual authenticator), each
 * naming it: there the row, its admin, role and address are asserted like the walk's.
 */
const CHECKED_ELSEWHERE: Record<string, string> = {
  "POST /console/setup": "first run only (no admin yet): test/console/http.test.ts 'first run'",
  "POST /console/login/enrol/:method":
    "a sign-in an owner's requirement forces: test/console/two-factor.test.ts 'the account's requirement'",
  "POST /console/guests/:id/decide":
    "a sponsor request from a portal's guest page: test/portal/guests-sponsor.test.ts",
  "POST /console/security/passkeys": "a WebAuthn attestation: test/console/passkeys.test.ts (Chromium)",
  "POST /console/security/passkeys/:id": "a registered passkey: test/console/passkeys.test.ts (Chromium)",
  "POST /console/security/passkeys/:id/remove":
    "a registered passkey: test/console/passkeys.test.ts (Chromium)",
};

interface Row {
  resource: string;
  action: string;
  id?: string;
}

interface Submit {
  /** The page whose form is submitted (its fields are read from there). */
  page?: string;
  /** A page to open first for its token only (the form is not on it for this role, or built by script). */
  visit?: string;
  /** Where the form is posted. */
  path: string;
  /** Files: the form is then sent as multipart/form-data. */
  files?: Record<string, { name: string; type: string; data: Buffer }>;
  /** Fields set over the page's (or the only fields, without a page). */
  fields?: Record<string, string | string[]>;
  rows: Row[];
  /** Values that must not appear in any row (secrets typed into the form). */
  secrets?: string[];
  /** Who submits, when the route's least role cannot (an admin of its own, for routes ending sessions). */
  as?: ConsoleClient;
  asEmail?: string;
  asRole?: Role;
}

interface Context {
  server: TestServer;
  das: TestDas;
  smtp: TestSmtp;
  account: AccountRow;
  dialect: string;
  admin(role: Role): Promise<{ id: number; email: string; client: ConsoleClient }>;
}

type Fixture = (c: Context) => Promise<Submit>;

let serial = 0;
const unique = (prefix: string) => `${prefix}${++serial}`;
const PASSWORD = "console walk password";

const html = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#x27;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

const attr = (tag: string, name: string) =>
  new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1] ??
  (new RegExp(`\\s${name}(\\s|>|/)`).test(tag) ? "" : undefined);

/** The fields a browser sends from the form posting to `action` on the page (no JavaScript). */
function formFields(page: string, action: string): Record<string, string | string[]> {
  const forms = [...page.matchAll(/<form\b[^>]*>[\s\S]*?<\/form>/g)].map((m) => m[0]);
  const form = forms.find((f) => html(attr(f.slice(0, f.indexOf(">") + 1), "action") ?? "") === action);
  assert.ok(form, `no form posting to ${action} on the page`);
  const fields: Record<string, string | string[]> = {};
  const add = (name: string, value: string) => {
    const had = fields[name];
    fields[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  };
  for (const [tag] of form.matchAll(/<input\b[^>]*>/g)) {
    const name = attr(tag, "name");
    const type = attr(tag, "type") ?? "text";
    if (!name || ["submit", "button", "file", "image", "reset"].includes(type)) continue;
    if ((type === "checkbox" || type === "radio") && attr(tag, "checked") === undefined) continue;
    add(name, html(attr(tag, "value") ?? (type === "checkbox" ? "on" : "")));
  }
  for (const [, open, body] of form.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
    const name = attr(`<x${open}>`, "name");
    if (!name) continue;
    const options = [...body!.matchAll(/<option\b([^>]*)>([\s\S]*?)<\/option>/g)];
    const chosen = options.filter(([, o]) => attr(`<x${o}>`, "selected") !== undefined);
    const picked = chosen.length > 0 ? chosen : options.slice(0, 1);
    for (const [, o, label] of picked) add(name, html(attr(`<x${o}>`, "value") ?? label!.trim()));
  }
  for (const [, open, body] of form.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/g)) {
    const name = attr(`<x${open}>`, "name");
    if (name) add(name, html(body!.replace(/^\n/, "")));
  }
  delete fields._csrf;
  return fields;
}

/** What a refused form's page says, without its markup. */
function pageText(page: string): string {
  const main = /<main\b[\s\S]*?<\/main>/.exec(page)?.[0] ?? page;
  return html(main.replace(/<[^>]+>/g, " ").replace(/\s+/g, " "))
    .trim()
    .slice(0, 300);
}

/** RFC 4648 base32 to bytes. */
function base32(text: string): Buffer {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const c of text.replace(/[\s=]/g, "")) bits += alphabet.indexOf(c).toString(2).padStart(5, "0");
  return Buffer.from(bits.match(/.{8}/g)!.map((b) => Number.parseInt(b, 2)));
}

/** RFC 6238 TOTP (HMAC-SHA-1, 6 digits, 30 s): RFC 4226 section 5.3. */
function totp(secret: string): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30_000)));
  const mac = createHmac("sha1", base32(secret)).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, "0");
}

// ---- prerequisites, made through the core (their rows are not counted) ------------------------

const network = async (c: Context, extra: Record<string, unknown> = {}) =>
  (await c.server.core.networks.create(c.account.id, { name: unique("site"), nas_ip: "", ...extra })).network;
const user = (c: Context) =>
  c.server.core.users.create(c.account.id, { username: unique("walker"), password: "pw-walk" });
const group = (c: Context) => c.server.core.groups.create(c.account.id, { name: unique("walkers") });
const plan = (c: Context) => c.server.core.plans.create(c.account.id, { name: unique("plan") });
const policy = (c: Context) =>
  c.server.core.policies.create(c.account.id, { name: unique("policy"), outcome: { action: "accept" } });
const webhook = async (c: Context) =>
  (
    await c.server.core.webhooks.create(c.account.id, {
      url: "https://hooks.example.com/walk",
      events: "all",
    })
  ).webhook;
const provider = (c: Context) =>
  c.server.core.idp.create(c.account.id, {
    name: unique("idp"),
    kind: "oidc",
    display_name: "Campus ID",
    issuer: "https://login.example.edu/",
    client_id: "wisp",
    client_secret: "a client secret",
  });
const directory = (c: Context) =>
  c.server.core.directories.create(c.account.id, {
    name: unique("corp"),
    servers: ["ldap://127.0.0.1:9"],
    bind_password: "a bind password",
    user_base: "ou=people,dc=example,dc=org",
    connect_timeout_ms: 200,
    timeout_ms: 200,
  });
const device = (c: Context) =>
  c.server.core.devices.create(c.account.id, {
    mac: `02:00:00:00:02:${(++serial % 256).toString(16).padStart(2, "0")}`,
  });
const portal = async (c: Context) =>
  c.server.core.portals.create(c.account.id, { name: unique("portal"), network_id: (await network(c)).id });

/** A read-only admin with an authenticator app confirmed on the security page. */
async function withTotp(c: Context) {
  const me = await c.admin("read_only");
  const page = await me.client.get("/console/security/totp");
  const secret = /<code id="totp-secret">([A-Z2-7 ]+)<\/code>/.exec(page.text)?.[1]?.replace(/ /g, "") ?? "";
  const confirmed = await me.client.post("/console/security/totp", { code: totp(secret) });
  assert.equal(confirmed.status, 303, pageText(confirmed.text));
  return me;
}

/** An open RADIUS session on a CoA network whose DAS (c.das) answers ACK; its id. */
async function radiusSession(c: Context): Promise<string> {
  const address = "127.0.0.1";
  if (!(await c.server.core.networks.findClientByAddress(address))) {
    await c.server.core.networks.create(c.account.id, {
      name: unique("coa"),
      nas_ip: address,
      secret: DAS_SECRET,
      coa_enabled: true,
      coa_port: c.das.port,
    });
  }
  const client = await c.server.core.networks.findClientByAddress(address);
  const sessionId = unique("walk-session");
  await c.server.core.aaa.account(
    client!,
    [
      { attribute: "User-Name", op: "=", value: "walk-alice" },
      { attribute: "Acct-Session-Id", op: "=", value: sessionId },
      { attribute: "Acct-Status-Type", op: "=", value: "Start" },
      { attribute: "Calling-Station-Id", op: "=", value: "02-00-00-00-05-01" },
    ],
    address,
  );
  await c.server.core.aaa.drain();
  const row = await c.server.core.database.db
    .selectFrom("radacct")
    .select("radacctid")
    .where("acctsessionid", "=", sessionId)
    .executeTakeFirstOrThrow();
  return String(row.radacctid);
}

const DAS_SECRET = "walk-das-secret";

const WALKS: Record<string, Fixture> = {
  "POST /console/keys": async () => ({
    page: "/console/keys",
    path: "/console/keys",
    fields: { name: unique("walk key"), access: "read" },
    rows: [{ resource: "api_key", action: "create" }],
  }),
  "POST /console/keys/:id/revoke": async (c) => {
    const { row } = await c.server.core.keys.create(c.account, { name: unique("to revoke") });
    return {
      page: `/console/keys/${row.id}/revoke`,
      path: `/console/keys/${row.id}/revoke`,
      rows: [{ resource: "api_key", action: "revoke", id: String(row.id) }],
    };
  },
  "POST /console/networks": async () => ({
    page: "/console/networks/new",
    path: "/console/networks",
    fields: { name: unique("net"), nas_ip: "", secret: "a-console-net-secret" },
    rows: [{ resource: "network", action: "create" }],
    secrets: ["a-console-net-secret"],
  }),
  "POST /console/networks/:id": async (c) => {
    const { id } = await network(c);
    return {
      page: `/console/networks/${id}/edit`,
      path: `/console/networks/${id}`,
      fields: { description: "walked" },
      rows: [{ resource: "network", action: "update", id: String(id) }],
    };
  },
  "POST /console/networks/:id/rotate": async (c) => {
    const { id } = await network(c);
    return {
      page: `/console/networks/${id}/rotate`,
      path: `/console/networks/${id}/rotate`,
      rows: [{ resource: "network", action: "rotate_secret", id: String(id) }],
    };
  },
  "POST /console/networks/:id/delete": async (c) => {
    const { id } = await network(c);
    return {
      page: `/console/networks/${id}/delete`,
      path: `/console/networks/${id}/delete`,
      rows: [{ resource: "network", action: "delete", id: String(id) }],
    };
  },
  "POST /console/networks/:id/radsec/certificates": async (c) => {
    const { id } = await network(c);
    return {
      page: `/console/networks/${id}`,
      path: `/console/networks/${id}/radsec/certificates`,
      fields: { password: "a console p12 password" },
      rows: [{ resource: "radsec_certificate", action: "create" }],
      secrets: ["a console p12 password"],
    };
  },
  "POST /console/networks/:id/radsec/certificates/:serial/revoke": async (c) => {
    const { id } = await network(c);
    const issued = await c.server.core.radsec.issue(c.account.id, id, { password: "a p12 password" });
    const number = issued.certificate.serial;
    return {
      path: `/console/networks/${id}/radsec/certificates/${number}/revoke`,
      rows: [{ resource: "radsec_certificate", action: "revoke" }],
    };
  },
  "POST /console/networks/:id/radsec/ca": async (c) => {
    const { id } = await network(c);
    const ca = await createAuthority("Outside RadSec CA", 365);
    return {
      page: `/console/networks/${id}`,
      path: `/console/networks/${id}/radsec/ca`,
      fields: { ca: ca.cert, match_field: "cn", patterns: "ap*" },
      rows: [{ resource: "radsec_ca", action: "update", id: String(id) }],
    };
  },
  "POST /console/networks/:id/radsec/ca/delete": async (c) => {
    const { id } = await network(c);
    const ca = await createAuthority("Outside RadSec CA", 365);
    await c.server.core.radsec.trust(c.account.id, id, {
      ca: ca.cert,
      match: { field: "cn", patterns: ["ap*"] },
    });
    return {
      path: `/console/networks/${id}/radsec/ca/delete`,
      rows: [{ resource: "radsec_ca", action: "delete", id: String(id) }],
    };
  },
  "POST /console/portals": async (c) => {
    const { id } = await network(c);
    return {
      page: "/console/portals/new",
      path: "/console/portals",
      fields: { name: unique("portal"), network_id: String(id) },
      rows: [{ resource: "portal", action: "create" }],
    };
  },
  "POST /console/portals/:id": async (c) => {
    const { id } = await portal(c);
    return {
      page: `/console/portals/${id}/edit`,
      path: `/console/portals/${id}`,
      fields: { title: "Walked" },
      rows: [{ resource: "portal", action: "update", id: String(id) }],
    };
  },
  "POST /console/portals/:id/delete": async (c) => {
    const { id } = await portal(c);
    return {
      page: `/console/portals/${id}/delete`,
      path: `/console/portals/${id}/delete`,
      rows: [{ resource: "portal", action: "delete", id: String(id) }],
    };
  },
  "POST /console/users": async () => ({
    page: "/console/users/new",
    path: "/console/users",
    fields: { username: unique("walker"), password: "a console user password" },
    rows: [{ resource: "user", action: "create" }],
    secrets: ["a console user password"],
  }),
  "POST /console/users/:id": async (c) => {
    const { id } = await user(c);
    return {
      page: `/console/users/${id}`,
      path: `/console/users/${id}`,
      fields: { fullname: "Walked" },
      rows: [{ resource: "user", action: "update", id: String(id) }],
    };
  },
  "POST /console/users/:id/status": async (c) => {
    const { id } = await user(c);
    return {
      page: `/console/users/${id}`,
      path: `/console/users/${id}/status`,
      rows: [{ resource: "user", action: "update", id: String(id) }],
    };
  },
  "POST /console/users/:id/attributes": async (c) => {
    const { id } = await user(c);
    return {
      page: `/console/users/${id}`,
      path: `/console/users/${id}/attributes`,
      fields: { table: "radreply", attribute: "Session-Timeout", operator: "=", value: "60" },
      rows: [{ resource: "user_attribute", action: "create" }],
    };
  },
  "POST /console/users/:id/attributes/delete": async (c) => {
    const { id } = await user(c);
    const item = await c.server.core.attributes.addToUser(c.account.id, {
      userid: id,
      table: "radreply",
      attribute: "Session-Timeout",
      operator: "=",
      value: "60",
    });
    return {
      path: `/console/users/${id}/attributes/delete`,
      fields: { table: "radreply", attribute_id: String(item.id) },
      rows: [{ resource: "user_attribute", action: "delete" }],
    };
  },
  "POST /console/users/:id/groups": async (c) => {
    const { id } = await user(c);
    const g = await group(c);
    return {
      path: `/console/users/${id}/groups`,
      fields: { group_id: String(g.id) },
      rows: [{ resource: "group_member", action: "create" }],
    };
  },
  "POST /console/users/:id/groups/:groupId/delete": async (c) => {
    const u = await user(c);
    const g = await group(c);
    await c.server.core.groups.addMember(c.account.id, g.id, { userid: u.id });
    return {
      path: `/console/users/${u.id}/groups/${g.id}/delete`,
      rows: [{ resource: "group_member", action: "delete" }],
    };
  },
  "POST /console/users/:id/delete": async (c) => {
    const { id } = await user(c);
    return {
      page: `/console/users/${id}/delete`,
      path: `/console/users/${id}/delete`,
      rows: [{ resource: "user", action: "delete", id: String(id) }],
    };
  },
  "POST /console/groups": async () => ({
    page: "/console/groups",
    path: "/console/groups",
    fields: { name: unique("group") },
    rows: [{ resource: "group", action: "create" }],
  }),
  "POST /console/groups/:id/delete": async (c) => {
    const { id } = await group(c);
    return {
      page: `/console/groups/${id}/delete`,
      path: `/console/groups/${id}/delete`,
      rows: [{ resource: "group", action: "delete", id: String(id) }],
    };
  },
  "POST /console/groups/:id/plan": async (c) => {
    const g = await group(c);
    const p = await plan(c);
    return {
      path: `/console/groups/${g.id}/plan`,
      fields: { plan_id: String(p.id) },
      rows: [{ resource: "group", action: "update", id: String(g.id) }],
    };
  },
  "POST /console/vouchers/batches": async () => ({
    page: "/console/vouchers",
    path: "/console/vouchers/batches",
    fields: { quantity: "3" },
    rows: [{ resource: "voucher_batch", action: "create" }],
  }),
  "POST /console/vouchers/batches/:id/plan": async (c) => {
    const batch = await c.server.core.vouchers.createBatch(c.account.id, { quantity: 2, validity: 3600 });
    const p = await plan(c);
    return {
      path: `/console/vouchers/batches/${batch.batch_id}/plan`,
      fields: { plan_id: String(p.id) },
      rows: [{ resource: "voucher_batch", action: "update" }],
    };
  },
  "POST /console/devices": async () => ({
    page: "/console/devices/new",
    path: "/console/devices",
    fields: { mac: `02:00:00:00:03:${(++serial % 256).toString(16).padStart(2, "0")}` },
    rows: [{ resource: "device", action: "create" }],
  }),
  "POST /console/devices/:id": async (c) => {
    const { id } = await device(c);
    return {
      page: `/console/devices/${id}`,
      path: `/console/devices/${id}`,
      fields: { name: "walked" },
      rows: [{ resource: "device", action: "update", id: String(id) }],
    };
  },
  "POST /console/devices/:id/status": async (c) => {
    const { id } = await device(c);
    return {
      page: `/console/devices/${id}`,
      path: `/console/devices/${id}/status`,
      rows: [{ resource: "device", action: "update", id: String(id) }],
    };
  },
  "POST /console/devices/:id/delete": async (c) => {
    const { id } = await device(c);
    return {
      page: `/console/devices/${id}/delete`,
      path: `/console/devices/${id}/delete`,
      rows: [{ resource: "device", action: "delete", id: String(id) }],
    };
  },
  "POST /console/webhooks": async () => ({
    page: "/console/webhooks",
    path: "/console/webhooks",
    fields: { url: "https://hooks.example.com/console", events: "all" },
    rows: [{ resource: "webhook", action: "create" }],
  }),
  "POST /console/webhooks/:id/enabled": async (c) => {
    const { id } = await webhook(c);
    return {
      path: `/console/webhooks/${id}/enabled`,
      fields: { enabled: "0" },
      rows: [{ resource: "webhook", action: "update", id: String(id) }],
    };
  },
  "POST /console/webhooks/:id/test": async (c) => {
    const { id } = await webhook(c);
    return {
      path: `/console/webhooks/${id}/test`,
      rows: [{ resource: "webhook", action: "test", id: String(id) }],
    };
  },
  "POST /console/webhooks/:id/deliveries/:delivery/resend": async (c) => {
    const { id } = await webhook(c);
    const queued = await c.server.core.webhooks.sendTest(c.account.id, id);
    return {
      path: `/console/webhooks/${id}/deliveries/${queued.id}/resend`,
      rows: [{ resource: "webhook_delivery", action: "resend", id: String(queued.id) }],
    };
  },
  "POST /console/webhooks/:id/rotate": async (c) => {
    const { id } = await webhook(c);
    return {
      page: `/console/webhooks/${id}/rotate`,
      path: `/console/webhooks/${id}/rotate`,
      rows: [{ resource: "webhook", action: "rotate_secret", id: String(id) }],
    };
  },
  "POST /console/webhooks/:id/delete": async (c) => {
    const { id } = await webhook(c);
    return {
      page: `/console/webhooks/${id}/delete`,
      path: `/console/webhooks/${id}/delete`,
      rows: [{ resource: "webhook", action: "delete", id: String(id) }],
    };
  },
  "POST /console/identity-providers": async () => ({
    page: "/console/identity-providers/new",
    path: "/console/identity-providers",
    fields: {
      name: unique("idp"),
      kind: "oidc",
      display_name: "Campus",
      issuer: "https://login.example.edu/",
      client_id: "wisp",
      client_secret: "a console idp secret",
    },
    rows: [{ resource: "identity_provider", action: "create" }],
    secrets: ["a console idp secret"],
  }),
  "POST /console/identity-providers/:id": async (c) => {
    const { id } = await provider(c);
    return {
      page: `/console/identity-providers/${id}`,
      path: `/console/identity-providers/${id}`,
      fields: { display_name: "Walked", client_secret: "another console idp secret" },
      rows: [{ resource: "identity_provider", action: "update", id: String(id) }],
      secrets: ["another console idp secret"],
    };
  },
  "POST /console/identity-providers/:id/delete": async (c) => {
    const { id } = await provider(c);
    return {
      page: `/console/identity-providers/${id}/delete`,
      path: `/console/identity-providers/${id}/delete`,
      rows: [{ resource: "identity_provider", action: "delete", id: String(id) }],
    };
  },
  "POST /console/identity-providers/password-login": async () => ({
    // Turning it off needs an owner signed in through a provider (and ends every password session):
    // on, as it is, is the change this walk can make; it is recorded all the same.
    visit: "/console/identity-providers",
    path: "/console/identity-providers/password-login",
    fields: { password_login: "on" },
    rows: [{ resource: "account", action: "update" }],
  }),
  "POST /console/policies": async () => ({
    page: "/console/policies",
    path: "/console/policies",
    fields: { name: unique("policy"), action: "reject", reason: "walked" },
    rows: [{ resource: "policy", action: "create" }],
  }),
  "POST /console/policies/default": async () => ({
    page: "/console/policies",
    path: "/console/policies/default",
    fields: { time_zone: "Europe/Paris" },
    rows: [{ resource: "policy_default", action: "update" }],
  }),
  "POST /console/policies/:id/move": async (c) => {
    await policy(c);
    const { id } = await policy(c);
    return {
      path: `/console/policies/${id}/move`,
      fields: { direction: "up" },
      rows: [{ resource: "policy", action: "move", id: String(id) }],
    };
  },
  "POST /console/policies/:id": async (c) => {
    const { id } = await policy(c);
    return {
      page: `/console/policies/${id}`,
      path: `/console/policies/${id}`,
      fields: { description: "walked" },
      rows: [{ resource: "policy", action: "update", id: String(id) }],
    };
  },
  "POST /console/policies/:id/delete": async (c) => {
    const { id } = await policy(c);
    return {
      path: `/console/policies/${id}/delete`,
      rows: [{ resource: "policy", action: "delete", id: String(id) }],
    };
  },
  "POST /console/plans": async () => ({
    page: "/console/plans",
    path: "/console/plans",
    fields: { name: unique("plan"), download_kbps: "2048" },
    rows: [{ resource: "plan", action: "create" }],
  }),
  "POST /console/plans/:id": async (c) => {
    const { id } = await plan(c);
    return {
      page: `/console/plans/${id}`,
      path: `/console/plans/${id}`,
      fields: { upload_kbps: "512" },
      rows: [{ resource: "plan", action: "update", id: String(id) }],
    };
  },
  "POST /console/plans/:id/delete": async (c) => {
    const { id } = await plan(c);
    return {
      path: `/console/plans/${id}/delete`,
      rows: [{ resource: "plan", action: "delete", id: String(id) }],
    };
  },
  "POST /console/directories": async () => ({
    page: "/console/directories/new",
    path: "/console/directories",
    fields: {
      name: unique("corp"),
      servers: "ldap://127.0.0.1:9",
      bind_password: "a console bind password",
      user_base: "ou=people,dc=example,dc=org",
    },
    rows: [{ resource: "directory", action: "create" }],
    secrets: ["a console bind password"],
  }),
  "POST /console/directories/:id": async (c) => {
    const { id } = await directory(c);
    return {
      page: `/console/directories/${id}`,
      path: `/console/directories/${id}`,
      fields: { bind_password: "another console bind password" },
      rows: [{ resource: "directory", action: "update", id: String(id) }],
      secrets: ["another console bind password"],
    };
  },
  "POST /console/directories/:id/delete": async (c) => {
    const { id } = await directory(c);
    return {
      path: `/console/directories/${id}/delete`,
      rows: [{ resource: "directory", action: "delete", id: String(id) }],
    };
  },
  "POST /console/directories/:id/sync": async (c) => {
    const { id } = await directory(c);
    return {
      path: `/console/directories/${id}/sync`,
      rows: [{ resource: "directory", action: "sync", id: String(id) }],
    };
  },
  "POST /console/team/invites": async () => ({
    page: "/console/team",
    path: "/console/team/invites",
    fields: { email: `${unique("invited")}@example.com`, role: "help_desk" },
    rows: [{ resource: "invitation", action: "create" }],
  }),
  "POST /console/team/invites/:id/withdraw": async (c) => {
    const owner = await c.admin("owner");
    const invite = await c.server.core.team.invite(
      c.account,
      { adminId: owner.id, email: owner.email },
      { email: `${unique("withdrawn")}@example.com`, role: "help_desk" },
    );
    const id = String(invite.id);
    return {
      path: `/console/team/invites/${id}/withdraw`,
      rows: [{ resource: "invitation", action: "revoke", id }],
    };
  },
  "POST /console/team/:id/role": async (c) => {
    const { id } = await c.admin("help_desk");
    return {
      path: `/console/team/${id}/role`,
      fields: { role: "voucher_desk" },
      rows: [{ resource: "admin", action: "update", id: String(id) }],
    };
  },
  "POST /console/team/:id/remove": async (c) => {
    const { id } = await c.admin("read_only");
    return {
      page: `/console/team/${id}/remove`,
      path: `/console/team/${id}/remove`,
      rows: [{ resource: "admin", action: "delete", id: String(id) }],
    };
  },
  "POST /console/team/:id/sessions/:session/end": async (c) => {
    const { id } = await c.admin("read_only");
    const [session] = await c.server.core.admins.sessionsOf(c.account.id, id);
    return {
      path: `/console/team/${id}/sessions/${session!.id}/end`,
      rows: [{ resource: "admin_session", action: "delete" }],
    };
  },
  "POST /console/account/sessions/:id/end": async (c) => {
    const other = await c.admin("read_only");
    // The same admin signed in twice: the walk's session ends the other.
    const second = new ConsoleClient(c.server.url);
    assert.equal((await second.login(other.email, PASSWORD)).status, 303);
    // Newest use first: the second sign-in's, not the one submitting.
    const [session] = await c.server.core.admins.sessionsOf(c.account.id, other.id);
    return {
      page: "/console/account/sessions",
      path: `/console/account/sessions/${session!.id}/end`,
      rows: [{ resource: "admin_session", action: "delete", id: String(session!.id) }],
      as: other.client,
      asEmail: other.email,
      asRole: "read_only",
    };
  },
  "POST /console/sessions/:id/disconnect": async (c) => {
    const id = await radiusSession(c);
    return {
      path: `/console/sessions/${id}/disconnect`,
      rows: [{ resource: "session", action: "disconnect", id }],
    };
  },
  "POST /console/devices/import": async () => {
    const csv = `mac,name\n02:00:00:00:04:${(++serial % 256).toString(16).padStart(2, "0")},imported\n`;
    return {
      page: "/console/devices/import",
      path: "/console/devices/import",
      files: { file: { name: "devices.csv", type: "text/csv", data: Buffer.from(csv) } },
      rows: [{ resource: "device_import", action: "import" }],
    };
  },
  "POST /console/portals/:id/logo": async (c) => {
    const { id } = await portal(c);
    return {
      page: `/console/portals/${id}/edit`,
      path: `/console/portals/${id}/logo`,
      files: { logo: { name: "logo.png", type: "image/png", data: png(16, 16, [10, 120, 200]) } },
      rows: [{ resource: "portal_logo", action: "update", id: String(id) }],
    };
  },
  "POST /console/portals/:id/logo/delete": async (c) => {
    const { id } = await portal(c);
    await c.server.core.portals.setLogo(c.account.id, id, png(16, 16, [1, 2, 3]));
    return {
      path: `/console/portals/${id}/logo/delete`,
      rows: [{ resource: "portal_logo", action: "delete", id: String(id) }],
    };
  },
  "POST /console/security/totp": async (c) => {
    const me = await c.admin("read_only");
    const page = await me.client.get("/console/security/totp");
    const secret =
      /<code id="totp-secret">([A-Z2-7 ]+)<\/code>/.exec(page.text)?.[1]?.replace(/ /g, "") ?? "";
    return {
      path: "/console/security/totp",
      fields: { code: totp(secret) },
      rows: [{ resource: "totp", action: "create" }],
      secrets: [secret],
      as: me.client,
      asEmail: me.email,
      asRole: "read_only",
    };
  },
  "POST /console/security/totp/remove": async (c) => {
    const me = await withTotp(c);
    return {
      path: "/console/security/totp/remove",
      rows: [{ resource: "totp", action: "delete" }],
      as: me.client,
      asEmail: me.email,
      asRole: "read_only",
    };
  },
  "POST /console/security/recovery-codes": async (c) => {
    const me = await withTotp(c);
    return {
      path: "/console/security/recovery-codes",
      rows: [{ resource: "recovery_codes", action: "regenerate" }],
      as: me.client,
      asEmail: me.email,
      asRole: "read_only",
    };
  },
  "POST /console/security/requirement": async () => ({
    path: "/console/security/requirement",
    fields: { required: "0" },
    rows: [{ resource: "account_security", action: "update" }],
  }),
  "POST /console/invite/:token": async (c) => {
    const owner = await c.admin("owner");
    const email = `${unique("joining")}@example.com`;
    await c.server.core.team.invite(
      c.account,
      { adminId: owner.id, email: owner.email },
      { email, role: "read_only" },
    );
    const token = /\/console\/invite\/([A-Za-z0-9_-]{43})\b/.exec(c.smtp.to(email).at(-1)?.text ?? "")?.[1];
    assert.ok(token, `the invitation mailed to ${email}`);
    const invitee = new ConsoleClient(c.server.url);
    return {
      page: `/console/invite/${token}`,
      path: `/console/invite/${token}`,
      fields: { password: "a joining password", password_confirm: "a joining password" },
      rows: [{ resource: "admin", action: "create" }],
      secrets: ["a joining password"],
      as: invitee,
      asEmail: email,
      asRole: "read_only",
    };
  },
};

/** The least role holding the permission: the one with the fewest grants (read_only first). */
function leastRole(needed: Permission | "self"): Role {
  const order: Role[] = ["read_only", "voucher_desk", "help_desk", "network_engineer", "admin", "owner"];
  if (needed === "self") return "read_only";
  const role = order.find((r) => roleAllows(r, needed));
  assert.ok(role, `no role holds ${needed}`);
  return role;
}

for (const { dialect, skip } of await dialects()) {
  describe(`audit log: every console write route on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let smtp: TestSmtp;
    let das: TestDas;
    let routes: Route[];
    let context: Context;
    const clients = new Map<Role, { id: number; email: string; client: ConsoleClient }>();

    before(async () => {
      smtp = await TestSmtp.start();
      das = await startTestDas(DAS_SECRET);
      server = await startTestServer({ dialect, env: { ...smtp.env(), RATE_LIMIT_PER_MINUTE: "10000" } });
      const account = await server.account("default");
      const make = async (role: Role) => {
        const email = `${unique(role)}-${dialect}@example.com`;
        const { admin } = await server.core.admins.create(account, { email, password: PASSWORD, role });
        const client = new ConsoleClient(server.url);
        assert.equal((await client.login(email, PASSWORD)).status, 303, `${role} signs in`);
        return { id: admin.id, email, client };
      };
      for (const role of ROLE_NAMES) clients.set(role, await make(role));
      context = { server, smtp, das, account, dialect, admin: make };
      routes = await consoleRoutes(server);
    });
    after(async () => {
      await server?.stop();
      await smtp?.close();
      await das?.close();
    });

    const maxId = async () => {
      const row = await server.core.database.db
        .selectFrom("audit_log")
        .select((eb) => eb.fn.max("id").as("id"))
        .executeTakeFirst();
      return Number(row?.id ?? 0);
    };
    const rowsAfter = (id: number) =>
      server.core.database.db
        .selectFrom("audit_log")
        .selectAll()
        .where("id", ">", id)
        .orderBy("id")
        .execute();

    test("every console write route is walked or listed with its reason; no listed route is gone", () => {
      const writes = routes.filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.url}`);
      assert.ok(writes.length > 60, `only ${writes.length} write routes`);
      const unlisted = writes.filter(
        (w) => !(w in WALKS) && !(w in WRITES_NOTHING) && !(w in CHECKED_ELSEWHERE),
      );
      assert.deepEqual(unlisted, [], "console write routes neither walked nor listed: add them to this file");
      const listed = [
        ...Object.keys(WALKS),
        ...Object.keys(WRITES_NOTHING),
        ...Object.keys(CHECKED_ELSEWHERE),
      ];
      assert.deepEqual(
        listed.filter((l) => !writes.includes(l)),
        [],
        "routes in this file's tables that the console no longer has",
      );
      const twice = Object.keys(WALKS).filter((w) => w in WRITES_NOTHING || w in CHECKED_ELSEWHERE);
      assert.deepEqual(twice, [], "routes both walked and listed as not walked");
    });

    test("each walked write route leaves exactly its rows, naming the admin, role and address", async () => {
      const wrong: string[] = [];
      const walked: string[] = [];
      for (const [key, fixture] of Object.entries(WALKS)) {
        const needed = ROUTES[key] as Permission | "self";
        let submit: Submit;
        try {
          submit = await fixture(context);
        } catch (error) {
          wrong.push(`${key}: set-up: ${(error as Error).message}`);
          continue;
        }
        const role = submit.asRole ?? leastRole(needed);
        const who = submit.as
          ? { client: submit.as, email: submit.asEmail!, id: 0 }
          : (clients.get(role) as { id: number; email: string; client: ConsoleClient });
        let fields = submit.fields ?? {};
        if (submit.page) {
          const page = await who.client.get(submit.page);
          if (page.status !== 200) {
            wrong.push(`${key}: GET ${submit.page} answered ${page.status}`);
            continue;
          }
          try {
            fields = { ...formFields(page.text, submit.path), ...fields };
          } catch (error) {
            wrong.push(`${key}: ${(error as Error).message} (${submit.page})`);
            continue;
          }
        } else await who.client.get(submit.visit ?? "/console");
        const start = await maxId();
        const answer = submit.files
          ? await who.client.postMultipart(submit.path, fields, submit.files)
          : await who.client.post(submit.path, fields);
        if (answer.status >= 400 || /role="alert"/.test(answer.text)) {
          wrong.push(`${key} as ${role}: ${answer.status} ${pageText(answer.text)}`);
          continue;
        }
        const rows = await rowsAfter(start);
        const got = rows.map((r) => `${r.resource}/${r.action}`);
        const want = submit.rows.map((r) => `${r.resource}/${r.action}`);
        if (got.join() !== want.join()) {
          wrong.push(`${key} as ${role}: rows ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
          continue;
        }
        const adminId = submit.as
          ? (await server.core.admins.list(context.account.id)).find((a) => a.email === who.email)!.id
          : who.id;
        submit.rows.forEach((expected, i) => {
          const row = rows[i]!;
          const facts = [row.actor_type, row.actor_id, row.actor_name, row.actor_role, row.address];
          const wanted = ["admin", String(adminId), who.email, role, "127.0.0.1"];
          if (facts.join() !== wanted.join())
            wrong.push(`${key}: actor ${facts.join()}, want ${wanted.join()}`);
          if (expected.id !== undefined && row.resource_id !== expected.id)
            wrong.push(`${key}: resource_id ${row.resource_id}, want ${expected.id}`);
        });
        const text = rows.map((r) => `${r.before} ${r.after}`).join(" ");
        for (const secret of submit.secrets ?? []) {
          if (secret && text.includes(secret)) wrong.push(`${key}: the secret "${secret}" is in the row`);
        }
        walked.push(key);
      }
      assert.deepEqual(wrong, [], `console write routes whose audit rows are wrong:\n${wrong.join("\n")}`);
      assert.ok(walked.length > 50, `${walked.length} routes walked`);
    });

    test("a secret typed into a console form is the one mask in the row", async () => {
      const owner = clients.get("network_engineer")!;
      await owner.client.get("/console/networks/new");
      const start = await maxId();
      const fields = formFields((await owner.client.get("/console/networks/new")).text, "/console/networks");
      const made = await owner.client.post("/console/networks", {
        ...fields,
        name: unique("masked"),
        nas_ip: "",
        secret: "masked-console-secret",
      });
      assert.equal(made.status, 303, made.text.slice(0, 300));
      const [row] = await rowsAfter(start);
      assert.equal(JSON.parse(row!.after!).secret, MASK);
    });
  });
}
