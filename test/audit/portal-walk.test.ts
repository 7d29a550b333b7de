// The audit log of the captive portal's door (issue 29 point 3): every route of the guest pages that
// takes a writing method is either walked here, as a guest (or a sponsor) would use it, with exactly
// the audit rows its change must leave (actor "portal", the guest's address), or listed with the
// reason it changes nothing an operator audits. The routes come from fastify itself (the portal
// plugin's onRoute), so a route added later fails here until it is one or the other. Every row
// written during the walk is checked for the credentials handed to the gateway: a guest's code or
// password never appears in before/after, only masked.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import Fastify from "fastify";
import { MASK } from "../../src/core/audit/mask.ts";
import type { CaptivePortal } from "../../src/core/portals/service.ts";
import { MemoryCounterStore } from "../../src/http/rate-limit.ts";
import { portalPlugin } from "../../src/portal/plugin.ts";
import { GuestDevice, type GuestLab, handoffOf, local, startGuestLab } from "../portal/guests-support.ts";
import { ConsoleClient } from "../support/browser.ts";
import { GuestBrowser, handoffFields, startIdpLab } from "../support/idp-lab.ts";
import type { TestServer } from "../support/server.ts";
import { codeIn, linkIn } from "../support/smtp.ts";
import { Receiver } from "../webhooks/receiver.ts";

/** Write routes that change nothing an operator audits, by why. */
const EXEMPT: Record<string, string> = {
  "POST /portal/:id/devices/login":
    "a sign-in: checks the password and seals a cookie; nothing is stored (attempts are counted)",
  "POST /portal/:id/devices/logout": "clears the page's cookie; nothing is stored",
};

/** Routes the walk below used, each with what it checked (filled as the tests run). */
const walked = new Map<string, string[]>();

const WRITE_METHODS = ["POST", "PUT", "PATCH", "DELETE"];

/** The portal's routes as fastify registers them (HEAD left out: fastify's own, for every GET). */
async function portalRoutes(lab: GuestLab): Promise<string[]> {
  const routes: string[] = [];
  const app = Fastify({ logger: false });
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) {
      if (method !== "HEAD") routes.push(`${method} ${route.url}`);
    }
  });
  await app.register(portalPlugin, {
    prefix: "/portal",
    core: lab.server.core,
    counters: new MemoryCounterStore(),
  });
  await app.ready();
  await app.close();
  return [...new Set(routes)].sort();
}

type Expected = [resource: string, action: string, id?: number | string];

const GENEROUS = { sends_per_address: 100_000, sends_per_device: 1_000, sends_per_recipient: 100 };
/** A universally administered MAC (a randomised one is never remembered silently). */
let macs = 0;
const universalMac = () => `00:16:3E:29:03:${String(++macs).padStart(2, "0")}`;

