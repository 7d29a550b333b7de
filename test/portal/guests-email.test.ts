// Email verification over real HTTP (issue 27 points 1, 2, 4 and the bad input): a started Wisp
// mails through an SMTP server run by the test (smtp-server), the test reads the code or link out
// of the received message and drives the guest's page with a cookie jar, as a browser without
// JavaScript would.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { codeIn, linkIn } from "../support/smtp.ts";
import { eventsOf, GuestDevice, type GuestLab, handoffOf, local, startGuestLab } from "./guests-support.ts";

const GENEROUS = { sends_per_address: 100_000, sends_per_device: 1_000, sends_per_recipient: 100 };

describe("verified guests: email code and link", () => {
  let lab: GuestLab;
  before(async () => {
    lab = await startGuestLab();
  });
  after(() => lab?.stop());

  test("a 6-digit code by email, in the portal's language and branding, then the hand-off", async () => {
    const portal = await lab.portal({ email_verification: "code", language: "es", ...GENEROUS });
    const guest = new GuestDevice(lab, portal);
    const registered = await guest.register({ email: "Ana.Garcia@Example.org" });
    assert.equal(registered.status, 303, registered.text);
    const mail = await lab.smtp.waitFor((m) => m.to.includes("ana.garcia@example.org"));
    assert.match(mail.subject, /^Tu código de Wi-Fi: \d{6}$/);
    assert.match(mail.text, /Hola Ana García, tu código para conectarte en Hotel Lobby es:/);
    assert.match(mail.html, /<h1[^>]*>Hotel Lobby<\/h1>/);
    assert.match(mail.html, /#1b5e9e/, "the portal's colour");
    assert.match(mail.raw, /^From: "?Guest Wi-Fi"? <wifi@example\.net>/m);
    const code = codeIn(mail.text);
    assert.match(mail.html, new RegExp(`>${code}<`));

    const page = await guest.view();
    assert.equal(page.status, 200);
    assert.match(page.text, /Hemos enviado un código de 6 cifras a ana\.garcia@example\.org/);
    assert.doesNotMatch(page.text, new RegExp(code), "the code is never on the page");
    const users = () =>
      lab.server.core.users.list(lab.accountId, { search: "guest-" }, { page: 1, limit: 100 });
    const before = (await users()).total;

    const wrong = await guest.act("code", { code: code === "000000" ? "111111" : "000000" });
    assert.equal(wrong.status, 400);
    assert.match(wrong.text, /Ese código no es correcto\. Quedan 4 intentos/);
    assert.equal((await users()).total, before, "nothing granted for a wrong code");

    const right = await guest.act("code", { code: `${code.slice(0, 3)} ${code.slice(3)}` });
    assert.equal(right.status, 303);
    const verified = await guest.view();
    assert.match(
      verified.text,
      /<form id="handoff" method="post" action="\/portal\/\d+\/guest\/[^"]+\/connect">/,
    );
    const handoff = await guest.act("connect");
    assert.equal(handoff.status, 200);
    const sent = handoffOf(handoff.text);
    assert.equal(sent.action, "http://10.5.50.1/login");
    assert.match(sent.fields.username ?? "", new RegExp(`^guest-${portal.id}-[0-9a-f]{16}$`));
    const user = (await users()).data.find((u) => u.email === "ana.garcia@example.org");
    assert.ok(user, "the guest's user exists once verified");
    const verifiedEvents = await eventsOf(lab, "guest.verified");
    assert.ok(verifiedEvents.some((e) => e.email === "ana.garcia@example.org" && e.method === "email_code"));

    // The code is single use: the page is verified now, and the same code does nothing more.
    const again = await guest.act("code", { code });
    assert.equal(again.status, 303);
    const stored = await lab.server.core.database.db
      .selectFrom("guest_verifications")
      .select(["secret_hash", "status"])
      .where("account_id", "=", lab.accountId)
      .where("email", "=", "ana.garcia@example.org")
      .executeTakeFirstOrThrow();
    assert.equal(stored.status, "verified");
    assert.equal(stored.secret_hash, null, "the spent code's digest is gone");
  });

  test("codes are stored as keyed digests; guessing locks the code; a new one replaces it", async () => {
    const portal = await lab.portal({
      email_verification: "code",
      code_attempts: 3,
      resend_cooldown: 10,
      ...GENEROUS,
    });
    const guest = new GuestDevice(lab, portal);
    assert.equal((await guest.register({ email: "guesser@example.org" })).status, 303);
    const code = codeIn((await lab.smtp.waitFor((m) => m.to.includes("guesser@example.org"))).text);
    const row = await lab.server.core.database.db
      .selectFrom("guest_verifications")
      .selectAll()
      .where("account_id", "=", lab.accountId)
      .where("email", "=", "guesser@example.org")
      .executeTakeFirstOrThrow();
    assert.match(row.secret_hash ?? "", /^[0-9a-f]{64}$/);
    assert.ok(!JSON.stringify(row).includes(code), "the code is not stored in clear");

    const wrong = code === "123456" ? "654321" : "123456";
    assert.equal((await guest.act("code", { code: wrong })).status, 400);
    assert.equal((await guest.act("code", { code: "abc" })).status, 400, "garbage counts as a try");
    const third = await guest.act("code", { code: wrong });
    assert.equal(third.status, 429);
    assert.match(third.text, /Too many wrong codes/);
    const late = await guest.act("code", { code });
    assert.equal(late.status, 429, "the right code no longer works once locked");
    assert.match(late.text, /Too many wrong codes/);

    // Asking again at once: the cooldown, with Retry-After and the wait on the page.
    const soon = await guest.act("resend");
    assert.equal(soon.status, 429);
    const retry = Number(soon.headers.get("retry-after"));
    assert.ok(retry >= 1 && retry <= 10, `Retry-After ${retry}`);
    assert.match(soon.text, /Try again in \d+ s/);
    // After the cooldown (the core's clock moved on): a new code, unlocked, that works.
    const token = guest.page.split("/").pop() ?? "";
    const portalView = await lab.server.core.portals.forGuests(portal.id);
    assert.ok(portalView);
    const resent = await lab.server.core.guests.resend(portalView, token, Math.floor(Date.now() / 1000) + 11);
    assert.deepEqual(resent, { ok: true, delivered: true });
    const mails = lab.smtp.to("guesser@example.org");
    assert.equal(mails.length, 2);
    const fresh = codeIn(mails[1]?.text ?? "");
    assert.equal(
      (await guest.act("code", { code })).status,
      fresh === code ? 303 : 400,
      "the old code is replaced",
    );
    assert.equal((await guest.act("code", { code: fresh })).status, 303);
  });

  test("an expired code is refused, and says so", async () => {
    const portal = await lab.portal({ email_verification: "code", code_ttl: 60, ...GENEROUS });
    const guest = new GuestDevice(lab, portal);
    await guest.register({ email: "slow@example.org" });
    const code = codeIn((await lab.smtp.waitFor((m) => m.to.includes("slow@example.org"))).text);
    const view = await lab.server.core.portals.forGuests(portal.id);
    assert.ok(view);
    const token = guest.page.split("/").pop() ?? "";
    const result = await lab.server.core.guests.checkCode(
      view,
      token,
      code,
      Math.floor(Date.now() / 1000) + 61,
    );
    assert.deepEqual(result, { ok: false, problem: "code_expired" });
  });

  test("a one-time link: confirmed by a POST, single use; forged and reused links refused", async () => {
    const portal = await lab.portal({ email_verification: "link", ...GENEROUS });
    const guest = new GuestDevice(lab, portal);
    assert.equal((await guest.register({ email: "linker@example.org" })).status, 303);
    const waiting = await guest.view();
    assert.match(waiting.text, /We sent a link to linker@example\.org/);
    assert.match(
      waiting.text,
      /<meta http-equiv="refresh" content="5;url=\/portal\/\d+\/guest\//,
      "it looks again by itself",
    );
    const mail = await lab.smtp.waitFor((m) => m.to.includes("linker@example.org"));
    assert.equal(mail.subject, "Confirm your email for the Wi-Fi");
    const link = local(lab, linkIn(mail.text, "/confirm/"));
    assert.match(mail.html, /href="http[^"]+\/confirm\//);

    // Another browser (the mail app's) opens it: a confirmation page; a GET alone does nothing.
    const mailApp = new GuestDevice(lab, portal);
    const opened = await mailApp.client.get(link);
    assert.equal(opened.status, 200);
    assert.match(opened.text, /Press the button to confirm linker@example\.org/);
    assert.match((await guest.view()).text, /We sent a link/, "still waiting after a GET");
    const forged = `${link.slice(0, -6)}AAAAAA`;
    assert.equal((await mailApp.client.post(forged, {})).status, 410);
    const confirmed = await mailApp.client.post(link, {});
    assert.equal(confirmed.status, 200);
    assert.match(confirmed.text, /Your email is confirmed/);
    assert.equal((await mailApp.client.post(link, {})).status, 410, "used twice");
    assert.equal((await mailApp.client.get(link)).status, 410);

    const verified = await guest.view();
    assert.match(verified.text, /You are verified/);
    const handoff = await guest.act("connect");
    assert.equal(handoffOf(handoff.text).action, "http://10.5.50.1/login");
  });

  test("a link used after it expired is refused", async () => {
    const portal = await lab.portal({ email_verification: "link", code_ttl: 60, ...GENEROUS });
    const guest = new GuestDevice(lab, portal);
    await guest.register({ email: "late-link@example.org" });
    const mail = await lab.smtp.waitFor((m) => m.to.includes("late-link@example.org"));
    const token = linkIn(mail.text, "/confirm/").split("/").pop() ?? "";
    const view = await lab.server.core.portals.forGuests(portal.id);
    assert.ok(view);
    const result = await lab.server.core.guests.confirmLink(view, token, Math.floor(Date.now() / 1000) + 61);
    assert.deepEqual(result, { ok: false, problem: "expired" });
  });

  test("header injection and hostile fields: refused before any mail, nothing stored", async () => {
    const portal = await lab.portal({ email_verification: "code", ...GENEROUS });
    const guest = new GuestDevice(lab, portal);
    const mailsBefore = lab.smtp.mails.length;
    for (const [fields, message] of [
      [{ email: "a@example.org\r\nBcc: victim@example.com" }, /valid email address/],
      [{ email: "a@example.org\nSubject: hi" }, /valid email address/],
      [{ email: "a@example.org%0d%0aBcc:x@y.z" }, /valid email address/],
      [{ email: "ok@example.org", name: "Ana\r\nBcc: victim@example.com" }, /enter your name/],
      [{ email: "ok@example.org", name: "<img src=x>" }, /enter your name/],
      [{ email: "ok@example.org", terms: "" }, /accept the terms/],
    ] as const) {
      const answer = await guest.register(fields);
      assert.equal(answer.status, 400, JSON.stringify(fields));
      assert.match(answer.text, message);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(lab.smtp.mails.length, mailsBefore, "no mail sent");
    const rows = await lab.server.core.database.db
      .selectFrom("guest_verifications")
      .select("id")
      .where("account_id", "=", lab.accountId)
      .where("portal_id", "=", portal.id)
      .execute();
    assert.equal(rows.length, 0);
  });

  test("pre-verification login: a short credential once per device per day, ended by the code", async () => {
    const portal = await lab.portal({
      email_verification: "code",
      preverify: true,
      preverify_minutes: 7,
      ...GENEROUS,
    });
    const guest = new GuestDevice(lab, portal);
    await guest.register({ email: "inbox@example.org" });
    const page = await guest.view();
    assert.match(page.text, /Go online for 7 minutes to read my email/);
    const short = await guest.act("preverify");
    assert.equal(short.status, 200);
    const handed = handoffOf(short.text).fields;
    const username = handed.username ?? "";
    assert.match(handed.dst ?? "", /\/portal\/\d+\/guest\//, "lands back on the request page");
    const voucher = await lab.server.core.vouchers.findByCode(lab.accountId, username);
    assert.ok(voucher, "a voucher credential");
    assert.equal(voucher.validity, 420);
    assert.equal(voucher.session_timeout, 420);
    assert.equal(voucher.usage_limit, 1);
    assert.doesNotMatch((await guest.view()).text, /Go online for/, "offered once");
    const twice = await guest.act("preverify");
    assert.equal(twice.status, 429, "one per device per day");
    assert.ok(Number(twice.headers.get("retry-after")) > 80_000);
    // Another registration from the same device the same day: no second short login.
    const other = new GuestDevice(lab, portal, guest.mac);
    await other.register({ email: "inbox2@example.org" });
    assert.equal((await other.act("preverify")).status, 429);

    const code = codeIn((await lab.smtp.waitFor((m) => m.to.includes("inbox@example.org"))).text);
    assert.equal((await guest.act("code", { code })).status, 303);
    assert.equal(handoffOf((await guest.act("connect")).text).action, "http://10.5.50.1/login");
    const after = await lab.server.core.vouchers.findByCode(lab.accountId, username);
    assert.equal(after?.status, "disabled", "the full login replaces the short one");
    const radius = await lab.server.core.aaa.precheck(lab.accountId, {
      username,
      password: username,
      clientMac: guest.mac,
    });
    assert.equal(radius.accepted, false, "RADIUS refuses the short credential from now on");
  });
});

describe("verified guests: a mail server that is down or slow", () => {
  let lab: GuestLab;
  before(async () => {
    lab = await startGuestLab();
  });
  after(() => lab?.stop());

  test("down: the page says so at once, the job queue retries, the guest gets a working code", async () => {
    const portal = await lab.portal({ email_verification: "code", ...GENEROUS });
    await lab.smtp.down();
    const guest = new GuestDevice(lab, portal);
    const started = Date.now();
    assert.equal((await guest.register({ email: "patient@example.org" })).status, 303);
    assert.ok(Date.now() - started < 5_000, "no long wait on a refused connection");
    assert.match((await guest.view()).text, /could not be sent right now; we keep trying/);
    const queued = await lab.server.core.database.db
      .selectFrom("jobs")
      .select(["id", "run_at"])
      .where("kind", "=", "guest.deliver")
      .where("status", "=", "queued")
      .execute();
    assert.equal(queued.length, 1);
    assert.ok(Number(queued[0]?.run_at) > Date.now() + 20_000, "retried later, not in a tight loop");
    // The server is back; the retry is made due now (the schedule's first step is 30 s) and the
    // worker of the started server delivers a fresh code.
    await lab.smtp.up();
    await lab.server.core.database.db
      .updateTable("jobs")
      .set({ run_at: Date.now() })
      .where("id", "=", Number(queued[0]?.id))
      .execute();
    const mail = await lab.smtp.waitFor((m) => m.to.includes("patient@example.org"), 15_000);
    assert.doesNotMatch((await guest.view()).text, /could not be sent/);
    assert.equal((await guest.act("code", { code: codeIn(mail.text) })).status, 303);
  });

  test("slow: bounded by SMTP_TIMEOUT_MS; refusing (451): queued the same way", async () => {
    const portal = await lab.portal({ email_verification: "code", ...GENEROUS });
    lab.smtp.delayMs = 20_000;
    const guest = new GuestDevice(lab, portal);
    const started = Date.now();
    assert.equal((await guest.register({ email: "slowpoke@example.org" })).status, 303);
    const took = Date.now() - started;
    assert.ok(took < 6_000, `the page answered in ${took} ms (SMTP_TIMEOUT_MS=1000)`);
    assert.match((await guest.view()).text, /could not be sent right now/);
    lab.smtp.delayMs = 0;
    lab.smtp.refuse = true;
    const other = new GuestDevice(lab, portal);
    assert.equal((await other.register({ email: "refused@example.org" })).status, 303);
    assert.match((await other.view()).text, /could not be sent right now/);
    lab.smtp.refuse = false;
  });
});

describe("SMTP settings", () => {
  test("documented env vars; bad values refused with a clear message, the password never repeated", async () => {
    const { ConfigError, loadConfig } = await import("../../src/config.ts");
    const base = {
      DATA_DIR: "/tmp/wisp-smtp-config",
      SMTP_HOST: "mail.example.net",
      SMTP_FROM: "wifi@example.net",
    };
    assert.equal(loadConfig({ DATA_DIR: "/tmp/x" }).smtp, undefined, "no SMTP_HOST: no mail");
    const starttls = loadConfig(base).smtp;
    assert.deepEqual(
      { port: starttls?.port, security: starttls?.security, timeout: starttls?.timeoutMs },
      { port: 587, security: "starttls", timeout: 10_000 },
    );
    assert.equal(loadConfig({ ...base, SMTP_SECURITY: "tls" }).smtp?.port, 465);
    const full = loadConfig({
      ...base,
      SMTP_PORT: "2525",
      SMTP_USER: "u",
      SMTP_PASSWORD: "p@ss",
      SMTP_FROM: "Wi-Fi <wifi@example.net>",
    });
    assert.equal(full.smtp?.user, "u");
    assert.equal(loadConfig({ ...base, GUEST_SENDS_PER_ACCOUNT_HOUR: "40" }).guestSendsPerAccountHour, 40);
    for (const [env, message] of [
      [{ SMTP_SECURITY: "ssl" }, /SMTP_SECURITY must be one of starttls, tls, none/],
      [{ SMTP_FROM: "wifi@example.net\r\nBcc: x@y.z" }, /SMTP_FROM must be an address/],
      [{ SMTP_FROM: "" }, /SMTP_FROM must be an address/],
      [{ SMTP_USER: "u" }, /SMTP_USER and SMTP_PASSWORD go together/],
      [{ SMTP_PASSWORD: "secret-pw" }, /SMTP_USER and SMTP_PASSWORD go together/],
      [{ SMTP_PORT: "0" }, /SMTP_PORT must be between 1 and 65535/],
      [{ SMTP_TIMEOUT_MS: "5" }, /SMTP_TIMEOUT_MS must be between/],
      [{ SMTP_HOST: "bad host!" }, /SMTP_HOST must be an IP address/],
      [{ GUEST_SENDS_PER_ACCOUNT_HOUR: "0" }, /GUEST_SENDS_PER_ACCOUNT_HOUR must be between/],
    ] as const) {
      assert.throws(
        () => loadConfig({ ...base, ...env }),
        (error: Error) =>
          error instanceof ConfigError && message.test(error.message) && !error.message.includes("secret-pw"),
        JSON.stringify(env),
      );
    }
  });
});
