// The embedded RADIUS server through real UDP packets: client check, authenticators, Status-Server,
// duplicates, per-account decisions, policy items, and what every attempt leaves in radpostauth and
// events. The server runs in-process (startTestServer) on free loopback ports; packets from
// 127.0.0.2 and 127.0.0.3 come from sockets bound to those addresses (other networks' clients).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import dgram from "node:dgram";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import type { Network } from "../../src/core/networks/service.ts";
import {
  accessRequestChap,
  accessRequestPap,
  RadiusTimeoutError,
  sendRadius,
} from "../../src/radius/client.ts";
import {
  type AttributeInput,
  decodePacket,
  encodePacket,
  type RadiusPacket,
  verifyResponse,
} from "../../src/radius/packet.ts";
import { dialects } from "../support/databases.ts";
import { freeradiusUnavailable, freeUdpPort, radclient } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "lobby-Secret-81";
const OTHER_SECRET = "other-Secret-92";
const STRICT_SECRET = "strict-Secret-73";
// Distinctive, so finding them anywhere in the records means a password was stored.
const PASSWORD = "pw-Zq81-alice";
const OTHER_PASSWORD = "pw-Kx27-alice2";
const WRONG_PASSWORD = "pw-Wr0ng-guess";
const STATION: AttributeInput[] = [
  ["NAS-IP-Address", "127.0.0.1"],
  ["NAS-Identifier", "lobby-ap"],
  ["Called-Station-Id", "AA-BB-CC-DD-EE-FF:Guest WiFi"],
  ["Calling-Station-Id", "11-22-33-44-55-66"],
];

interface LogEntry {
  level: string;
  msg: string;
  // biome-ignore lint/suspicious/noExplicitAny: log objects carry whatever fields the caller adds
  [field: string]: any;
}

/** Records what the server logs through app.log (which the RADIUS door uses), at any level. */
function captureLog(server: TestServer): LogEntry[] {
  const entries: LogEntry[] = [];
  const log = server.app.log as unknown as Record<string, unknown>;
  for (const level of ["info", "warn", "error"]) {
    log[level] = (object: object, msg: string) => entries.push({ ...object, level, msg });
  }
  return entries;
}

/** A UDP socket bound to one loopback address, to send raw datagrams and read what comes back. */
class Peer {
  private readonly inbox: Buffer[] = [];
  private wake: (() => void) | undefined;
  private constructor(private readonly socket: dgram.Socket) {
    socket.on("message", (message) => {
      this.inbox.push(message);
      this.wake?.();
    });
  }

  static async open(address = "127.0.0.1"): Promise<Peer> {
    const socket = dgram.createSocket("udp4");
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(0, address, () => resolve());
    });
    return new Peer(socket);
  }

  send(datagram: Buffer, port: number): void {
    this.socket.send(datagram, port, "127.0.0.1");
  }

  /** The next datagram received, or null when none arrives within waitMs. */
  async next(waitMs = 2000): Promise<Buffer | null> {
    if (this.inbox.length === 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    return this.inbox.shift() ?? null;
  }

  close(): void {
    this.socket.close();
  }
}

let lastId = 0;
/** An encoded request; a new identifier unless `id` is given. */
function build(code: number, attributes: AttributeInput[], secret: string, ma = false, id?: number): Buffer {
  lastId = id ?? (lastId + 1) & 0xff;
  return encodePacket({ code, identifier: lastId, attributes }, secret, { messageAuthenticator: ma });
}

/** Verifies an answer against the request it answers and decodes it. */
function answerTo(request: Buffer, answer: Buffer | null, secret: string): RadiusPacket {
  assert.ok(answer, "an answer arrived");
  const authenticator = request.subarray(4, 20);
  assert.ok(verifyResponse(answer, secret, authenticator), "the answer is signed with the secret");
  return decodePacket(answer, { secret, requestAuthenticator: authenticator });
}

/** The reply items as "Name = value", without Message-Authenticator. */
function items(packet: RadiusPacket): string[] {
  return packet.attributes
    .filter((a) => a.name !== "Message-Authenticator")
    .map((a) => `${a.name} = ${a.value}`);
}