describe("audit log of the captive portal", () => {
  let lab: GuestLab;
  /** Credentials handed to gateways during the walk: none may appear in an audit row. */
  const credentials = new Set<string>();
  let firstRow = 0;
  /** The Wisp the walk is on: the guest lab's, or the identity-provider lab's for that walk. */
  let on: { server: TestServer; accountId: number };

  before(async () => {
    lab = await startGuestLab();
    on = lab;
    firstRow = await maxId();
  });
  after(() => lab?.stop());

  async function maxId(): Promise<number> {
    const row = await on.server.core.database.db
      .selectFrom("audit_log")
      .select((eb) => eb.fn.max("id").as("id"))
      .executeTakeFirst();
    return Number(row?.id ?? 0);
  }

  const rowsAfter = (id: number) =>
    on.server.core.database.db
      .selectFrom("audit_log")
      .selectAll()
      .where("id", ">", id)
      .orderBy("id")
      .execute();

  /**
   * Runs one request of `route` and asserts the rows it left: exactly `expected`, in order, each
   * the portal's from the guest's address. Returns the request's answer and its rows.
   */
  async function step<T extends { status: number; text: string }>(
    route: string,
    request: () => Promise<T>,
    expected: Expected[],
    status: number,
  ) {
    const start = await maxId();
    const answer = await request();
    assert.equal(answer.status, status, `${route}: ${answer.text.slice(0, 400)}`);
    const rows = await rowsAfter(start);
    assert.deepEqual(
      rows.map((r) => [r.resource, r.action]),
      expected.map(([resource, action]) => [resource, action]),
      `${route}: the audit rows`,
    );
    for (const [i, row] of rows.entries()) {
      assert.deepEqual(
        [row.actor_type, row.actor_id, row.actor_name, row.actor_role, row.address, row.account_id],
        ["portal", "", "portal", "", "127.0.0.1", on.accountId],
        `${route}: row ${row.resource}/${row.action} names the portal and the guest's address`,
      );
      const id = expected[i]![2];
      if (id !== undefined) assert.equal(row.resource_id, String(id), `${route}: resource_id`);
    }
    walked.set(route, [
      ...(walked.get(route) ?? []),
      expected.map((e) => `${e[0]}/${e[1]}`).join("+") || "none",
    ]);
    return { answer, rows };
  }

  /** The hand-off's credential: kept to check no audit row shows it. */
  function handedOff(text: string) {
    const { fields } = handoffOf(text);
    assert.ok(fields.username && fields.password, "a username and password handed to the gateway");
    // A voucher's code is its username and password at once; a user's name is no secret.
    if (fields.username === fields.password) credentials.add(fields.username);
    credentials.add(fields.password);
    return fields as { username: string; password: string };
  }

  const userIdOf = async (username: string) =>
    (
      await lab.server.core.database.db
        .selectFrom("users")
        .select("id")
        .where("account_id", "=", lab.accountId)
        .where("username", "=", username)
        .executeTakeFirstOrThrow()
    ).id;

  test("sign-in page: click-through, registration, voucher (device remembered), password", async () => {
    const route = "POST /portal/:id";
    const clickPortal = await lab.portal({ methods: ["clickthrough"] });
    const clicker = new GuestDevice(lab, clickPortal, universalMac());
    await clicker.open();
    const click = await step(
      route,
      () =>
        clicker.client.post(`/portal/${clickPortal.id}`, {
          method: "clickthrough",
          terms: "yes",
          gw: clicker.gateway,
        }),
      [["voucher", "create"]],
      200,
    );
    const code = handedOff(click.answer.text).username;
    const voucher = await lab.server.core.vouchers.findByCode(lab.accountId, code);
    assert.equal(click.rows[0]!.resource_id, String(voucher?.id));
    assert.equal(JSON.parse(click.rows[0]!.after!).code, MASK, "the click-through code is masked");

    const regPortal = await lab.portal({ methods: ["registration"] });
    const registrant = new GuestDevice(lab, regPortal, universalMac());
    await registrant.open();
    const registered = await step(
      route,
      () =>
        registrant.client.post(`/portal/${regPortal.id}`, {
          method: "registration",
          name: "Walk Registrant",
          email: "registrant@example.org",
          terms: "yes",
          gw: registrant.gateway,
        }),
      [["user", "create"]],
      200,
    );
    const guest = handedOff(registered.answer.text);
    assert.equal(registered.rows[0]!.resource_id, String(await userIdOf(guest.username)));
    assert.equal(JSON.parse(registered.rows[0]!.after!).password, MASK);

    const codePortal = await lab.portal({
      methods: ["voucher"],
      remember_devices: "always",
      remember_days: 7,
    });
    const printed = await lab.server.core.vouchers.create(lab.accountId, { validity: 3600 });
    const holder = new GuestDevice(lab, codePortal, universalMac());
    await holder.open();
    const remembered = await step(
      route,
      () =>
        holder.client.post(`/portal/${codePortal.id}`, {
          method: "voucher",
          code: printed.code,
          gw: holder.gateway,
        }),
      [["device", "create"]],
      200,
    );
    handedOff(remembered.answer.text);
    const device = JSON.parse(remembered.rows[0]!.after!);
    assert.equal(device.voucher_id, printed.id);
    assert.equal(device.kind, "remembered");

    // A sign-in with a user's own password changes nothing: the login is the gateway's RADIUS request.
    const pwPortal = await lab.portal({ methods: ["password"] });
    await lab.server.core.users.create(lab.accountId, { username: "walker", password: "Walker-pass-1" });
    const member = new GuestDevice(lab, pwPortal, universalMac());
    await member.open();
    const signedIn = await step(
      route,
      () =>
        member.client.post(`/portal/${pwPortal.id}`, {
          method: "password",
          username: "walker",
          password: "Walker-pass-1",
          gw: member.gateway,
        }),
      [],
      200,
    );
    handedOff(signedIn.answer.text);
  });

  test("email code: the request and the code leave no row; the short login is a voucher, connect the user", async () => {
    const portal = await lab.portal({ email_verification: "code", preverify: true, ...GENEROUS });
    const guest = new GuestDevice(lab, portal, universalMac());
    // The request itself (a verification row) is the guest's, not a change the log keeps.
    await guest.open();
    await step("POST /portal/:id", () => guest.register({ email: "coder@example.org" }), [], 303);
    const first = await lab.smtp.waitFor((m) => m.to.includes("coder@example.org"));
    // The cooldown (10 s at least) has passed, as far as the row knows.
    await lab.server.core.database.db
      .updateTable("guest_verifications")
      .set({ last_sent: Math.floor(Date.now() / 1000) - 3600 })
      .where("account_id", "=", lab.accountId)
      .where("email", "=", "coder@example.org")
      .execute();
    await guest.view();
    await step(
      "POST /portal/:id/guest/:token/resend",
      () => guest.client.post(`${guest.page}/resend`, {}),
      [],
      303,
    );
    await lab.smtp.waitFor((m) => m.to.includes("coder@example.org") && m.text !== first.text);
    const mails = lab.smtp.to("coder@example.org");
    const code = codeIn(mails.at(-1)!.text);
    credentials.add(code);

    await guest.view();
    const short = await step(
      "POST /portal/:id/guest/:token/preverify",
      () => guest.client.post(`${guest.page}/preverify`, {}),
      [["voucher", "create"]],
      200,
    );
    const shortCode = handedOff(short.answer.text).username;
    const shortVoucher = await lab.server.core.vouchers.findByCode(lab.accountId, shortCode);
    assert.equal(short.rows[0]!.resource_id, String(shortVoucher?.id));

    await guest.view();
    await step(
      "POST /portal/:id/guest/:token/code",
      () => guest.client.post(`${guest.page}/code`, { code }),
      [],
      303,
    );
    await guest.view();
    // Connecting ends the short login (its voucher disabled) and makes the guest's user.
    const connected = await step(
      "POST /portal/:id/guest/:token/connect",
      () => guest.client.post(`${guest.page}/connect`, {}),
      [
        ["voucher", "update", shortVoucher?.id],
        ["user", "create"],
      ],
      200,
    );
    const user = handedOff(connected.answer.text);
    assert.equal(connected.rows[1]!.resource_id, String(await userIdOf(user.username)));
    assert.equal(JSON.parse(connected.rows[0]!.after!).status, "disabled");
  });

  test("SMS code: the request and the code leave no row; connect makes the user", async () => {
    const gateway = await Receiver.start();
    gateway.respond = () => ({ status: 202, body: '{"accepted":true}' });
    try {
      const portal = await lab.portal({
        sms_verification: true,
        sms_provider: "generic",
        sms_url: gateway.url("/sms"),
        sms_template: '{"to":"{to}","message":"{text}"}',
        sms_secret: "sms-secret-not-shown",
        sms_countries: ["+34"],
        ...GENEROUS,
      });
      const guest = new GuestDevice(lab, portal, universalMac());
      await step(
        "POST /portal/:id",
        () => guest.register({ email: "texter@example.org", phone: "+34 612 34 56 78" }),
        [],
        303,
      );
      await gateway.waitFor(() => gateway.at("/sms").length === 1);
      const code = codeIn(gateway.at("/sms")[0]?.json.message);
      credentials.add(code);
      await guest.view();
      await step(
        "POST /portal/:id/guest/:token/code",
        () => guest.client.post(`${guest.page}/code`, { code }),
        [],
        303,
      );
      await guest.view();
      const connected = await step(
        "POST /portal/:id/guest/:token/connect",
        () => guest.client.post(`${guest.page}/connect`, {}),
        [["user", "create"]],
        200,
      );
      handedOff(connected.answer.text);
    } finally {
      await gateway.close();
    }
  });

  test("email link: confirming leaves no row; connect makes the user", async () => {
    const portal = await lab.portal({ email_verification: "link", ...GENEROUS });
    const guest = new GuestDevice(lab, portal, universalMac());
    assert.equal((await guest.register({ email: "linker@example.org" })).status, 303);
    const mail = await lab.smtp.waitFor((m) => m.to.includes("linker@example.org"));
    const link = local(lab, linkIn(mail.text, "/confirm/"));
    credentials.add(link.split("/").pop()!);
    const mailApp = new ConsoleClient(lab.server.url);
    assert.equal((await mailApp.get(link)).status, 200);
    await step("POST /portal/:id/confirm/:token", () => mailApp.post(link, {}), [], 200);
    await guest.view();
    const connected = await step(
      "POST /portal/:id/guest/:token/connect",
      () => guest.client.post(`${guest.page}/connect`, {}),
      [["user", "create"]],
      200,
    );
    handedOff(connected.answer.text);
  });

  test("sponsor: the approval is one row (the decision), then connect makes the user", async () => {
    const portal: CaptivePortal = await lab.portal({
      sponsor_required: true,
      sponsor_domains: ["example.com"],
      sponsor_durations: [3_600],
      ...GENEROUS,
    });
    const guest = new GuestDevice(lab, portal, universalMac());
    const answer = await guest.register({ email: "visitor@example.org", sponsor: "host@example.com" });
    assert.equal(answer.status, 303, answer.text);
    const mail = await lab.smtp.waitFor(
      (m) => m.to.includes("host@example.com") && m.text.includes("visitor@"),
    );
    const approve = local(lab, linkIn(mail.text, "decision=approve"));
    const host = new ConsoleClient(lab.server.url);
    assert.equal((await host.get(approve)).status, 200);
    const path = approve.replace(/\?.*$/, "");
    const request = await lab.server.core.database.db
      .selectFrom("guest_verifications")
      .select("id")
      .where("account_id", "=", lab.accountId)
      .where("email", "=", "visitor@example.org")
      .executeTakeFirstOrThrow();
    const decided = await step(
      "POST /portal/:id/sponsor/:token",
      () => host.post(path, { decision: "approve", duration: "3600" }),
      [["guest_verification", "approve", request.id]],
      200,
    );
    const after = JSON.parse(decided.rows[0]!.after!);
    assert.equal(after.decided_by, "host@example.com");
    assert.equal(after.duration, 3600);
    assert.equal(after.email, "visitor@example.org");
    await guest.view();
    const connected = await step(
      "POST /portal/:id/guest/:token/connect",
      () => guest.client.post(`${guest.page}/connect`, {}),
      [["user", "create"]],
      200,
    );
    handedOff(connected.answer.text);
  });

  test("my devices: add, rename and remove are one row each, the owner's device", async () => {
    const portal = await lab.portal({ methods: ["password"] });
    await lab.server.core.users.create(lab.accountId, { username: "owner", password: "Owner-pass-1" });
    const owner = await userIdOf("owner");
    await lab.server.core.attributes.addToUser(lab.accountId, {
      userid: owner,
      table: "radcheck",
      attribute: "Wisp-Max-Devices",
      operator: ":=",
      value: "2",
    });
    const base = `/portal/${portal.id}/devices`;
    const browser = new ConsoleClient(lab.server.url);
    await browser.get(base);
    const login = await browser.post(`${base}/login`, { username: "owner", password: "Owner-pass-1" });
    assert.equal(login.status, 303, login.text);
    await browser.get(base);
    const added = await step(
      `POST /portal/:id/devices/add`,
      () => browser.post(`${base}/add`, { mac: "00:16:3e:29:04:01", name: "laptop" }),
      [["device", "create"]],
      303,
    );
    const device = JSON.parse(added.rows[0]!.after!);
    assert.equal(device.user_id, owner);
    assert.equal(added.rows[0]!.resource_id, String(device.id));
    await browser.get(base);
    await step(
      "POST /portal/:id/devices/rename",
      () => browser.post(`${base}/rename`, { device: String(device.id), name: "work laptop" }),
      [["device", "update", device.id]],
      303,
    );
    await browser.get(base);
    await step(
      "POST /portal/:id/devices/remove",
      () => browser.post(`${base}/remove`, { device: String(device.id) }),
      [["device", "delete", device.id]],
      303,
    );
  });

  test("identity provider (SAML): the button and the ACS leave no row; the finish page makes the user", async () => {
    const idp = await startIdpLab();
    on = idp;
    try {
      const provider = await idp.samlProvider();
      const portal = await idp.portal({ identity_providers: [provider.id] });
      const guest = new GuestBrowser(idp, portal, universalMac());
      const startRow = await maxId();
      await guest.open();
      let idpUrl = "";
      await step(
        "POST /portal/:id/idp/:provider",
        async () => {
          const started = await guest.start(provider.id);
          idpUrl = started.idpUrl ?? "";
          return started;
        },
        [],
        200,
      );
      const request = idp.saml.parseRedirect(idpUrl);
      const saml = idp.saml.response({
        request,
        nameId: "u-2903",
        attributes: { email: ["walker@city.example"] },
      });
      let back: Response | undefined;
      await step(
        "POST /portal/idp/:provider/acs",
        async () => {
          back = await guest.jar.fetch(guest.url(`/portal/idp/${provider.id}/acs`), {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ SAMLResponse: saml, RelayState: request.relayState }),
          });
          return { status: back.status, text: await back.clone().text() };
        },
        [],
        303,
      );
      // A GET that makes a change: the user of the sign-in, with its one-time password.
      const finished = await step(
        "GET /portal/:id/idp/finish/:token",
        () => guest.follow(back!),
        [["user", "create"]],
        200,
      );
      const fields = handoffFields(finished.answer.text);
      assert.equal(fields.username, `${provider.name}:u-2903`);
      const after = JSON.parse(finished.rows[0]!.after!);
      assert.equal(after.username, `${provider.name}:u-2903`);
      assert.equal(after.password, MASK);
      const rows = await rowsAfter(startRow);
      const text = rows.map((r) => `${r.before ?? ""} ${r.after ?? ""}`).join("\n");
      assert.ok(!text.includes(fields.password ?? "-"), "the one-time password is in no row");
    } finally {
      on = lab;
      await idp.stop();
    }
  });

  test("no credential handed to a gateway appears in any row the walk wrote", async () => {
    const rows = await rowsAfter(firstRow);
    assert.ok(rows.length >= 10, `${rows.length} rows`);
    assert.ok(credentials.size >= 10, `${credentials.size} credentials`);
    const text = rows.map((r) => `${r.before ?? ""} ${r.after ?? ""}`).join("\n");
    for (const secret of credentials) {
      assert.ok(
        !text.toLowerCase().includes(secret.toLowerCase()),
        `a credential in an audit row: ${secret}`,
      );
    }
  });

  test("every portal write route is walked above or exempt with a reason", async () => {
    const all = await portalRoutes(lab);
    const routes = all.filter((r) => WRITE_METHODS.includes(r.split(" ")[0]!));
    assert.ok(routes.length >= 10, `only ${routes.length} write routes found`);
    assert.deepEqual(
      routes.filter((r) => !walked.has(r) && !(r in EXEMPT)),
      [],
      "portal write routes neither walked nor exempt",
    );
    assert.deepEqual(
      [...Object.keys(EXEMPT), ...walked.keys()].filter((r) => !all.includes(r)),
      [],
      "routes listed here that the portal no longer has",
    );
    assert.deepEqual(
      Object.keys(EXEMPT).filter((r) => walked.has(r)),
      [],
      "routes both walked and exempt",
    );
  });
});
