// The parts of webhook delivery that need no database: Standard Webhooks signatures (the spec's
// test vector, and the standardwebhooks package as an independent verifier), secret encryption,
// the address rules against SSRF, URL and event-kind rules, settings, and the HTTP sender.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { Webhook } from "standardwebhooks";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { refusedAddress } from "../../src/core/webhooks/addresses.ts";
import {
  decodeKey,
  generateSecret,
  KEY_FILE,
  loadOrCreateKeyFile,
  SecretBox,
} from "../../src/core/webhooks/crypto.ts";
import { payloadOf } from "../../src/core/webhooks/delivery.ts";
import {
  checkUrl,
  DEFAULT_RETRY_SCHEDULE_MS,
  DELIVERY_TIMEOUT_MS,
  parseKinds,
  retryDelay,
  subscribes,
} from "../../src/core/webhooks/rules.ts";
import { parseRetryAfter, WebhookSender, withoutAddresses } from "../../src/core/webhooks/sender.ts";
import { sign, signedHeaders, verify } from "../../src/core/webhooks/signing.ts";
import { tempDir } from "../support/databases.ts";
import { Receiver } from "./receiver.ts";

describe("Standard Webhooks signatures", () => {
  test("the specification's test vector", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const body = '{"test": 2432232314}';
    const expected = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
    assert.equal(sign(secret, id, 1614265330, body), expected);
    assert.ok(
      verify(secret, id, 1614265330, body, `v1,bm90IGl0 ${expected}`),
      "any listed signature may match",
    );
    assert.ok(!verify(secret, id, 1614265330, `${body} `, expected), "a changed body does not verify");
    assert.ok(!verify(secret, id, 1614265331, body, expected), "a changed timestamp does not verify");
    assert.equal(new Webhook(secret).sign(id, new Date(1614265330 * 1000), body), expected);
  });

  test("standardwebhooks verifies what Wisp signs, with Wisp's generated secrets", () => {
    for (let i = 0; i < 20; i++) {
      const secret = generateSecret();
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, "whsec_ + base64 of 32 bytes");
      const body = payloadOf({ kind: "user.created", created: "2026-01-02T03:04:05Z", data: `{"n":${i}}` });
      const headers = signedHeaders(secret, `msg_${i}`, Math.floor(Date.now() / 1000), body);
      assert.deepEqual(new Webhook(secret).verify(body, { ...headers }), {
        event: "user.created",
        timestamp: "2026-01-02T03:04:05Z",
        data: { n: i },
      });
      assert.throws(() => new Webhook(generateSecret()).verify(body, { ...headers }), /signature/i);
    }
  });
});

