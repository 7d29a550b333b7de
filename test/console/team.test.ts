// The team and console sessions (issue 29 points 1 and 4), over HTTP on SQLite and PostgreSQL: an
// owner's invitation mailed through a real SMTP server (test/support/smtp.ts) and used on its link
// (tampered, reused and expired links refused, an existing admin not invited); a role change seen by
// the member's very next request; removal ending every session of the member at once; the last
// owner kept (also with two owners demoting each other at the same moment); the session list with
// device and address, ended one by one by their admin or by an owner; idle and absolute limits
// (CONSOLE_SESSION_IDLE_MINUTES=30, CONSOLE_SESSION_MAX_HOURS=2) crossed with a settable clock.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import { withAdminTables } from "../../src/core/admins/tables.ts";
import { ConflictError } from "../../src/core/shared/errors.ts";
import { ConsoleClient } from "../support/browser.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { TestSmtp } from "../support/smtp.ts";

const PASSWORD = "team test password";
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
const CHROME =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";

const smtp = await TestSmtp.start();
after(() => smtp.close());

for (const { dialect, skip } of await dialects()) {
  describe(`team and console sessions on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let account: AccountRow;
    let owner: ConsoleClient;
    const real = Date.now;

    before(async () => {
      server = await startTestServer({
        dialect,
        env: { ...smtp.env(), CONSOLE_SESSION_IDLE_MINUTES: "30", CONSOLE_SESSION_MAX_HOURS: "2" },
      });
      account = await server.account("default");
      await server.core.admins.create(account, { email: `owner-${dialect}@example.com`, password: PASSWORD });
      owner = new ConsoleClient(server.url, { "user-agent": FIREFOX });
      assert.equal((await owner.login(`owner-${dialect}@example.com`, PASSWORD)).status, 303);
    });
    after(async () => {
      server.core.admins.clock = real;
      await server?.stop();
    });

    const idOf = async (email: string) =>
      (await server.core.admins.list(account.id)).find((a) => a.email === email)?.id as number;

    async function invite(email: string, role: string): Promise<string> {
      await owner.get("/console/team");
      const sent = await owner.post("/console/team/invites", { email, role });
      assert.equal(sent.status, 303, sent.text.slice(0, 500));
      assert.equal(sent.location, "/console/team?notice=invite-sent");
      const mail = smtp.to(email).at(-1);
      assert.ok(mail, `a mail to ${email}`);
      const token = /\/console\/invite\/([A-Za-z0-9_-]{43})\b/.exec(mail.text)?.[1];
      assert.ok(token, mail.text);
      return token;
    }

    test("an invitation is mailed, used once on its link, and makes a member with the invited role", async () => {
      const email = `desk-${dialect}@example.com`;
      const token = await invite(email, "help_desk");
      const mail = smtp.to(email).at(-1)!;
      assert.match(mail.subject, /Invitation to the Wisp console of default/);
      assert.match(mail.text, /as Help desk/);
      assert.ok(mail.html.includes(`/console/invite/${token}`));

      const invitee = new ConsoleClient(server.url);
      const tampered = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
      for (const bad of [tampered, token.slice(0, 20), "x".repeat(43)]) {
        const page = await invitee.get(`/console/invite/${bad}`);
        assert.equal(page.status, 400);
        assert.match(page.text, /This invitation link is not valid: it was changed, cut short/);
      }
      const page = await invitee.get(`/console/invite/${token}`);
      assert.equal(page.status, 200);
      assert.match(
        page.text,
        new RegExp(`invited as <strong>Help desk</strong> with the email\\s+<strong>${email}`),
      );
      const short = await invitee.post(`/console/invite/${token}`, {
        password: "short",
        password_confirm: "short",
      });
      assert.equal(short.status, 400);
      assert.match(short.text, /Password must be 12-200 characters/);
      const mismatch = await invitee.post(`/console/invite/${token}`, {
        password: PASSWORD,
        password_confirm: `${PASSWORD}!`,
      });
      assert.equal(mismatch.status, 400);
      assert.match(mismatch.text, /does not match the password/);
      assert.equal(await idOf(email), undefined, "nothing made by a refused form");
      const joined = await invitee.post(`/console/invite/${token}`, {
        password: PASSWORD,
        password_confirm: PASSWORD,
      });
      assert.equal(joined.status, 303, joined.text.slice(0, 500));
      assert.equal(joined.location, "/console/login?notice=invite-accepted");

      for (const again of [
        await new ConsoleClient(server.url).get(`/console/invite/${token}`),
        await invitee.post(`/console/invite/${token}`, { password: PASSWORD, password_confirm: PASSWORD }),
      ]) {
        assert.equal(again.status, 400);
        assert.match(again.text, /This invitation was already used: an invitation works once/);
      }
      const member = new ConsoleClient(server.url);
      assert.equal((await member.login(email, PASSWORD)).status, 303);
      assert.equal((await member.get("/console/users")).status, 200);
      assert.equal((await member.get("/console/networks/new")).status, 403);
      assert.equal((await member.get("/console/team")).status, 403);

      // An existing console user is not invited; a bad email or role is named.
      await owner.get("/console/team");
      const existing = await owner.post("/console/team/invites", {
        email: email.toUpperCase(),
        role: "admin",
      });
      assert.equal(existing.status, 400);
      assert.match(existing.text, new RegExp(`${email} is already a console user: no invitation is needed`));
      const badEmail = await owner.post("/console/team/invites", { email: "not an email", role: "admin" });
      assert.match(badEmail.text, /Email must be an email address/);
      const badRole = await owner.post("/console/team/invites", { email: "x@example.com", role: "king" });
      assert.match(badRole.text, /Role must be one of owner, admin/);
      assert.equal(smtp.to("x@example.com").length, 0);
    });

    test("an expired invitation is refused, a withdrawn one too; a failed mail keeps nothing", async () => {
      const token = await invite(`late-${dialect}@example.com`, "read_only");
      server.core.admins.clock = () => real() + 72 * 3_600_000 + 1000;
      try {
        const page = await new ConsoleClient(server.url).get(`/console/invite/${token}`);
        assert.equal(page.status, 400);
        assert.match(page.text, /This invitation expired on \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
      } finally {
        server.core.admins.clock = real;
      }
      const withdrawn = await invite(`gone-${dialect}@example.com`, "read_only");
      const [open] = await server.core.team.openInvitations(account.id);
      assert.equal(open?.email, `gone-${dialect}@example.com`);
      const done = await owner.post(`/console/team/invites/${open?.id}/withdraw`);
      assert.equal(done.status, 303);
      const page = await new ConsoleClient(server.url).get(`/console/invite/${withdrawn}`);
      assert.match(page.text, /This invitation was withdrawn/);

      // A mail server that refuses the message: the owner is told, and no invitation is kept.
      smtp.refuse = true;
      try {
        await owner.get("/console/team");
        const failed = await owner.post("/console/team/invites", {
          email: `nomail-${dialect}@example.com`,
          role: "admin",
        });
        assert.equal(failed.status, 502);
        assert.match(failed.text, /the invitation could not be mailed \(.+\); nothing was kept: try again/);
      } finally {
        smtp.refuse = false;
      }
      const open2 = await server.core.team.openInvitations(account.id);
      assert.ok(!open2.some((i) => i.email === `nomail-${dialect}@example.com`));
    });

    test("a role change counts from the member's next request; removal ends all their sessions", async () => {
      const email = `eng-${dialect}@example.com`;
      await server.core.admins.create(account, { email, password: PASSWORD, role: "network_engineer" });
      const id = await idOf(email);
      const laptop = new ConsoleClient(server.url, { "user-agent": FIREFOX });
      const phone = new ConsoleClient(server.url, { "user-agent": CHROME });
      await laptop.login(email, PASSWORD);
      await phone.login(email, PASSWORD);
      assert.equal((await laptop.get("/console/networks/new")).status, 200);

      await owner.get("/console/team");
      const changed = await owner.post(`/console/team/${id}/role`, { role: "read_only" });
      assert.equal(changed.location, "/console/team?notice=role-changed");
      const next = await laptop.get("/console/networks/new");
      assert.equal(next.status, 403, "the very next request has the new role");
      assert.match(next.text, /Your role \(Read-only\) does not allow this/);
      // A form the role no longer allows, posted from a page loaded before the change.
      assert.equal((await phone.post("/console/networks", { name: "late", nas_ip: "10.9.9.9" })).status, 403);

      await owner.get(`/console/team/${id}/remove`);
      const removed = await owner.post(`/console/team/${id}/remove`);
      assert.equal(removed.location, "/console/team?notice=member-removed");
      for (const client of [laptop, phone]) {
        const after = await client.get("/console/users");
        assert.equal(after.status, 303);
        assert.match(after.location ?? "", /^\/console\/login/);
      }
      const rows = await withAdminTables(server.core.database.db)
        .selectFrom("console_sessions")
        .select("id")
        .where("admin_id", "=", id)
        .execute();
      assert.equal(rows.length, 0);
      assert.equal((await new ConsoleClient(server.url).login(email, PASSWORD)).status, 401);
    });

    test("the last owner can be neither demoted nor removed, even by two owners at once", async () => {
      const ownerId = await idOf(`owner-${dialect}@example.com`);
      await owner.get("/console/team");
      const demote = await owner.post(`/console/team/${ownerId}/role`, { role: "admin" });
      assert.equal(demote.status, 409);
      assert.match(demote.text, /is the account&#39;s last owner: make another member an owner first/);
      const remove = await owner.post(`/console/team/${ownerId}/remove`);
      assert.equal(remove.status, 409);
      assert.equal((await server.core.admins.list(account.id)).find((a) => a.id === ownerId)?.role, "owner");

      const second = `owner2-${dialect}@example.com`;
      await server.core.admins.create(account, { email: second, password: PASSWORD, role: "owner" });
      const secondId = await idOf(second);
      const results = await Promise.allSettled([
        server.core.team.setRole(account.id, ownerId, "admin"),
        server.core.team.setRole(account.id, secondId, "admin"),
      ]);
      assert.deepEqual(results.map((r) => r.status).sort(), ["fulfilled", "rejected"]);
      const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
      assert.ok(refused.reason instanceof ConflictError, String(refused.reason));
      const owners = (await server.core.admins.list(account.id)).filter((a) => a.role === "owner");
      assert.equal(owners.length, 1);
      // Back to the first owner, for the tests below.
      if (owners[0]?.id !== ownerId) {
        await server.core.team.setRole(account.id, ownerId, "owner");
        await server.core.team.setRole(account.id, secondId, "admin");
      }
    });

    test("an admin lists and ends their own sessions; an owner ends a member's", async () => {
      const email = `me-${dialect}@example.com`;
      await server.core.admins.create(account, { email, password: PASSWORD, role: "admin" });
      const laptop = new ConsoleClient(server.url, { "user-agent": FIREFOX });
      const phone = new ConsoleClient(server.url, { "user-agent": CHROME });
      await laptop.login(email, PASSWORD);
      await phone.login(email, PASSWORD);
      await phone.get("/console");
      const list = await laptop.get("/console/account/sessions");
      assert.equal(list.status, 200);
      assert.match(list.text, /Firefox on Linux.*\(this one\)/);
      assert.match(list.text, /Chrome on Windows/);
      assert.match(list.text, /<td>127\.0\.0\.1<\/td>/);
      assert.match(list.text, /ends after 30 minutes unused,\s+and 2 hours after its login/);
      const ids = [...list.text.matchAll(/action="\/console\/account\/sessions\/(\d+)\/end"/g)].map(
        (m) => m[1],
      );
      assert.equal(ids.length, 2);
      const phoneId = /Chrome on Windows[\s\S]*?sessions\/(\d+)\/end/.exec(list.text)?.[1];
      const ended = await laptop.post(`/console/account/sessions/${phoneId}/end`);
      assert.equal(ended.location, "/console/account/sessions?notice=session-ended");
      assert.equal((await phone.get("/console")).status, 303, "the phone's session is over");
      assert.equal((await laptop.get("/console")).status, 200, "the laptop's is not");

      // Another admin's session id is not theirs to end.
      const ownerSessions = await server.core.admins.sessionsOf(
        account.id,
        await idOf(`owner-${dialect}@example.com`),
      );
      const foreign = await laptop.post(`/console/account/sessions/${ownerSessions[0]?.id}/end`);
      assert.equal(foreign.status, 404);
      assert.equal((await owner.get("/console")).status, 200);

      // The owner ends the laptop's session from the team page.
      const id = await idOf(email);
      const theirs = await owner.get(`/console/team/${id}/sessions`);
      assert.equal(theirs.status, 200);
      const laptopId = /Firefox on Linux[\s\S]*?sessions\/(\d+)\/end/.exec(theirs.text)?.[1];
      const byOwner = await owner.post(`/console/team/${id}/sessions/${laptopId}/end`);
      assert.equal(byOwner.location, `/console/team/${id}/sessions?notice=session-ended`);
      assert.equal((await laptop.get("/console")).status, 303);
      // Ending one's own current session logs out.
      const self = await owner.get("/console/account/sessions");
      const current = /\(this one\)[\s\S]*?sessions\/(\d+)\/end/.exec(self.text)?.[1];
      const out = await owner.post(`/console/account/sessions/${current}/end`);
      assert.equal(out.location, "/console/login?notice=logged-out");
      assert.equal((await owner.get("/console")).status, 303);
      assert.equal((await owner.login(`owner-${dialect}@example.com`, PASSWORD)).status, 303);
    });

    test("sessions end after the idle limit, and at the absolute limit however much they are used", async () => {
      const email = `clock-${dialect}@example.com`;
      await server.core.admins.create(account, { email, password: PASSWORD, role: "read_only" });
      const start = real();
      let offset = 0;
      server.core.admins.clock = () => start + offset;
      try {
        const idle = new ConsoleClient(server.url);
        await idle.login(email, PASSWORD);
        offset = 29 * 60_000;
        assert.equal((await idle.get("/console")).status, 200, "29 minutes idle: still on");
        offset += 31 * 60_000;
        assert.equal((await idle.get("/console")).status, 303, "31 minutes idle after that: over");

        const busy = new ConsoleClient(server.url);
        offset = 0;
        await busy.login(email, PASSWORD);
        for (offset = 20 * 60_000; offset < 120 * 60_000; offset += 20 * 60_000) {
          assert.equal(
            (await busy.get("/console")).status,
            200,
            `used every 20 minutes: on at ${offset / 60_000}`,
          );
        }
        offset = 120 * 60_000 + 1000;
        assert.equal((await busy.get("/console")).status, 303, "2 hours after login: over");
      } finally {
        server.core.admins.clock = real;
      }
    });
  });
}