for (const { dialect, skip } of await dialects()) {
  describe(`embedded RADIUS server on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let log: LogEntry[];
    let authPort: number;
    let acctPort: number;
    let lobby: Network;
    let other: Network;
    let strict: Network;
    let mine: AccountRow;
    let theirs: AccountRow;
    const userIds = new Map<string, number>();

    const db = () => server.core.database.db;
    const attempts = (username: string) =>
      db().selectFrom("radpostauth").selectAll().where("username", "=", username).orderBy("id").execute();
    const countAttempts = async () =>
      Number(
        (
          await db()
            .selectFrom("radpostauth")
            .select((e) => e.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const events = async (kind: string) =>
      (await db().selectFrom("events").selectAll().where("kind", "=", kind).orderBy("id").execute()).map(
        (e) => ({
          ...e,
          data: JSON.parse(e.data) as Record<string, unknown>,
        }),
      );

    const send = (request: ReturnType<typeof accessRequestPap>, port = authPort, secret = SECRET) =>
      sendRadius({ ...request, host: "127.0.0.1", port, secret, timeoutMs: 2000, retries: 0 });
    const pap = (username: string, password: string, extra: AttributeInput[] = []) =>
      send(accessRequestPap(username, password, [...STATION, ...extra]));
    /** A request that must get no answer at all. */
    const silence = (promise: Promise<RadiusPacket>) => assert.rejects(promise, RadiusTimeoutError);
    const accounting = (attributes: AttributeInput[]) =>
      send({ code: "Accounting-Request", attributes: [...STATION, ...attributes] }, acctPort);

    /** A user with radcheck/radreply items: [table, attribute, operator, value]. */
    async function user(
      account: AccountRow,
      username: string,
      password: string,
      rows: [string, string, string, string][] = [],
      status?: "disabled",
    ) {
      const created = await server.core.users.create(account.id, { username, password, status });
      if (account.id === mine.id) userIds.set(username, created.id);
      for (const [table, attribute, operator, value] of rows) {
        await server.core.attributes.addToUser(account.id, {
          userid: created.id,
          table,
          attribute,
          operator,
          value,
        });
      }
      return created.id;
    }

    before(async () => {
      [authPort, acctPort] = [await freeUdpPort(), await freeUdpPort()];
      server = await startTestServer({
        dialect,
        env: {
          RADIUS_HOST: "127.0.0.1",
          RADIUS_AUTH_PORT: String(authPort),
          RADIUS_ACCT_PORT: String(acctPort),
        },
      });
      log = captureLog(server);
      mine = await server.account("default");
      theirs = await server.account("second");
      const networks = server.core.networks;
      lobby = (await networks.create(mine.id, { name: "Lobby", nas_ip: "127.0.0.1", secret: SECRET }))
        .network;
      other = (await networks.create(theirs.id, { name: "Other", nas_ip: "127.0.0.2", secret: OTHER_SECRET }))
        .network;
      strict = (
        await networks.create(mine.id, {
          name: "Strict",
          nas_ip: "127.0.0.3",
          secret: STRICT_SECRET,
          require_message_authenticator: true,
        })
      ).network;
      const now = Math.floor(Date.now() / 1000);
      await user(mine, "alice", PASSWORD, [
        ["radreply", "Reply-Message", "=", "welcome"],
        ["radreply", "Session-Timeout", "=", "3600"],
        ["radreply", "WISPr-Bandwidth-Max-Down", "=", "5000000"],
      ]);
      await user(theirs, "alice", OTHER_PASSWORD, [["radreply", "Session-Timeout", "=", "120"]]);
      await user(mine, "dave", PASSWORD, [], "disabled");
      await user(mine, "erin", PASSWORD, [["radcheck", "Expiration", ":=", String(now - 60)]]);
      await user(mine, "fay", PASSWORD, [["radcheck", "Expiration", ":=", String(now + 600)]]);
      await user(mine, "gus", PASSWORD, [["radcheck", "Simultaneous-Use", ":=", "1"]]);
      await user(mine, "hal", PASSWORD, [["radcheck", "Max-All-Session", ":=", "100"]]);
    });
    after(() => server?.stop());

    test("PAP: Access-Accept with reply items, a vendor attribute and Message-Authenticator", async () => {
      const answer = await sendRadius({
        ...accessRequestPap("alice", PASSWORD, STATION),
        host: "127.0.0.1",
        port: authPort,
        secret: SECRET,
        retries: 0,
        requireMessageAuthenticator: true,
      });
      assert.equal(answer.type, "Access-Accept");
      assert.equal(answer.attributes[0]?.name, "Message-Authenticator");
      assert.deepEqual(items(answer), [
        "Reply-Message = welcome",
        "Session-Timeout = 3600",
        "WISPr-Bandwidth-Max-Down = 5000000",
      ]);
      assert.equal(answer.attributes.find((a) => a.name.startsWith("WISPr"))?.vendorId, 14122);

      const [row] = (await attempts("alice")).slice(-1);
      assert.ok(row);
      assert.equal(row.reply, "Access-Accept");
      assert.equal(row.reason, null);
      assert.equal(row.account_id, mine.id);
      assert.equal(row.user_id, userIds.get("alice"));
      assert.equal(row.network_id, lobby.id);
      assert.equal(row.client_mac, "11:22:33:44:55:66");
      assert.equal(row.ap_mac, "aa:bb:cc:dd:ee:ff");
      assert.equal(row.ssid, "Guest WiFi");
      assert.equal(row.nas_identifier, "lobby-ap");
      assert.equal(row.calledstationid, "AA-BB-CC-DD-EE-FF:Guest WiFi");
      assert.equal(row.pass, "");

      const [event] = (await events("user.authenticated")).slice(-1);
      assert.equal(event?.account_id, mine.id);
      assert.deepEqual(event?.data, {
        user_id: userIds.get("alice"),
        username: "alice",
        ap_mac: "aa:bb:cc:dd:ee:ff",
        client_mac: "11:22:33:44:55:66",
        ssid: "Guest WiFi",
        network_id: lobby.id,
        method: "PAP",
      });
    });

    test("CHAP: with the Request Authenticator or a CHAP-Challenge as challenge", async () => {
      const plain = await send(accessRequestChap("alice", PASSWORD, STATION));
      assert.equal(plain.type, "Access-Accept");
      assert.ok(items(plain).includes("WISPr-Bandwidth-Max-Down = 5000000"));
      const challenged = await send(
        accessRequestChap("alice", PASSWORD, STATION, { challenge: Buffer.from("0123456789abcdef") }),
      );
      assert.equal(challenged.type, "Access-Accept");
      const wrong = await send(accessRequestChap("alice", WRONG_PASSWORD, STATION));
      assert.equal(wrong.type, "Access-Reject");
      assert.deepEqual(items(wrong), ["Reply-Message = wrong password"]);
    });

    test("a wrong password: Access-Reject naming the reason, recorded with user.rejected", async () => {
      const answer = await pap("alice", WRONG_PASSWORD);
      assert.equal(answer.type, "Access-Reject");
      assert.deepEqual(items(answer), ["Reply-Message = wrong password"]);
      const [row] = (await attempts("alice")).slice(-1);
      assert.equal(row?.reply, "Access-Reject");
      assert.equal(row?.reason, "wrong password");
      assert.equal(row?.user_id, userIds.get("alice"));
      const [event] = (await events("user.rejected")).slice(-1);
      assert.deepEqual(event?.data, {
        user_id: userIds.get("alice"),
        username: "alice",
        ap_mac: "aa:bb:cc:dd:ee:ff",
        client_mac: "11:22:33:44:55:66",
        ssid: "Guest WiFi",
        network_id: lobby.id,
        reason: "wrong password",
        method: "PAP",
      });
    });

    test("an unknown user is rejected and recorded without a user id", async () => {
      const answer = await pap("nobody", PASSWORD);
      assert.equal(answer.type, "Access-Reject");
      assert.deepEqual(items(answer), ["Reply-Message = unknown user"]);
      const rows = await attempts("nobody");
      assert.equal(rows.length, 1);
      assert.equal(rows[0]?.reason, "unknown user");
      assert.equal(rows[0]?.user_id, null);
    });

    test("a packet from an address that is no network is dropped and logged", async () => {
      const peer = await Peer.open("127.0.0.9");
      try {
        const request = build(
          1,
          [
            ["User-Name", "stranger"],
            ["User-Password", PASSWORD],
          ],
          SECRET,
          true,
        );
        peer.send(request, authPort);
        assert.equal(await peer.next(400), null, "no answer");
      } finally {
        peer.close();
      }
      assert.equal((await attempts("stranger")).length, 0);
      const line = log.find((l) => l.client === "127.0.0.9");
      assert.equal(line?.msg, "RADIUS packet dropped");
      assert.equal(line?.reason, "unknown client address");
      assert.equal(line?.level, "warn");
    });

    test("a Message-Authenticator signed with the wrong secret: dropped and logged", async () => {
      const before = await countAttempts();
      await silence(
        sendRadius({
          ...accessRequestPap("alice", PASSWORD, STATION),
          host: "127.0.0.1",
          port: authPort,
          secret: "not-the-secret",
          messageAuthenticator: true,
          timeoutMs: 400,
          retries: 0,
        }),
      );
      assert.equal(await countAttempts(), before);
      assert.ok(
        log.some((l) => /bad Message-Authenticator/.test(l.reason ?? "")),
        JSON.stringify(log),
      );
    });

    test("an Accounting-Request with a bad Request Authenticator: dropped, nothing stored", async () => {
      const request = build(
        4,
        [...STATION, ["User-Name", "alice"], ["Acct-Status-Type", "Start"], ["Acct-Session-Id", "bad-1"]],
        SECRET,
      );
      request[10] = (request[10] ?? 0) ^ 0xff;
      const peer = await Peer.open();
      try {
        peer.send(request, acctPort);
        assert.equal(await peer.next(400), null, "no answer");
      } finally {
        peer.close();
      }
      const rows = await db()
        .selectFrom("radacct")
        .select("radacctid")
        .where("acctsessionid", "=", "bad-1")
        .execute();
      assert.equal(rows.length, 0);
      assert.ok(log.some((l) => /bad Request Authenticator/.test(l.reason ?? "")));
    });

    test("a network requiring Message-Authenticator drops requests without one", async () => {
      const peer = await Peer.open("127.0.0.3");
      try {
        const attributes: AttributeInput[] = [
          ["User-Name", "alice"],
          ["User-Password", PASSWORD],
          ...STATION,
        ];
        const before = await countAttempts();
        peer.send(build(1, attributes, STRICT_SECRET, false), authPort);
        assert.equal(await peer.next(400), null, "no answer without Message-Authenticator");
        assert.equal(await countAttempts(), before);
        assert.ok(log.some((l) => l.client === "127.0.0.3" && /required/.test(l.reason)));

        const signed = build(1, attributes, STRICT_SECRET, true);
        peer.send(signed, authPort);
        const answer = answerTo(signed, await peer.next(), STRICT_SECRET);
        assert.equal(answer.type, "Access-Accept");
        const [row] = (await attempts("alice")).slice(-1);
        assert.equal(row?.network_id, strict.id);
      } finally {
        peer.close();
      }
    });

    test("Status-Server is answered on both ports and records nothing", async () => {
      const before = await countAttempts();
      const auth = await send({ code: "Status-Server" });
      assert.equal(auth.type, "Access-Accept");
      const acct = await send({ code: "Status-Server" }, acctPort);
      assert.equal(acct.type, "Accounting-Response");
      assert.equal(await countAttempts(), before);
    });

    test("a retransmission gets the identical cached answer and is recorded once", async () => {
      const peer = await Peer.open();
      try {
        const request = build(
          1,
          [["User-Name", "alice"], ["User-Password", PASSWORD], ...STATION],
          SECRET,
          true,
        );
        const before = await countAttempts();
        // Twice at once (the second arrives while the first is decided), then once more afterwards.
        peer.send(request, authPort);
        peer.send(request, authPort);
        const first = await peer.next();
        assert.equal(answerTo(request, first, SECRET).type, "Access-Accept");
        const inFlight = await peer.next(200);
        if (inFlight) assert.deepEqual(inFlight, first);
        peer.send(request, authPort);
        assert.deepEqual(await peer.next(), first);
        assert.equal(await countAttempts(), before + 1);

        // Same identifier, new authenticator: a new request, decided again.
        const wrong = [
          ["User-Name", "alice"],
          ["User-Password", WRONG_PASSWORD],
          ...STATION,
        ] as AttributeInput[];
        const sameId = build(1, wrong, SECRET, true, request[1]);
        peer.send(sameId, authPort);
        assert.equal(answerTo(sameId, await peer.next(), SECRET).type, "Access-Reject");
        assert.equal(await countAttempts(), before + 2);
      } finally {
        peer.close();
      }
    });

    test("two accounts with the same username: each network decides with its own account", async () => {
      const peer = await Peer.open("127.0.0.2");
      try {
        const attributes = (password: string): AttributeInput[] => [
          ["User-Name", "alice"],
          ["User-Password", password],
          ...STATION,
        ];
        const mineThere = build(1, attributes(PASSWORD), OTHER_SECRET, true);
        peer.send(mineThere, authPort);
        const rejected = answerTo(mineThere, await peer.next(), OTHER_SECRET);
        assert.equal(rejected.type, "Access-Reject");
        const theirsThere = build(1, attributes(OTHER_PASSWORD), OTHER_SECRET, true);
        peer.send(theirsThere, authPort);
        const accepted = answerTo(theirsThere, await peer.next(), OTHER_SECRET);
        assert.equal(accepted.type, "Access-Accept");
        assert.deepEqual(items(accepted), ["Session-Timeout = 120"]);
      } finally {
        peer.close();
      }
      const theirsHere = await pap("alice", OTHER_PASSWORD);
      assert.equal(theirsHere.type, "Access-Reject");

      const theirRows = await db()
        .selectFrom("radpostauth")
        .selectAll()
        .where("account_id", "=", theirs.id)
        .orderBy("id")
        .execute();
      assert.deepEqual(
        theirRows.map((r) => [r.username, r.reply, r.network_id, r.user_id === userIds.get("alice")]),
        [
          ["alice", "Access-Reject", other.id, false],
          ["alice", "Access-Accept", other.id, false],
        ],
      );
      assert.ok(theirRows.every((r) => r.user_id !== null));
      const theirEvents = await db()
        .selectFrom("events")
        .select("kind")
        .where("account_id", "=", theirs.id)
        .where("kind", "in", ["user.authenticated", "user.rejected"])
        .execute();
      assert.deepEqual(theirEvents.map((e) => e.kind).sort(), ["user.authenticated", "user.rejected"]);
    });

    test("a disabled user is rejected", async () => {
      const answer = await pap("dave", PASSWORD);
      assert.equal(answer.type, "Access-Reject");
      assert.deepEqual(items(answer), ["Reply-Message = user disabled"]);
      assert.equal((await attempts("dave"))[0]?.reason, "user disabled");
    });

    test("Expiration: in the past rejects, in the future caps Session-Timeout", async () => {
      const expired = await pap("erin", PASSWORD);
      assert.equal(expired.type, "Access-Reject");
      assert.deepEqual(items(expired), ["Reply-Message = account expired"]);
      const valid = await pap("fay", PASSWORD);
      assert.equal(valid.type, "Access-Accept");
      const timeout = Number(valid.attributes.find((a) => a.name === "Session-Timeout")?.value);
      assert.ok(timeout > 590 && timeout <= 600, `Session-Timeout ${timeout}`);
    });

    test("Simultaneous-Use counts the sessions accounting opened and closed", async () => {
      assert.equal((await pap("gus", PASSWORD)).type, "Access-Accept");
      const session: AttributeInput[] = [
        ["User-Name", "gus"],
        ["Acct-Session-Id", "gus-1"],
      ];
      assert.equal(
        (await accounting([...session, ["Acct-Status-Type", "Start"]])).type,
        "Accounting-Response",
      );
      const second = await pap("gus", PASSWORD);
      assert.equal(second.type, "Access-Reject");
      assert.deepEqual(items(second), ["Reply-Message = already logged in"]);
      await accounting([...session, ["Acct-Status-Type", "Stop"], ["Acct-Session-Time", "30"]]);
      assert.equal((await pap("gus", PASSWORD)).type, "Access-Accept");
    });

    test("Max-All-Session: sessions' time caps Session-Timeout, then rejects", async () => {
      const fresh = await pap("hal", PASSWORD);
      assert.deepEqual(items(fresh), ["Session-Timeout = 100"]);
      const stop = (id: string, seconds: number) =>
        accounting([
          ["User-Name", "hal"],
          ["Acct-Session-Id", id],
          ["Acct-Status-Type", "Stop"],
          ["Acct-Session-Time", seconds],
        ]);
      await stop("hal-1", 60);
      assert.deepEqual(items(await pap("hal", PASSWORD)), ["Session-Timeout = 40"]);
      await stop("hal-2", 40);
      const used = await pap("hal", PASSWORD);
      assert.equal(used.type, "Access-Reject");
      assert.deepEqual(items(used), ["Reply-Message = maximum total session time reached"]);
    });

    test("radtest and radclient against the embedded server", async (t) => {
      const missing = freeradiusUnavailable();
      if (missing) {
        console.log(`# skipping radclient/radtest: ${missing}`);
        return t.skip(missing);
      }
      const run = promisify(execFile);
      const target = `127.0.0.1:${authPort}`;
      const papTest = await run("radtest", ["alice", PASSWORD, target, "0", SECRET]);
      assert.match(papTest.stdout, /Received Access-Accept/);
      assert.match(papTest.stdout, /WISPr-Bandwidth-Max-Down = 5000000/);
      const chapTest = await run("radtest", ["-t", "chap", "alice", PASSWORD, target, "0", SECRET]);
      assert.match(chapTest.stdout, /Received Access-Accept/);
      const wrong = await run("radtest", ["alice", WRONG_PASSWORD, target, "0", SECRET]).catch(
        (error: { stdout: string }) => error,
      );
      assert.match(wrong.stdout, /Received Access-Reject/);
      assert.match(wrong.stdout, /Reply-Message = "wrong password"/);

      const status = await radclient(authPort, "status", SECRET, [["Message-Authenticator", "0x00"]]);
      assert.equal(status.code, "Access-Accept");
      const acct = await radclient(acctPort, "acct", SECRET, [
        ["User-Name", "alice"],
        ["Acct-Status-Type", "Start"],
        ["Acct-Session-Id", "radclient-1"],
        ["NAS-IP-Address", "127.0.0.1"],
      ]);
      assert.equal(acct.code, "Accounting-Response");
    });

    test("no password ever reaches radpostauth or events", async () => {
      const rows = await db().selectFrom("radpostauth").selectAll().execute();
      const eventRows = await db().selectFrom("events").selectAll().execute();
      assert.ok(rows.length >= 15, `${rows.length} attempts recorded`);
      const text = JSON.stringify([rows, eventRows]);
      for (const password of [PASSWORD, OTHER_PASSWORD, WRONG_PASSWORD]) {
        assert.ok(!text.includes(password), `${password} is stored somewhere`);
      }
      assert.ok(rows.every((r) => r.pass === "" || r.pass === null));
      assert.ok(!log.some((l) => l.level === "error"), JSON.stringify(log));
    });

    // Last: it makes the server log an error, which the test above checks never happens otherwise.
    test("an answer too large for one packet is not recorded as an Accept the NAS never got", async () => {
      const ivy = await user(mine, "ivy", PASSWORD, [["radreply", "Reply-Message", "=", "x".repeat(240)]]);
      // 3,995 octets of Proxy-State: the request fits in 4096 octets, the Accept with 240 more does not.
      const chain: AttributeInput[] = [
        ...Array.from({ length: 15 }, () => ["Proxy-State", Buffer.alloc(253, 7)] as const),
        ["Proxy-State", Buffer.alloc(150, 8)],
      ];
      const answer = await pap("ivy", PASSWORD, chain);
      const [row] = (await attempts("ivy")).slice(-1);
      assert.equal(row?.user_id, ivy);
      assert.equal(row?.reply, answer.type, "the record says what the NAS was told");
      assert.ok(!log.some((l) => l.level === "error"), JSON.stringify(log));
    });
  });
}
