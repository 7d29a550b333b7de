// SMS verification and the send caps over real HTTP (issue 27 points 3 and 4): an SMS provider
// cannot run here, so a local HTTP server plays it (the webhook tests' Receiver) and records each
// request; Wisp sends the generic HTTP/JSON shape and Twilio's documented REST shape to it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { codeIn } from "../support/smtp.ts";
import { Receiver } from "../webhooks/receiver.ts";
import { GuestDevice, type GuestLab, handoffOf, startGuestLab } from "./guests-support.ts";

const GENEROUS = { sends_per_address: 100_000, sends_per_device: 1_000, sends_per_recipient: 100 };
const TWILIO_SID = `AC${"0123456789abcdef".repeat(2)}`;

describe("verified guests: SMS codes", () => {
  let lab: GuestLab;
  let provider: Receiver;
  before(async () => {
    lab = await startGuestLab();
    provider = await Receiver.start();
    provider.respond = (request) => {
      if (request.path === "/down") return { status: 500, body: "internal error" };
      if (request.path.startsWith("/garbage")) return { status: 200, body: "<html>hello</html>" };
      if (request.path.startsWith("/twilio"))
        return {
          status: 201,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ account_sid: TWILIO_SID, sid: `SM${"ab".repeat(16)}`, status: "queued" }),
        };
      return { status: 202, body: '{"accepted":true}' };
    };
  });
  after(async () => {
    await lab?.stop();
    await provider?.close();
  });

  const generic = (path: string, more: Record<string, unknown> = {}) =>
    lab.portal({
      sms_verification: true,
      sms_provider: "generic",
      sms_url: provider.url(path),
      sms_template: '{"to":"{to}","message":"{text}","sender":"{from}"}',
      sms_from: "Hotel",
      sms_auth_header: "X-Api-Key",
      sms_secret: "k3y-not-shown",
      sms_countries: ["+34", "+33"],
      ...GENEROUS,
      ...more,
    });

  test("generic gateway: the number normalised to E.164, the code in a JSON body, the secret in its header", async () => {
    const portal = await generic("/sms");
    const guest = new GuestDevice(lab, portal);
    const page = await guest.open();
    assert.match(page.text, /<input type="tel" id="reg-phone" name="phone" autocomplete="tel" required/);
    assert.equal((await guest.register({ email: "sms@example.org", phone: "+34 612 34 56 78" })).status, 303);
    await provider.waitFor(() => provider.at("/sms").length === 1);
    const [sent] = provider.at("/sms");
    assert.equal(sent?.headers["x-api-key"], "k3y-not-shown");
    assert.match(String(sent?.headers["content-type"]), /^application\/json/);
    assert.equal(sent?.json.to, "+34612345678");
    assert.equal(sent?.json.sender, "Hotel");
    assert.match(
      sent?.json.message,
      /^\d{6} is your Wi-Fi code for Hotel Lobby\. It works for 10 minutes\.$/,
    );
    const view = await guest.view();
    assert.match(view.text, /We sent a 6-digit code by SMS to \+34612345678/);
    assert.equal((await guest.act("code", { code: codeIn(sent?.json.message) })).status, 303);
    const handoff = handoffOf((await guest.act("connect")).text);
    assert.match(handoff.fields.username ?? "", /^guest-/);
    // The portal as operators read it: the secret is write-only.
    const stored = await lab.server.core.portals.get(lab.accountId, portal.id);
    assert.equal(stored.sms_secret_set, true);
    assert.ok(!JSON.stringify(stored).includes("k3y-not-shown"));
  });

  test("Twilio: POST /2010-04-01/Accounts/{sid}/Messages.json, Basic auth, To/From/Body form", async () => {
    const portal = await lab.portal({
      sms_verification: true,
      sms_provider: "twilio",
      sms_url: provider.url("/twilio"),
      sms_username: TWILIO_SID,
      sms_secret: "auth-token-7",
      sms_from: "+15005550006",
      ...GENEROUS,
    });
    const guest = new GuestDevice(lab, portal);
    assert.equal(
      (await guest.register({ email: "tw@example.org", phone: "0033 6 12 34 56 78" })).status,
      303,
    );
    const path = `/twilio/2010-04-01/Accounts/${TWILIO_SID}/Messages.json`;
    await provider.waitFor(() => provider.at(path).length === 1);
    const [sent] = provider.at(path);
    assert.equal(
      sent?.headers.authorization,
      `Basic ${Buffer.from(`${TWILIO_SID}:auth-token-7`).toString("base64")}`,
    );
    assert.equal(sent?.headers["content-type"], "application/x-www-form-urlencoded");
    const form = new URLSearchParams(sent?.body);
    assert.equal(form.get("To"), "+33612345678");
    assert.equal(form.get("From"), "+15005550006");
    assert.equal((await guest.act("code", { code: codeIn(form.get("Body") ?? "") })).status, 303);
  });

  test("bad numbers: malformed, invalid, missing, or in a country the portal does not allow", async () => {
    const portal = await generic("/sms-bad");
    const guest = new GuestDevice(lab, portal);
    for (const [phone, message] of [
      ["+44 7400 123456", /cannot be sent by SMS to numbers of that country/],
      ["+34 12", /mobile number in international format/],
      ["612 34 56 78", /mobile number in international format/],
      ["call me", /mobile number in international format/],
      ["", /mobile number in international format/],
      ["+34 612 34 56 78\r\nX: y", /mobile number in international format/],
    ] as const) {
      const answer = await guest.register({ email: "bad-phone@example.org", phone });
      assert.equal(answer.status, 400, phone);
      assert.match(answer.text, message, phone);
    }
    assert.equal(provider.at("/sms-bad").length, 0, "nothing sent");
  });

  test("a gateway answering 500, or garbage: the page says so, the message is queued for the job queue", async () => {
    const down = await generic("/down");
    const guest = new GuestDevice(lab, down);
    assert.equal(
      (await guest.register({ email: "down@example.org", phone: "+34 612 34 56 01" })).status,
      303,
    );
    const page = await guest.view();
    assert.match(page.text, /could not be sent right now; we keep trying/);
    const twilioGarbage = await lab.portal({
      sms_verification: true,
      sms_provider: "twilio",
      sms_url: provider.url("/garbage"),
      sms_username: TWILIO_SID,
      sms_secret: "t",
      sms_from: "+15005550006",
      ...GENEROUS,
    });
    const other = new GuestDevice(lab, twilioGarbage);
    assert.equal(
      (await other.register({ email: "garbage@example.org", phone: "+34 612 34 56 02" })).status,
      303,
    );
    assert.match((await other.view()).text, /could not be sent right now/);
    const jobs = await lab.server.core.database.db
      .selectFrom("jobs")
      .select(["kind", "status"])
      .where("kind", "=", "guest.deliver")
      .execute();
    assert.equal(jobs.filter((j) => j.status === "queued").length, 2, "two retries queued");
    // Nothing was granted: no code works, no user exists for either guest.
    const users = await lab.server.core.users.list(lab.accountId, { search: "down@" }, { page: 1, limit: 5 });
    assert.equal(users.total, 0);
    assert.equal((await guest.act("connect")).status, 403);
  });

  test("caps: per phone number and per device per day, with Retry-After and the wait on the page", async () => {
    const portal = await generic("/sms-caps", { sends_per_recipient: 2, sends_per_device: 3 });
    const phone = "+34 612 34 56 10";
    for (let i = 0; i < 2; i++) {
      const guest = new GuestDevice(lab, portal);
      assert.equal((await guest.register({ email: `cap${i}@example.org`, phone })).status, 303);
    }
    const third = new GuestDevice(lab, portal);
    const refused = await third.register({ email: "cap3@example.org", phone });
    assert.equal(refused.status, 429);
    const retry = Number(refused.headers.get("retry-after"));
    assert.ok(retry > 86_000 && retry <= 86_400, `Retry-After ${retry}`);
    assert.match(refused.text, /Too many messages were asked for\. Try again in \d+ hours?/);

    // One device, many numbers: the device's cap.
    const device = "AA:BB:CC:27:FF:01";
    for (let i = 0; i < 3; i++) {
      const guest = new GuestDevice(lab, portal, device);
      assert.equal(
        (await guest.register({ email: `dev${i}@example.org`, phone: `+34 612 34 57 0${i}` })).status,
        303,
      );
    }
    const fourth = new GuestDevice(lab, portal, device);
    assert.equal(
      (await fourth.register({ email: "dev4@example.org", phone: "+34 612 34 57 09" })).status,
      429,
    );
    assert.equal(provider.at("/sms-caps").length, 5, "only the allowed sends reached the gateway");
  });
});