describe("webhook secrets at rest", () => {
  test("sealed with AES-256-GCM, bound to their endpoint, readable only with the same key", () => {
    const dir = tempDir("webhook-key");
    const box = new SecretBox({ dataDir: dir });
    const secret = generateSecret();
    const sealed = box.seal(secret, "webhook:1:2");
    assert.ok(!sealed.includes(secret) && !sealed.includes(secret.slice(6)), "no clear text");
    assert.notEqual(box.seal(secret, "webhook:1:2"), sealed, "a fresh IV each time");
    assert.equal(box.open(sealed, "webhook:1:2"), secret);
    assert.equal(
      new SecretBox({ dataDir: dir }).open(sealed, "webhook:1:2"),
      secret,
      "the key file is reused",
    );
    assert.throws(() => box.open(sealed, "webhook:1:3"), /does not decrypt/);
    const [format, id, iv, tag, data] = sealed.split(".");
    const flipped = Buffer.from(data!, "base64");
    flipped[0]! ^= 1;
    assert.throws(() => box.open([format, id, iv, tag, flipped.toString("base64")].join("."), "webhook:1:2"));
    const other = new SecretBox({ secretKey: Buffer.alloc(32, 7).toString("base64") });
    assert.throws(() => other.open(sealed, "webhook:1:2"), /same value on every process/);
    // The same box seals other secrets; its errors name them.
    const uam = new SecretBox({ dataDir: dir }, "UAM secret");
    assert.throws(() => uam.open(sealed, "portal:1:2"), /the stored UAM secret does not decrypt/);
    assert.throws(() => uam.open("garbage", "portal:1:2"), /the stored UAM secret is not in a known format/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("DATA_DIR/secret.key is created once with mode 0600; a readable-by-others file is refused", () => {
    const dir = tempDir("webhook-key");
    const key = loadOrCreateKeyFile(dir);
    const file = path.join(dir, KEY_FILE);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(key.length, 32);
    assert.deepEqual(loadOrCreateKeyFile(dir), key);
    fs.chmodSync(file, 0o644);
    assert.throws(() => loadOrCreateKeyFile(dir), /chmod 600/);
    assert.throws(() => new SecretBox({}).seal("x", "y"), /WEBHOOK_SECRET_KEY/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("WEBHOOK_SECRET_KEY must be base64 of 32 bytes; the retry schedule is configurable", () => {
    const good = Buffer.alloc(32, 1).toString("base64");
    assert.ok(decodeKey(good));
    assert.equal(decodeKey(Buffer.alloc(16).toString("base64")), null);
    assert.equal(loadConfig({ WEBHOOK_SECRET_KEY: good }).webhookSecretKey, good);
    assert.throws(() => loadConfig({ WEBHOOK_SECRET_KEY: "short" }), ConfigError);
    assert.deepEqual(loadConfig({}).webhookRetrySchedule, DEFAULT_RETRY_SCHEDULE_MS);
    assert.deepEqual(DEFAULT_RETRY_SCHEDULE_MS, [5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 36e6]);
    assert.deepEqual(
      loadConfig({ WEBHOOK_RETRY_SCHEDULE: "5s,5m,30m,2h,5h,10h,10h" }).webhookRetrySchedule,
      DEFAULT_RETRY_SCHEDULE_MS,
    );
    assert.deepEqual(loadConfig({ WEBHOOK_RETRY_SCHEDULE: "250ms, 1s" }).webhookRetrySchedule, [250, 1000]);
    for (const bad of ["5", "0s", "5d", "1s,,2s", "-1s", "8000h"]) {
      assert.throws(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: bad }), ConfigError, bad);
    }
    assert.equal(loadConfig({}).webhookAllowPrivate, false);
    assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE: "1" }).webhookAllowPrivate, true);
  });
});

describe("webhook rules", () => {
  test("refused: loopback, private, CGNAT, link-local, metadata, unspecified, multicast", () => {
    const refused: [string, RegExp][] = [
      ["127.0.0.1", /loopback/],
      ["127.255.0.9", /loopback/],
      ["10.1.2.3", /private/],
      ["172.16.0.1", /private/],
      ["172.31.255.255", /private/],
      ["192.168.1.1", /private/],
      ["100.64.0.1", /CGNAT/],
      ["100.127.255.254", /CGNAT/],
      ["169.254.169.254", /metadata/],
      ["169.254.1.1", /link-local/],
      ["0.0.0.0", /unspecified/],
      ["224.0.0.1", /multicast/],
      ["255.255.255.255", /reserved/],
      ["::1", /loopback/],
      ["::", /unspecified/],
      ["fd00:ec2::254", /metadata/],
      ["fc00::1", /private/],
      ["fd12:3456::1", /private/],
      ["fe80::1%eth0", /link-local/],
      ["ff02::1", /multicast/],
      ["::ffff:127.0.0.1", /loopback/],
      ["::ffff:a9fe:a9fe", /metadata/],
      ["64:ff9b::a00:1", /private/],
      ["2002:7f00:1::1", /loopback/],
      ["[::1]", /loopback/],
      ["[::ffff:127.0.0.1]", /loopback/],
      ["::ffff:7f00:1", /loopback/],
      ["0:0:0:0:0:0:0:1", /loopback/],
      ["::FFFF:10.0.0.1", /private/],
      ["::ffff:0:127.0.0.1", /loopback/], // IPv4-translated, RFC 6145
      ["::8.8.8.8", /reserved/], // IPv4-compatible, deprecated
      ["64:ff9b:1::808:808", /private/], // local-use NAT64
      ["fec0::1", /private/],
      ["2001:db8::1", /reserved/],
      ["100::1", /reserved/],
    ];
    for (const [address, why] of refused) assert.match(refusedAddress(address) ?? "allowed", why, address);
    for (const address of [
      "93.184.216.34",
      "8.8.8.8",
      "172.32.0.1",
      "100.128.0.1",
      "2606:4700:4700::1111",
      "::ffff:8.8.8.8",
      "64:ff9b::808:808",
      "2002:808:808::1",
    ]) {
      assert.equal(refusedAddress(address), null, address);
    }
    assert.match(refusedAddress("example.com") ?? "", /not an IP address/);
    // inet_aton's forms are no address at all here (resolving them is the resolver's business).
    for (const address of ["127.1", "0x7f000001", "010.0.0.1", "2130706433", "[::1]:80"]) {
      assert.match(refusedAddress(address) ?? "allowed", /not an IP address/, address);
    }
  });

  test("URLs: http(s) only, no credentials or fragments; kinds: all or known ones", () => {
    assert.equal(checkUrl("https://hooks.example.com/wisp?x=1"), null);
    assert.equal(checkUrl("http://127.0.0.1:8080/"), null, "addresses are checked at delivery");
    assert.match(checkUrl("ftp://example.com/") ?? "", /http/);
    assert.match(checkUrl("file:///etc/passwd") ?? "", /http/);
    assert.match(checkUrl("https://user:pw@example.com/") ?? "", /credentials/);
    assert.match(checkUrl("https://example.com/#x") ?? "", /fragment/);
    assert.match(checkUrl("not a url") ?? "", /http/);
    assert.match(checkUrl(`https://example.com/${"a".repeat(2100)}`) ?? "", /2048/);
    assert.deepEqual(parseKinds("all"), { kinds: ["*"] });
    assert.deepEqual(parseKinds("user.created, user.authenticated"), {
      kinds: ["user.authenticated", "user.created"],
    });
    assert.ok("problem" in parseKinds("user.exploded"));
    assert.ok("problem" in parseKinds("all,user.created"));
    assert.ok("problem" in parseKinds(""));
    assert.ok(subscribes(["*"], "report.ready"));
    assert.ok(!subscribes(["*"], "webhook.test"), "test events go to the tested endpoint only");
    assert.ok(!subscribes(["user.created"], "user.deleted"));
  });

  test("retry delays follow the schedule; a longer Retry-After wins (up to a day)", () => {
    const schedule = [5000, 300_000];
    assert.equal(retryDelay(schedule, 1, undefined), 5000);
    assert.equal(retryDelay(schedule, 1, 60_000), 60_000);
    assert.equal(retryDelay(schedule, 2, 1000), 300_000);
    assert.equal(retryDelay(schedule, 3, undefined), null, "then the delivery fails");
    assert.equal(retryDelay(schedule, 1, 10 * 86_400_000), 86_400_000);
    const now = Date.parse("2026-01-01T00:00:00Z");
    assert.equal(parseRetryAfter("120", now), 120_000);
    assert.equal(parseRetryAfter("Thu, 01 Jan 2026 00:01:00 GMT", now), 60_000);
    assert.equal(parseRetryAfter("soon", now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
  });
});

describe("the webhook sender", () => {
  let receiver: Receiver;
  const local = new WebhookSender({ allowPrivate: true, timeoutMs: 400 });
  const strict = new WebhookSender({
    allowPrivate: false,
    resolve: async (host) => (host === "rebind.test" ? ["127.0.0.1"] : ["10.0.0.7", "169.254.169.254"]),
  });

  before(async () => {
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver.close();
    await local.close();
    await strict.close();
  });

  test("posts JSON with the given headers; keeps the status and the first 1 KB of the answer", async () => {
    receiver.respond = () => ({ status: 201, body: "é".repeat(3000), headers: { "retry-after": "7" } });
    const result = await local.send(receiver.url("/a"), { "webhook-id": "msg_1" }, '{"a":1}');
    assert.equal(result.statusCode, 201);
    assert.equal(result.error, null);
    assert.ok(Buffer.byteLength(result.excerpt!) <= 1024 && result.excerpt!.startsWith("éé"));
    assert.equal(result.retryAfterMs, 7000);
    const [got] = receiver.at("/a");
    assert.equal(got?.headers["content-type"], "application/json");
    assert.equal(got?.id, "msg_1");
    assert.equal(got?.body, '{"a":1}');
  });

  test("redirects not followed; timeouts (10 s by default), refused connections are errors", async () => {
    assert.equal(DELIVERY_TIMEOUT_MS, 10_000);
    receiver.respond = (r) =>
      r.path === "/moved" ? { status: 302, headers: { location: receiver.url("/target") } } : { status: 200 };
    const moved = await local.send(receiver.url("/moved"), {}, "{}");
    assert.equal(moved.statusCode, 302);
    assert.equal(receiver.at("/target").length, 0, "the Location was not visited");

    receiver.respond = () => ({ status: 200, delayMs: 1500 });
    const slow = await local.send(receiver.url("/slow"), {}, "{}");
    assert.equal(slow.statusCode, null);
    assert.match(slow.error ?? "", /timeout/);
    assert.ok(slow.durationMs >= 350 && slow.durationMs < 1400, `${slow.durationMs} ms`);

    const closed = await Receiver.start();
    await closed.close();
    const refused = await local.send(closed.url("/x"), {}, "{}");
    assert.match(refused.error ?? "", /ECONNREFUSED/);
  });

  test("no WEBHOOK_ALLOW_PRIVATE: plain http, private addresses (literal, resolved) refused", async () => {
    const before = receiver.received.length;
    const cases: [string, RegExp][] = [
      [receiver.url("/p", "127.0.0.1", "http"), /refused: plain http/],
      [receiver.url("/p", "127.0.0.1", "https"), /refused: 127\.0\.0\.1 is a loopback address/],
      [receiver.url("/p", "[::1]", "https"), /refused: ::1 is a loopback address/],
      // A name's refusal does not say what it resolved to: that would map internal names.
      [
        receiver.url("/p", "rebind.test", "https"),
        /^refused: rebind\.test resolves to a private or reserved address \(WEBHOOK_ALLOW_PRIVATE=1 allows it\)$/,
      ],
      [
        receiver.url("/p", "internal.test", "https"),
        /^refused: internal\.test resolves to a private or reserved address \(WEBHOOK_ALLOW_PRIVATE=1 allows it\)$/,
      ],
    ];
    for (const [url, why] of cases) {
      const result = await strict.send(url, {}, "{}");
      assert.equal(result.statusCode, null, url);
      assert.match(result.error ?? "", why, url);
    }
    const system = new WebhookSender({ allowPrivate: false });
    const viaDns = await system.send(receiver.url("/p", "localhost", "https"), {}, "{}");
    assert.match(viaDns.error ?? "", /^refused: localhost resolves to a private or reserved address \(/);
    assert.doesNotMatch(viaDns.error ?? "", /127\.0\.0\.1|::1/);
    await system.close();
    assert.equal(receiver.received.length, before, "nothing reached the receiver");
  });

  test("network errors name the URL's host, never the address a name resolved to", async () => {
    const closed = await Receiver.start();
    await closed.close();
    const resolving = new WebhookSender({ allowPrivate: true, resolve: async () => ["127.0.0.1"] });
    const byName = await resolving.send(closed.url("/x", "hooks.invalid"), {}, "{}");
    await resolving.close();
    assert.match(byName.error ?? "", new RegExp(`^ECONNREFUSED: .*hooks\\.invalid:${closed.port}`));
    assert.doesNotMatch(byName.error ?? "", /127\.0\.0\.1/);
    // The operator's own literal stays.
    const literal = await local.send(closed.url("/x"), {}, "{}");
    assert.match(literal.error ?? "", new RegExp(`127\\.0\\.0\\.1:${closed.port}`));
    const cases: [string, string, string][] = [
      ["connect ECONNREFUSED 10.1.2.3:443", "h.example", "connect ECONNREFUSED h.example:443"],
      ["connect ECONNREFUSED fd00::7:443", "h.example", "connect ECONNREFUSED h.example"],
      ["connect EHOSTUNREACH fe80::1%eth0.", "h.example", "connect EHOSTUNREACH h.example."],
      ["read ECONNRESET from [2001:db8::1]:8443", "h.example", "read ECONNRESET from [h.example]:8443"],
      ["connect ETIMEDOUT 192.0.2.1:443", "192.0.2.1", "connect ETIMEDOUT 192.0.2.1:443"],
      ["connect ETIMEDOUT 192.0.2.9:443", "[2001:db8::5]", "connect ETIMEDOUT 2001:db8::5:443"],
      ["socket hang up after 10 s", "h.example", "socket hang up after 10 s"],
    ];
    for (const [message, host, expected] of cases) assert.equal(withoutAddresses(message, host), expected);
  });

  test("the connection goes to the address Wisp resolved and checked, not to a second lookup", async () => {
    receiver.respond = () => ({ status: 204 });
    const pinned = new WebhookSender({ allowPrivate: true, resolve: async () => ["127.0.0.1"] });
    const result = await pinned.send(receiver.url("/pinned", "hooks.invalid"), {}, "{}");
    await pinned.close();
    assert.equal(result.statusCode, 204, result.error ?? "");
    assert.equal(receiver.at("/pinned")[0]?.headers.host, `hooks.invalid:${receiver.port}`);
  });
});
