// Fuzzing the RADIUS door: 10,000+ random and mutated datagrams from the known client address reach
// the decoder on both ports; none may be answered, recorded or crash the server. Then a few hundred
// correctly signed but odd requests (garbage VSAs, raw attributes, Proxy-State chains, padding) must
// each be answered, and a plain login and Status-Server must still work. The PRNG is seeded: a
// failure prints the seed, and WISP_FUZZ_SEED=<seed> replays it.
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { after, before, describe, test } from "node:test";
import { ConflictError } from "../../src/core/shared/errors.ts";
import { accessRequestPap, RadiusClient, type RadiusRequest, sendRadius } from "../../src/radius/client.ts";
import { type AttributeInput, encodePacket, verifyResponse } from "../../src/radius/packet.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { prng } from "../support/prng.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "fuzz-Secret-66";
const PASSWORD = "pw-fuzz-Q3";
/** Holds U+FFFD, which invalid UTF-8 octets would decode to. */
const REPLACEMENT_PASSWORD = "pw-\uFFFD-fuzz";
const GARBAGE_PACKETS = 10_500;
const SIGNED_PACKETS = 400;
const SEED = Number(process.env.WISP_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

const random = prng(SEED);

const STATION: AttributeInput[] = [
  ["NAS-IP-Address", "127.0.0.1"],
  ["Called-Station-Id", "AA-BB-CC-DD-EE-FF:Fuzz"],
  ["Calling-Station-Id", "11-22-33-44-55-66"],
];

/** Correctly encoded packets of every kind the door serves: the material mutations start from. */
function validPacket(): Buffer {
  const id = random.int(256);
  const proxy: AttributeInput[] = Array.from({ length: random.int(4) }, () => [
    "Proxy-State",
    random.bytes(8),
  ]);
  switch (random.int(5)) {
    case 0:
      return encodePacket(
        { identifier: id, ...accessRequestPap("alice", PASSWORD, [...STATION, ...proxy]) },
        SECRET,
        {
          messageAuthenticator: true,
        },
      );
    case 1:
      return encodePacket({ code: 12, identifier: id }, SECRET);
    case 2:
      return encodePacket(
        {
          code: 4,
          identifier: id,
          attributes: [
            ["User-Name", "alice"],
            ["Acct-Status-Type", random.pick(["Start", "Stop", "Interim-Update", "Accounting-On"])],
            ["Acct-Session-Id", `f-${random.int(1e6)}`],
            ["Acct-Input-Gigawords", random.int(10)],
            ...STATION,
            ...proxy,
          ],
        },
        SECRET,
        { messageAuthenticator: random.int(2) === 0 },
      );
    case 3:
      return encodePacket(
        {
          code: 1,
          identifier: id,
          attributes: [
            ["User-Name", "alice"],
            ["CHAP-Password", random.bytes(17)],
            ["WISPr-Location-Name", "lobby"],
            ...STATION,
          ],
        },
        SECRET,
        { messageAuthenticator: true },
      );
    default:
      return encodePacket(
        {
          code: 1,
          identifier: id,
          attributes: [["User-Name", "alice"], ["User-Password", PASSWORD], ...proxy],
        },
        SECRET,
        { messageAuthenticator: true },
      );
  }
}

/** Attributes with a consistent structure but random types and values. */
function randomAttributes(budget: number): Buffer {
  const parts: Buffer[] = [];
  let size = 0;
  while (size < budget) {
    const type = random.pick([1, 2, 4, 5, 8, 26, 30, 31, 33, 44, 79, 80, 87, random.int(256)]);
    const value = type === 26 ? garbageVsa() : random.bytes(random.int(20));
    const attribute = Buffer.concat([
      Buffer.from([type, Math.min(255, value.length + 2)]),
      value.subarray(0, 253),
    ]);
    parts.push(attribute);
    size += attribute.length;
  }
  return Buffer.concat(parts);
}

/** A Vendor-Specific value: a real or random vendor, then sub-attributes that may lie about lengths. */
function garbageVsa(): Buffer {
  const vendor = Buffer.alloc(4);
  vendor.writeUInt32BE(random.pick([9, 311, 14122, 14988, 0, random.int(2 ** 32)]));
  const inner =
    random.int(3) === 0 ? random.bytes(random.int(30)) : Buffer.from([random.int(256), random.int(40)]);
  return Buffer.concat([vendor, inner, random.bytes(random.int(12))]);
}

function withLength(packet: Buffer, length: number): Buffer {
  const out = Buffer.from(packet);
  if (out.length >= 4) out.writeUInt16BE(length & 0xffff, 2);
  return out;
}

/** One malformed or unauthenticated datagram. */
function garbage(): Buffer {
  const base = validPacket();
  switch (random.int(11)) {
    case 0: // random bytes, any size (also > 4096)
      return random.bytes(random.pick([0, 1, 19, 20, 21, random.int(200), random.int(5000)]));
    case 1: {
      // bit flips in a valid packet
      const out = Buffer.from(base);
      for (let i = 0, n = 1 + random.int(8); i < n; i++) out[random.int(out.length)]! ^= 1 << random.int(8);
      // Flips that cancel out would leave a valid packet.
      if (out.equals(base)) out[0]! ^= 0x80;
      return out;
    }
    case 2: // truncated
      return base.subarray(0, random.int(base.length));
    case 3: {
      // a length field that lies
      const length = random.pick([0, 19, 20, base.length + 1 + random.int(100), random.int(65536)]);
      return withLength(base, length === base.length ? length + 1 : length);
    }
    case 4: {
      // an attribute whose length runs past the end
      const out = Buffer.from(base);
      if (out.length > 21) out[21] = 255;
      return out;
    }
    case 5: {
      // unknown or misplaced codes
      const out = Buffer.from(base);
      out[0] = random.pick([0, 2, 3, 5, 6, 11, 13, 40, 43, 50, 255, random.int(256)]);
      if (out[0] === base[0]) out[0] ^= 0x80;
      return out;
    }
    case 6: {
      // garbage VSAs and random attributes, consistent lengths, not signed
      const body = randomAttributes(random.int(600));
      const header = Buffer.from([random.pick([1, 4, 12]), random.int(256), 0, 0, ...random.bytes(16)]);
      return withLength(Buffer.concat([header, body]), 20 + body.length);
    }
    case 7: {
      // a huge Proxy-State chain (more than 200 attributes, or up to 4096 octets)
      const count = random.pick([201, 250, 15]);
      const each = count > 200 ? 3 : 253;
      const chain = Buffer.concat(
        Array.from({ length: count }, () => Buffer.concat([Buffer.from([33, each + 2]), random.bytes(each)])),
      ).subarray(0, 4096 - base.length);
      return withLength(Buffer.concat([base, chain]), base.length + chain.length);
    }
    case 8: {
      // zero-length, one-octet and type-0 attributes
      const bad = Buffer.from(
        random.pick([
          [1, 0],
          [1, 1],
          [0, 2],
          [26, 2],
          [80, 2],
        ]),
      );
      return withLength(Buffer.concat([base, bad]), base.length + bad.length);
    }
    case 9: {
      // a valid packet with garbage appended inside its length: signature broken
      const tail = randomAttributes(1 + random.int(60));
      return withLength(Buffer.concat([base, tail]), base.length + tail.length);
    }
    default: {
      // a duplicate Message-Authenticator or one of the wrong size
      const ma =
        random.int(2) === 0
          ? Buffer.from([80, 18, ...random.bytes(16)])
          : Buffer.from([80, 10, ...random.bytes(8)]);
      return withLength(Buffer.concat([base, ma]), base.length + ma.length);
    }
  }
}

/** Signed requests with odd contents that the server must still decide and answer. */
function oddRequest(): RadiusRequest & { attributes: readonly AttributeInput[] } {
  const extra: AttributeInput[] = [];
  for (let i = 0, n = random.int(6); i < n; i++) {
    extra.push(
      random.pick<AttributeInput>([
        ["Attr-26", garbageVsa()],
        [`Attr-${random.pick([4, 8, 30, 31, 61, 87, 200, 250])}`, random.bytes(1 + random.int(20))],
        ["Proxy-State", random.bytes(1 + random.int(200))],
        ["Called-Station-Id", random.bytes(1 + random.int(40))],
        ["Calling-Station-Id", random.bytes(1 + random.int(20)).toString("latin1")],
        [`Vendor-14122-Attr-${1 + random.int(20)}`, random.bytes(1 + random.int(10))],
      ]),
    );
  }
  if (random.int(4) === 0) {
    return {
      code: "Accounting-Request",
      attributes: [
        ["User-Name", "alice"],
        ["Acct-Status-Type", random.int(20)],
        ["Acct-Session-Id", random.bytes(1 + random.int(10)).toString("hex")],
        ...extra,
      ],
    };
  }
  const user = random.pick(["alice", "ALICE", "nobody", random.bytes(1 + random.int(30)).toString("latin1")]);
  const password = random.pick([PASSWORD, "x", random.bytes(1 + random.int(60)).toString("latin1")]);
  return { code: 1, attributes: accessRequestPap(user, password, extra).attributes ?? [] };
}

describe("RADIUS server under fuzzing", () => {
  let server: TestServer;
  let authPort: number;
  let acctPort: number;
  const errors: unknown[] = [];
  /** Rows the setup wrote (creating a user may write an event): the fuzz must add none. */
  let baseline: Record<"radpostauth" | "radacct" | "events", number>;
  const dropped = new Set<string>();

  const db = () => server.core.database.db;
  const count = async (table: "radpostauth" | "radacct" | "events") =>
    Number(
      (
        await db()
          .selectFrom(table)
          .select((e) => e.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const target = (port: number) => ({
    host: "127.0.0.1",
    port,
    secret: SECRET,
    timeoutMs: 2000,
    retries: 0,
    messageAuthenticator: true,
  });

  before(async () => {
    console.log(`fuzz seed ${SEED} (WISP_FUZZ_SEED=${SEED} replays it)`);
    [authPort, acctPort] = [await freeUdpPort(), await freeUdpPort()];
    server = await startTestServer({
      env: {
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(authPort),
        RADIUS_ACCT_PORT: String(acctPort),
      },
    });
    // The RADIUS door logs through app.log: keep what it reports as errors.
    const log = server.app.log as unknown as Record<string, unknown>;
    log.error = (object: object, msg: string) => errors.push({ ...object, msg });
    log.warn = (object: { reason?: string }) => dropped.add(object.reason ?? "");
    const account = await server.account("default");
    // Required Message-Authenticator: no mutation of a signed Access-Request can pass as one.
    await server.core.networks.create(account.id, {
      name: "Fuzz",
      nas_ip: "127.0.0.1",
      secret: SECRET,
      require_message_authenticator: true,
    });
    const alice = await server.core.users.create(account.id, { username: "alice", password: PASSWORD });
    await server.core.attributes.addToUser(account.id, {
      userid: alice.id,
      table: "radreply",
      attribute: "Session-Timeout",
      operator: "=",
      value: "1800",
    });
    await server.core.users.create(account.id, { username: "replacement", password: REPLACEMENT_PASSWORD });
    baseline = { radpostauth: 0, radacct: 0, events: await count("events") };
  });
  after(() => server?.stop());

  test(`${GARBAGE_PACKETS} malformed or unauthenticated datagrams: none answered or recorded`, async () => {
    const socket = dgram.createSocket("udp4");
    let answers = 0;
    socket.on("message", () => answers++);
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
    try {
      for (let i = 0; i < GARBAGE_PACKETS; i++) {
        socket.send(garbage(), i % 2 === 0 ? authPort : acctPort, "127.0.0.1");
        // Let the in-process server read its queue, so the datagrams reach it instead of overflowing.
        if (i % 25 === 24) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      socket.close();
    }
    assert.equal(answers, 0, `seed ${SEED}`);
    // The datagrams got past the client check to the decoder and the authenticator checks.
    const reasons = [...dropped].join("; ");
    for (const reason of [
      /^malformed packet$/,
      /^bad Message-Authenticator/,
      /^bad Request Authenticator/,
      / on the (authentication|accounting) port$/,
    ]) {
      assert.ok(
        [...dropped].some((r) => reason.test(r)),
        `${reason} in ${reasons}`,
      );
    }
    for (const table of ["radpostauth", "radacct", "events"] as const) {
      assert.equal(await count(table), baseline[table], `${table}, seed ${SEED}`);
    }
    assert.deepEqual(errors, [], `seed ${SEED}`);
  });

  test(`${SIGNED_PACKETS} correctly signed odd requests are each answered`, async () => {
    const client = new RadiusClient();
    let accessAnswers = 0;
    try {
      for (let i = 0; i < SIGNED_PACKETS; i += 40) {
        const batch = Array.from({ length: 40 }, () => oddRequest());
        const answered = await Promise.all(
          batch.map((request) => {
            const port = request.code === "Accounting-Request" ? acctPort : authPort;
            return client.send({ ...request, ...target(port) });
          }),
        );
        accessAnswers += answered.filter((a) => a.type !== "Accounting-Response").length;
        for (const [j, answer] of answered.entries()) {
          const sent = batch[j]!.attributes.filter((a) => Array.isArray(a) && a[0] === "Proxy-State");
          const echoed = answer.attributes.filter((a) => a.name === "Proxy-State").map((a) => a.raw);
          assert.deepEqual(
            echoed,
            sent.map((a) => (a as [string, Buffer])[1]),
            "Proxy-State echoed in order",
          );
        }
      }
    } finally {
      client.close();
    }
    // Octets past the Length field are padding (RFC 2865 §3): the packet inside is answered.
    const socket = dgram.createSocket("udp4");
    const answers: Buffer[] = [];
    socket.on("message", (message) => answers.push(message));
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
    const padded = Array.from({ length: 20 }, (_, i) =>
      encodePacket({ identifier: i, ...accessRequestPap("alice", PASSWORD, STATION) }, SECRET, {
        messageAuthenticator: true,
      }),
    );
    for (const packet of padded)
      socket.send(Buffer.concat([packet, random.bytes(1 + random.int(100))]), authPort);
    await new Promise((resolve) => setTimeout(resolve, 500));
    socket.close();
    assert.equal(answers.length, padded.length);
    for (const answer of answers) {
      assert.equal(answer[0], 2, "Access-Accept");
      assert.ok(verifyResponse(answer, SECRET, padded[answer[1]!]!.subarray(4, 20)));
    }
    accessAnswers += answers.length;

    // Only authenticated Access-Requests leave a radpostauth row: one each.
    assert.equal(await count("radpostauth"), accessAnswers, `seed ${SEED}`);
    assert.deepEqual(errors, [], `seed ${SEED}`);
  });

  test("random and near-miss password octets never log in; only the exact octets do", async () => {
    const client = new RadiusClient();
    const exact = Buffer.from(PASSWORD);
    const replacement = Buffer.from(REPLACEMENT_PASSWORD);
    /** A password near `base`: an invalid UTF-8 octet in place of one, one octet off, cut, grown. */
    const nearMiss = (base: Buffer): Buffer => {
      const out = Buffer.from(base);
      const at = random.int(out.length);
      switch (random.int(5)) {
        case 0:
          out[at] = random.pick([0x80, 0xbf, 0xc0, 0xc3, 0xed, 0xf5, 0xfe, 0xff]);
          return out;
        case 1:
          out[at]! ^= 1 << random.int(8);
          return out;
        case 2:
          return out.subarray(0, at);
        case 3:
          return Buffer.concat([out, random.bytes(1 + random.int(20))]);
        default:
          return Buffer.concat([out.subarray(0, at), random.bytes(1 + random.int(3)), out.subarray(at + 1)]);
      }
    };
    const tries: [string, Buffer][] = [];
    for (let i = 0; i < 300; i++) {
      const [user, base] = random.pick<[string, Buffer]>([
        ["alice", exact],
        ["replacement", replacement],
      ]);
      const password = (random.int(4) === 0 ? random.bytes(1 + random.int(128)) : nearMiss(base)).subarray(
        0,
        128,
      );
      // Trailing NULs are padding (RFC 2865 section 5.2): without them it must differ.
      let end = password.length;
      while (end > 0 && password[end - 1] === 0) end--;
      if (password.length === 0 || password.subarray(0, end).equals(base)) continue;
      tries.push([user, password]);
    }
    // The U+FFFD of the stored password (EF BF BD) as one invalid octet: the same text once decoded.
    const fffd = replacement.indexOf(Buffer.from("\uFFFD"));
    for (let i = 0; i < 20; i++) {
      const octet = Buffer.from([0x80 + random.int(0x80)]);
      tries.push([
        "replacement",
        Buffer.concat([replacement.subarray(0, fffd), octet, replacement.subarray(fffd + 3)]),
      ]);
    }
    try {
      for (let i = 0; i < tries.length; i += 30) {
        const batch = tries.slice(i, i + 30);
        const answers = await Promise.all(
          batch.map(([user, password]) =>
            client.send({
              code: "Access-Request",
              attributes: [["User-Name", user], ["User-Password", password], ...STATION],
              ...target(authPort),
            }),
          ),
        );
        for (const [j, answer] of answers.entries()) {
          const [user, password] = batch[j]!;
          assert.equal(answer.type, "Access-Reject", `${user} ${password.toString("hex")}, seed ${SEED}`);
        }
      }
      for (const [user, password] of [
        ["alice", exact],
        ["replacement", replacement],
      ] as const) {
        const answer = await client.send({
          code: "Access-Request",
          attributes: [["User-Name", user], ["User-Password", password], ...STATION],
          ...target(authPort),
        });
        assert.equal(answer.type, "Access-Accept", user);
      }
    } finally {
      client.close();
    }
    assert.deepEqual(errors, [], `seed ${SEED}`);
  });

  test("afterwards a valid login and Status-Server still work", async () => {
    const login = await sendRadius({ ...accessRequestPap("alice", PASSWORD, STATION), ...target(authPort) });
    assert.equal(login.type, "Access-Accept");
    assert.equal(login.attributes.find((a) => a.name === "Session-Timeout")?.value, "1800");
    const wrong = await sendRadius({ ...accessRequestPap("alice", "nope", STATION), ...target(authPort) });
    assert.equal(wrong.type, "Access-Reject");
    assert.equal((await sendRadius({ code: "Status-Server", ...target(authPort) })).type, "Access-Accept");
    assert.equal(
      (await sendRadius({ code: "Status-Server", ...target(acctPort) })).type,
      "Accounting-Response",
    );
    assert.deepEqual(errors, [], `seed ${SEED}`);
  });

  test("another account's network: it claims none of ours, and its identical accounting stays its own", async () => {
    const OTHER_SECRET = "fuzz-Other-77";
    const ours = (await server.account("default")).id;
    const theirs = (await server.account("second")).id;
    // Claims on our 127.0.0.1, from inside or around it, are refused; next to it is fine.
    // (Ranges wider than NETWORK_MIN_PREFIX_IPV4, like 127.0.0.0/8, are refused before their overlap.)
    for (const nasIp of ["127.0.0.1", "127.0.0.0/31", "127.0.0.0/16"]) {
      await assert.rejects(
        server.core.networks.create(theirs, { name: "claim", nas_ip: nasIp, secret: OTHER_SECRET }),
        (error: unknown) => error instanceof ConflictError,
        nasIp,
      );
    }
    await server.core.networks.create(theirs, { name: "twin", nas_ip: "127.0.0.2", secret: OTHER_SECRET });

    // The same accounting packets (same NAS-IP-Address, NAS-Identifier, session ids) from both
    // networks, each signed with its network's secret: every one answered, each kept in its account.
    const sockets = await Promise.all(
      ["127.0.0.1", "127.0.0.2"].map(async (address) => {
        const socket = dgram.createSocket("udp4");
        const answers: Buffer[] = [];
        socket.on("message", (message) => answers.push(message));
        await new Promise<void>((resolve) => socket.bind(0, address, () => resolve()));
        return { socket, answers };
      }),
    );
    const PACKETS = 120;
    const sent: Buffer[][] = [[], []];
    try {
      for (let i = 0; i < PACKETS; i++) {
        const attributes: AttributeInput[] = [
          ["User-Name", random.pick(["alice", "bob"])],
          ["Acct-Status-Type", random.pick(["Start", "Interim-Update", "Stop"])],
          ["Acct-Session-Id", `twin-${random.int(12)}`],
          ["NAS-IP-Address", "10.0.0.1"],
          ["NAS-Identifier", "twin-ap"],
          ["NAS-Port", random.int(3)],
          ["Acct-Session-Time", random.int(1000)],
          ["Event-Timestamp", 1_700_000_000 + i],
        ];
        for (const [j, secret] of [SECRET, OTHER_SECRET].entries()) {
          const packet = encodePacket({ code: 4, identifier: i % 256, attributes }, secret);
          sent[j]!.push(packet);
          sockets[j]!.socket.send(packet, acctPort, "127.0.0.1");
        }
        if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      for (const { socket } of sockets) socket.close();
    }
    for (const [j, secret] of [SECRET, OTHER_SECRET].entries()) {
      const answers = sockets[j]!.answers;
      assert.equal(answers.length, PACKETS, `seed ${SEED}: every packet of network ${j} answered`);
      const byIdentifier = new Map(sent[j]!.map((packet) => [packet[1], packet]));
      for (const answer of answers) {
        assert.ok(
          verifyResponse(answer, secret, byIdentifier.get(answer[1])!.subarray(4, 20)),
          `seed ${SEED}`,
        );
      }
    }
    const sessions = async (accountId: number) =>
      (
        await db()
          .selectFrom("radacct")
          .select(["username", "acctsessionid", "nasportid", "acctuniqueid"])
          .where("account_id", "=", accountId)
          .where("acctsessionid", "like", "twin-%")
          .execute()
      )
        .map((r) => `${r.username} ${r.acctsessionid} ${r.nasportid}`)
        .sort();
    const [mine, their] = [await sessions(ours), await sessions(theirs)];
    assert.ok(mine.length > 0, `seed ${SEED}`);
    assert.deepEqual(their, mine, `seed ${SEED}: the same sessions, one set in each account`);
    assert.deepEqual(errors, [], `seed ${SEED}`);
  });
});
