// Fuzzing the EAP side of the RADIUS door (issue 14, "Bad input"; the EAP part of fuzz.test.ts, in
// a file of its own for size): correctly signed Access-Requests whose EAP-Message, State and
// EAP-TLS fragments are random or mutated from real ones (a real identity, a real ClientHello, a
// real State). Every answer must be a correctly signed Access-Challenge or Access-Reject (or none),
// the server must keep serving, the conversations it kept must stay within the cap and the byte
// budget, and a valid PEAP login must still succeed afterwards. Seeded PRNG: WISP_FUZZ_SEED=<seed>
// replays a failure.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import dgram from "node:dgram";
import { after, before, describe, test } from "node:test";
import { type AttributeInput, decodePacket, encodePacket, verifyResponse } from "../../src/radius/packet.ts";
import { clientHello, eap } from "../support/eap-packets.ts";
import { type EapTestServer, peapLogin, startEapServer } from "../support/eap-server.ts";
import { eapolTestUnavailable } from "../support/eapol.ts";
import { prng } from "../support/prng.ts";

const missing = eapolTestUnavailable();
if (missing) console.log(`# skipping the EAP fuzz test: ${missing}`);
const SEED = Number(process.env.WISP_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const PACKETS = 3000;

const random = prng(SEED);

/** A few random bit flips, cuts or extensions of a real buffer. */
function mutate(buf: Buffer): Buffer {
  const out = Buffer.from(buf);
  switch (random.int(4)) {
    case 0:
      for (let i = 0, n = 1 + random.int(4); i < n && out.length; i++)
        out[random.int(out.length)]! ^= 1 << random.int(8);
      return out;
    case 1:
      return out.subarray(0, random.int(out.length + 1));
    case 2:
      return Buffer.concat([out, random.bytes(1 + random.int(64))]);
    default:
      if (out.length >= 4) out.writeUInt16BE(random.int(0x10000), 2); // the EAP Length field
      return out;
  }
}

/** EAP-Message split over several attributes at random points (RFC 3579 section 3.1). */
function split(message: Buffer): AttributeInput[] {
  const parts: AttributeInput[] = [];
  let rest = message;
  while (rest.length > 253 || (rest.length > 1 && random.int(4) === 0)) {
    const cut = 1 + random.int(Math.min(253, rest.length - 1));
    parts.push(["EAP-Message", rest.subarray(0, cut)]);
    rest = rest.subarray(cut);
  }
  if (rest.length) parts.push(["EAP-Message", rest]);
  return parts;
}

describe("EAP fuzz", { skip: missing ?? false }, () => {
  let lab: EapTestServer;
  const PER_NETWORK = 300;
  const MiB = 2 ** 20;
  /** About 30 conversations holding a TLS connection (issue 22 point 7). */
  const BYTES_PER_NETWORK = 2 * MiB;

  /** One NAS port: one request in flight at a time, so identifiers never collide. */
  class Port {
    readonly socket = dgram.createSocket("udp4");
    private id = 0;
    private pending: { resolve: (b: Buffer | null) => void; authenticator: Buffer; id: number } | undefined;
    constructor() {
      this.socket.on("message", (message) => {
        const entry = this.pending;
        if (!entry || message[1] !== entry.id) return;
        this.pending = undefined;
        assert.ok(verifyResponse(message, lab.secret, entry.authenticator), "answer correctly signed");
        entry.resolve(message);
      });
    }
    bind() {
      return new Promise<void>((resolve) => this.socket.bind(0, "127.0.0.1", resolve));
    }
    /** Sends a signed Access-Request; resolves with the verified answer, or null after a while. */
    send(attributes: AttributeInput[], waitMs = 1500): Promise<Buffer | null> {
      const identifier = this.id++ & 0xff;
      const packet = encodePacket(
        { code: "Access-Request", identifier, attributes: [["User-Name", "fuzz"], ...attributes] },
        lab.secret,
        { messageAuthenticator: true },
      );
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          this.pending = undefined;
          resolve(null);
        }, waitMs);
        this.pending = {
          id: identifier,
          authenticator: packet.subarray(4, 20),
          resolve: (answer) => {
            clearTimeout(timer);
            resolve(answer);
          },
        };
        this.socket.send(packet, lab.authPort, "127.0.0.1");
      });
    }
  }
  const ports: Port[] = [];

  before(async () => {
    lab = await startEapServer({
      limits: {
        perNetwork: PER_NETWORK,
        total: 1000,
        perNetworkBytes: BYTES_PER_NETWORK,
        totalBytes: 8 * MiB,
      },
    });
    await lab.user("alice", "alice-pw");
  });
  after(async () => {
    for (const port of ports) port.socket.close();
    await lab?.stop();
  });

  test(`${PACKETS} random and mutated EAP requests, then PEAP still logs in (seed ${SEED})`, async () => {
    const hello = await clientHello();
    const answers = new Map<string, number>();
    const windowSize = 64;
    let sent = 0;
    const one = async (port: Port) => {
      const send = port.send.bind(port);
      // A real conversation to mutate from: identity -> PEAP Start with a fresh State.
      const start = await send([["EAP-Message", eap(2, random.int(256), 1, Buffer.from("alice"))]]);
      assert.ok(start, "the server answers a valid identity");
      const reply = decodePacket(start, { secret: lab.secret });
      const state = reply.attributes.find((a) => a.name === "State")?.raw ?? randomBytes(16);
      const eapId = reply.attributes.find((a) => a.name === "EAP-Message")?.raw[1] ?? 0;
      let message: Buffer;
      switch (random.int(5)) {
        case 0: // random bytes
          message = random.bytes(random.int(300));
          break;
        case 1: // a mutated real ClientHello, with a valid or odd flags octet
          message = eap(
            2,
            eapId,
            25,
            Buffer.concat([Buffer.of(random.int(2) ? 0 : random.int(256)), mutate(hello)]),
          );
          break;
        case 2: {
          // a fragment: L/M flags and a TLS Message Length that may disagree with what follows
          const header = Buffer.alloc(5);
          header[0] = [0x80, 0x40, 0xc0, random.int(256)][random.int(4)]!;
          header.writeUInt32BE(random.int(2) ? hello.length : random.int(0x20000), 1);
          message = eap(
            2,
            eapId,
            random.int(2) ? 25 : 21,
            Buffer.concat([header, hello.subarray(0, random.int(hello.length))]),
          );
          break;
        }
        case 3: // a mutated EAP header of a valid response
          message = mutate(eap(2, eapId, 25, Buffer.concat([Buffer.of(0), hello])));
          break;
        default: // a real start, a random type
          message = eap(2, eapId, random.int(256), random.bytes(random.int(40)));
      }
      const stateAttr: AttributeInput[] =
        random.int(4) === 0 ? [] : [["State", random.int(3) === 0 ? mutate(state) : state]];
      const answer = await send([...split(message.length ? message : Buffer.of(2)), ...stateAttr], 250);
      const kind = answer ? decodePacket(answer, { secret: lab.secret }).type : "none";
      answers.set(kind, (answers.get(kind) ?? 0) + 1);
      assert.ok(["Access-Challenge", "Access-Reject", "none"].includes(kind), `answer ${kind}`);
    };
    await Promise.all(
      Array.from({ length: windowSize }, async () => {
        const port = new Port();
        ports.push(port);
        await port.bind();
        while (sent < PACKETS / 2) {
          sent++;
          await one(port);
        }
      }),
    );
    console.log(`seed ${SEED}: answers ${JSON.stringify(Object.fromEntries(answers))}`);
    assert.ok((answers.get("Access-Reject") ?? 0) > 0, "bad input is rejected");
    const engine = lab.server.radius.eap!;
    assert.ok(engine.openConversations <= PER_NETWORK, "conversations stay within the cap");
    assert.ok(engine.heldBytes() <= BYTES_PER_NETWORK, `${engine.heldBytes()} bytes held, within the budget`);

    const peap = await peapLogin(lab);
    assert.equal(peap.code, 0, `seed ${SEED}\n${peap.output.slice(-1500)}`);
    assert.ok(peap.mppeOk);
  });
});