describe("verified guests: caps per client address and per account", () => {
  let lab: GuestLab;
  before(async () => {
    lab = await startGuestLab({ GUEST_SENDS_PER_ACCOUNT_HOUR: "6" });
  });
  after(() => lab?.stop());

  test("a thousand registrations from one address stop at the address's cap; the account's hourly budget holds", async () => {
    const perAddress = await lab.portal({
      email_verification: "code",
      sends_per_address: 4,
      sends_per_device: 1_000,
    });
    let accepted = 0;
    let refused = 0;
    // Bounded: the loop stops at the first refusals (a thousand would be refused alike).
    for (let i = 0; i < 20 && refused < 3; i++) {
      const answer = await new GuestDevice(lab, perAddress).register({ email: `flood${i}@example.org` });
      if (answer.status === 303) accepted++;
      else {
        assert.equal(answer.status, 429);
        assert.ok(Number(answer.headers.get("retry-after")) > 0);
        refused++;
      }
    }
    assert.equal(accepted, 4);
    assert.equal(refused, 3);

    // The account's budget (6 an hour here) binds every portal of the account, whatever their caps.
    const other = await lab.portal({ email_verification: "code", sends_per_address: 100_000 });
    let sent = 0;
    for (let i = 0; i < 5; i++) {
      const answer = await new GuestDevice(lab, other).register({ email: `budget${i}@example.org` });
      if (answer.status === 303) sent++;
      else {
        assert.equal(answer.status, 429);
        const retry = Number(answer.headers.get("retry-after"));
        assert.ok(retry > 3_000 && retry <= 3_600, `Retry-After ${retry}`);
      }
    }
    assert.equal(sent, 2, "4 + 2 = the account's 6 an hour");
    assert.equal(lab.smtp.mails.length, 6);
  });
});
