// Sponsors over real HTTP (issue 27 points 5 and 7): the guest names a host of the portal's sponsor
// domains or list; the host gets a mail (read from the test's SMTP server) with approve and deny
// links; the duration the host chose binds the guest's account; links are single use, expire and
// cannot be forged; console admins of the account decide from the pending guests page; the
// portal form of the console carries every verification setting.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConsoleClient } from "../support/browser.ts";
import { linkIn } from "../support/smtp.ts";
import { eventsOf, GuestDevice, type GuestLab, handoffOf, local, startGuestLab } from "./guests-support.ts";

const SPONSORED = {
  sponsor_required: true,
  sponsor_domains: ["example.com"],
  sponsor_emails: ["boss@partner.org"],
  sponsor_durations: [3_600, 28_800],
  sends_per_address: 100_000,
  sends_per_device: 1_000,
  sends_per_recipient: 100,
};

describe("verified guests: sponsors", () => {
  let lab: GuestLab;
  before(async () => {
    lab = await startGuestLab();
  });
  after(() => lab?.stop());

  /** Registers a visitor naming `sponsor`; returns the guest and the sponsor's approve/deny links. */
  async function visit(portalId: number, email: string, sponsor: string) {
    const portal = await lab.server.core.portals.get(lab.accountId, portalId);
    const guest = new GuestDevice(lab, portal);
    const answer = await guest.register({ email, sponsor, phone: "+34 600 000 000" });
    assert.equal(answer.status, 303, answer.text);
    const mail = await lab.smtp.waitFor((m) => m.to.includes(sponsor) && m.text.includes(email));
    return {
      guest,
      mail,
      approve: local(lab, linkIn(mail.text, "decision=approve")),
      deny: local(lab, linkIn(mail.text, "decision=deny")),
    };
  }

  test("approve with a chosen duration: the guest's page moves on, the account lasts that long", async () => {
    const portal = await lab.portal(SPONSORED);
    const guest = new GuestDevice(lab, portal);
    const page = await guest.open();
    assert.match(page.text, /<input type="email" id="reg-sponsor" name="sponsor"/);
    const outside = await guest.register({ email: "visitor@example.org", sponsor: "someone@evil.org" });
    assert.equal(outside.status, 400);
    assert.match(outside.text, /not one of the hosts who may approve guests here/);
    assert.equal((await guest.register({ email: "visitor@example.org", sponsor: "" })).status, 400);
    const lookalike = await guest.register({
      email: "visitor@example.org",
      sponsor: "x@example.com.evil.org",
    });
    assert.equal(lookalike.status, 400, "a domain that only starts like a sponsor domain");

    const {
      guest: visitor,
      mail,
      approve,
    } = await visit(portal.id, "visitor@example.org", "host@example.com");
    assert.equal(mail.subject, "Ana García asks you to approve their Wi-Fi access");
    assert.match(
      mail.text,
      /Ana García \(visitor@example\.org, \+34 600 000 000\) named you as their host at Hotel Lobby/,
    );
    const guestMail = await lab.smtp.waitFor((m) => m.to.includes("visitor@example.org"));
    assert.equal(guestMail.subject, "Your Wi-Fi request at Hotel Lobby");
    const comeBack = local(lab, linkIn(guestMail.text, "/guest/"));
    assert.equal(comeBack, visitor.page, "the guest's mail links back to their own request");
    const requested = await eventsOf(lab, "guest.sponsor_requested");
    assert.ok(
      requested.some((e) => e.email === "visitor@example.org" && e.sponsor_email === "host@example.com"),
    );

    const waiting = await visitor.view();
    assert.match(waiting.text, /Waiting for approval/);
    assert.match(waiting.text, /<meta http-equiv="refresh" content="5;url=/);
    assert.equal((await visitor.act("connect")).status, 403, "nothing granted before approval");

    // The host's browser: a page first (a GET decides nothing), then the choice.
    const host = new ConsoleClient(lab.server.url);
    const decide = await host.get(approve);
    assert.equal(decide.status, 200);
    assert.match(
      decide.text,
      /<option value="3600" selected>1 hour<\/option><option value="28800">8 hours<\/option>/,
    );
    const path = approve.replace(/\?.*$/, "");
    const odd = await host.post(path, { decision: "approve", duration: "31536000" });
    assert.equal(odd.status, 400, "only the portal's durations");
    assert.match(odd.text, /choose one of the durations offered/);
    const approved = await host.post(path, { decision: "approve", duration: "28800" });
    assert.equal(approved.status, 200);
    assert.match(approved.text, /Approved: Ana García can get online for 8 hours/);
    assert.equal((await host.post(path, { decision: "deny" })).status, 410, "single use");
    // One audit row: the sponsor's link is the portal's door; the row says who decided.
    const audited = await lab.server.core.database.db
      .selectFrom("audit_log")
      .selectAll()
      .where("resource", "=", "guest_verification")
      .where("action", "=", "approve")
      .execute();
    assert.equal(audited.length, 1);
    assert.equal(audited[0]!.actor_type, "portal");
    assert.equal(JSON.parse(audited[0]!.after!).decided_by, "host@example.com");
    assert.equal((await host.get(approve)).status, 410);

    // The guest comes back later in another browser through the mailed link: verified, connect.
    const later = new ConsoleClient(lab.server.url);
    const verified = await later.get(comeBack);
    assert.match(verified.text, /You are verified/);
    const handoff = handoffOf((await later.post(`${comeBack}/connect`, {})).text);
    const username = handoff.fields.username ?? "";
    const expiration = await lab.server.core.database.db
      .selectFrom("radcheck")
      .select("value")
      .where("account_id", "=", lab.accountId)
      .where("username", "=", username)
      .where("attribute", "=", "Expiration")
      .executeTakeFirstOrThrow();
    const row = await lab.server.core.database.db
      .selectFrom("guest_verifications")
      .select(["decided_at", "decided_by", "duration"])
      .where("account_id", "=", lab.accountId)
      .where("email", "=", "visitor@example.org")
      .executeTakeFirstOrThrow();
    assert.equal(row.duration, 28_800);
    assert.equal(row.decided_by, "host@example.com");
    assert.equal(
      Number(expiration.value),
      Number(row.decided_at) + 28_800,
      "the sponsor's duration binds the account",
    );
    const events = await eventsOf(lab, "guest.approved");
    assert.ok(events.some((e) => e.email === "visitor@example.org" && e.duration === 28_800));
  });

  test("deny; a listed address outside the domains; forged and expired links", async () => {
    const portal = await lab.portal(SPONSORED);
    const { guest, deny, approve } = await visit(portal.id, "denied@example.org", "boss@partner.org");
    const host = new ConsoleClient(lab.server.url);
    const page = await host.get(deny);
    assert.match(page.text, /id="deny">Deny<\/button> <button type="submit" name="decision" value="approve"/);
    const path = deny.replace(/\?.*$/, "");
    const forged = path.replace(/.{8}$/, "AAAAAAAA");
    assert.equal((await host.get(forged)).status, 410);
    assert.equal((await host.post(forged, { decision: "approve", duration: "3600" })).status, 410);
    const denied = await host.post(path, { decision: "deny" });
    assert.equal(denied.status, 200);
    assert.match(denied.text, /Denied: Ana García will not get online/);
    assert.equal((await host.get(approve)).status, 410, "the other link of the pair is spent too");
    assert.match((await guest.view()).text, /Request declined/);
    assert.equal((await guest.act("connect")).status, 403);
    assert.ok((await eventsOf(lab, "guest.denied")).some((e) => e.email === "denied@example.org"));

    const late = await visit(portal.id, "late@example.org", "host2@example.com");
    const token = late.approve.replace(/\?.*$/, "").split("/").pop() ?? "";
    const view = await lab.server.core.portals.forGuests(portal.id);
    assert.ok(view);
    const expired = await lab.server.core.guests.sponsorRequest(
      view,
      token,
      Math.floor(Date.now() / 1000) + 3_601,
    );
    assert.deepEqual(expired, { ok: false, problem: "expired" });
  });

  test("console: admins approve from pending guests; the portal form carries every setting", async () => {
    const portal = await lab.portal(SPONSORED);
    const { guest } = await visit(portal.id, "console-guest@example.org", "desk@example.com");
    const account = await lab.server.account("default");
    await lab.server.core.admins.create(account, {
      email: "admin@example.com",
      password: "a long enough password",
    });
    const admin = new ConsoleClient(lab.server.url);
    assert.equal((await admin.login("admin@example.com", "a long enough password")).status, 303);
    const pending = await admin.get("/console/guests");
    assert.equal(pending.status, 200);
    assert.match(pending.text, /console-guest@example\.org/);
    assert.match(pending.text, /Sponsor \(desk@example\.com\)/);
    const id = /action="\/console\/guests\/(\d+)\/decide"/.exec(pending.text)?.[1];
    assert.ok(id);
    const bad = await admin.post(`/console/guests/${id}/decide`, { decision: "approve", duration: "5" });
    assert.equal(bad.status, 400);
    const done = await admin.post(`/console/guests/${id}/decide`, { decision: "approve", duration: "3600" });
    assert.equal(done.status, 303);
    assert.match((await guest.view()).text, /You are verified/);
    const row = await lab.server.core.database.db
      .selectFrom("guest_verifications")
      .select(["decided_by"])
      .where("account_id", "=", lab.accountId)
      .where("email", "=", "console-guest@example.org")
      .executeTakeFirstOrThrow();
    assert.equal(row.decided_by, "console:admin@example.com");
    // One audit row naming the admin (test/audit/console-walk.test.ts lists this route here).
    const audited = await lab.server.core.database.db
      .selectFrom("audit_log")
      .selectAll()
      .where("resource", "=", "guest_verification")
      .where("resource_id", "=", id)
      .execute();
    assert.deepEqual(
      audited.map((r) => [r.action, r.actor_type, r.actor_name, r.actor_role]),
      [["approve", "admin", "admin@example.com", "owner"]],
    );
    assert.equal((await admin.post(`/console/guests/${id}/decide`, { decision: "deny" })).status, 409);

    // The form: every verification field, saved and shown again; the SMS secret write-only.
    const form = await admin.get(`/console/portals/${portal.id}/edit`);
    const fields = [
      "email_verification",
      "preverify",
      "sms_verification",
      "sponsor_required",
      "code_ttl",
      "code_attempts",
      "resend_cooldown",
      "sends_per_recipient",
      "sends_per_device",
      "sends_per_address",
      "preverify_minutes",
      "sponsor_window",
      "sms_provider",
      "sms_countries",
      "sms_url",
      "sms_method",
      "sms_template",
      "sms_username",
      "sms_from",
      "sms_auth_header",
      "sms_secret",
      "sponsor_domains",
      "sponsor_emails",
      "sponsor_durations",
    ];
    for (const name of fields) assert.match(form.text, new RegExp(`name="${name}"`), name);
    const values = {
      name: "Verified by SMS",
      network_id: String(lab.networkId),
      enabled: "1",
      vendor: "mikrotik",
      methods: ["registration"],
      language: "auto",
      color_primary: "#1b5e9e",
      color_background: "#f4f6f8",
      generic_login_param: "login_url",
      generic_username_field: "username",
      generic_password_field: "password",
      clickthrough_validity: "86400",
      clickthrough_session_timeout: "3600",
      registration_validity: "604800",
      guest_group_id: String(lab.groupId),
      email_verification: "off",
      sms_verification: "1",
      code_ttl: "300",
      code_attempts: "4",
      resend_cooldown: "45",
      sends_per_recipient: "3",
      sends_per_device: "6",
      sends_per_address: "90",
      preverify_minutes: "10",
      sponsor_window: "3600",
      sms_provider: "generic",
      sms_countries: "+34, +351",
      sms_url: "https://sms.example.net/send",
      sms_method: "PUT",
      sms_template: '{"to":"{to}","text":"{text}"}',
      sms_username: "",
      sms_from: "Lobby",
      sms_auth_header: "X-Api-Key",
      sms_secret: "sms-secret-77",
      sponsor_domains: "",
      sponsor_emails: "",
      sponsor_durations: "3600, 7200",
    };
    const saved = await admin.post(`/console/portals/${portal.id}`, values);
    assert.equal(saved.status, 303, saved.text.slice(0, 2000));
    const stored = await lab.server.core.portals.get(lab.accountId, portal.id);
    assert.equal(stored.sms_verification, true);
    assert.equal(stored.sponsor_required, false);
    assert.equal(stored.code_ttl, 300);
    assert.equal(stored.sends_per_address, 90);
    assert.deepEqual(stored.sms_countries, ["+34", "+351"]);
    assert.equal(stored.sms_method, "PUT");
    assert.equal(stored.sms_secret_set, true);
    assert.deepEqual(stored.sponsor_durations, [3_600, 7_200]);
    const again = await admin.get(`/console/portals/${portal.id}/edit`);
    assert.doesNotMatch(again.text, /sms-secret-77/);
    assert.match(again.text, /Replace the auth token/);
    // Two ways at once, or a bad prefix: refused with the field named.
    await admin.get(`/console/portals/${portal.id}/edit`);
    const both = await admin.post(`/console/portals/${portal.id}`, {
      ...values,
      sms_secret: "",
      email_verification: "code",
    });
    assert.equal(both.status, 400);
    assert.match(both.text, /only one of email verification, SMS verification and sponsor approval/);
    await admin.get(`/console/portals/${portal.id}/edit`);
    const prefix = await admin.post(`/console/portals/${portal.id}`, {
      ...values,
      sms_secret: "",
      sms_countries: "34",
    });
    assert.equal(prefix.status, 400);
    assert.match(prefix.text, /calling-code prefixes like \+34/);
  });
});
