// Inner methods out of order (issue 14, "Bad input"): a real TLS tunnel (node's TLS client, TLS
// 1.2, carried in PEAP / EAP-TTLS packets built here), then an inner message the server did not ask
// for: an EAP-MSCHAPv2 Response before any challenge (PEAP, RFC 2759 section 4 / draft-kamath
// PEAPv0), or a non-EAP TTLS AVP while an inner EAP conversation is under way (RFC 5281 section
// 11.1). Each must end in Access-Reject with the conversation freed.
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { Duplex } from "node:stream";
import { after, before, describe, test } from "node:test";
import { connect, type TLSSocket } from "node:tls";
import { decodePacket, encodePacket, type RadiusPacket } from "../../src/radius/packet.ts";
import { type EapTestServer, startEapServer } from "../support/eap-server.ts";
import { eapolTestUnavailable } from "../support/eapol.ts";

const missing = eapolTestUnavailable();
if (missing) console.log(`# skipping inner-order tests: ${missing}`);
const PEAP = 25;
const TTLS = 21;
const ticks = async (n = 20) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/** One supplicant conversation through one NAS socket. */
class Supplicant {
  readonly socket = dgram.createSocket("udp4");
  private radiusId = 0;
  private state: Buffer | undefined;
  eapId = 0;
  last: RadiusPacket | undefined;
  private readonly outgoing: Buffer[] = [];
  private readonly wire = new Duplex({
    read() {},
    write: (chunk, _e, done) => {
      this.outgoing.push(chunk);
      done();
    },
  });
  tls: TLSSocket | undefined;
  readonly received: Buffer[] = [];
  constructor(
    private readonly lab: EapTestServer,
    readonly type: number,
  ) {}

  async send(eapMessage: Buffer): Promise<RadiusPacket> {
    const id = this.radiusId++ & 0xff;
    const packet = encodePacket(
      {
        code: "Access-Request",
        identifier: id,
        attributes: [
          ["User-Name", "anonymous"],
          ["EAP-Message", eapMessage],
          ...(this.state ? [["State", this.state] as ["State", Buffer]] : []),
        ],
      },
      this.lab.secret,
      { messageAuthenticator: true },
    );
    const answer = await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no answer")), 3000);
      this.socket.once("message", (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      this.socket.send(packet, this.lab.authPort, "127.0.0.1");
    });
    const decoded = decodePacket(answer, { secret: this.lab.secret });
    this.last = decoded;
    this.state = decoded.attributes.find((a) => a.name === "State")?.raw;
    const eap = Buffer.concat(decoded.attributes.filter((a) => a.name === "EAP-Message").map((a) => a.raw));
    if (eap.length > 1) this.eapId = eap[1]!;
    return decoded;
  }

  /** The TLS data of an EAP-Request (RFC 5216 section 3.2: flags, optional 4-octet length). */
  private static tlsData(packet: RadiusPacket): { flags: number; data: Buffer } {
    const eap = Buffer.concat(packet.attributes.filter((a) => a.name === "EAP-Message").map((a) => a.raw));
    const flags = eap[5] ?? 0;
    return { flags, data: eap.subarray(flags & 0x80 ? 10 : 6) };
  }

  /** Sends TLS data (or an ACK) and gathers the server's fragmented answer, ACKing each fragment. */
  async exchange(data: Buffer): Promise<RadiusPacket> {
    const response = (payload: Buffer) => {
      const out = Buffer.alloc(6 + payload.length);
      out[0] = 2;
      out[1] = this.eapId;
      out.writeUInt16BE(out.length, 2);
      out[4] = this.type;
      out[5] = 0;
      payload.copy(out, 6);
      return out;
    };
    let answer = await this.send(response(data));
    const parts: Buffer[] = [];
    for (;;) {
      if (answer.type !== "Access-Challenge") return answer;
      const { flags, data: fragment } = Supplicant.tlsData(answer);
      parts.push(fragment);
      if (!(flags & 0x40)) break;
      answer = await this.send(response(Buffer.alloc(0)));
    }
    const all = Buffer.concat(parts);
    if (all.length) this.wire.push(all);
    await ticks();
    return answer;
  }

  takeOutgoing(): Buffer {
    return Buffer.concat(this.outgoing.splice(0));
  }

  /** EAP-Identity, the Start, and a full TLS 1.2 handshake. */
  async handshake(): Promise<void> {
    await new Promise<void>((r) => this.socket.bind(0, "127.0.0.1", r));
    const identity = Buffer.concat([Buffer.of(2, 0, 0, 14, 1), Buffer.from("anonymous")]);
    await this.send(identity);
    if (this.type === TTLS) {
      // PEAP is proposed first: NAK it for TTLS (RFC 3748 section 5.3.1).
      await this.send(Buffer.of(2, this.eapId, 0, 6, 3, TTLS));
    }
    this.tls = connect({
      socket: this.wire,
      ca: this.lab.certs.caPem,
      servername: "radius.test",
      minVersion: "TLSv1.2",
      maxVersion: "TLSv1.2",
    });
    this.tls.on("error", () => {});
    this.tls.on("data", (d: Buffer) => this.received.push(d));
    const secure = new Promise<void>((r) => this.tls!.once("secureConnect", () => r()));
    await ticks();
    for (let i = 0; i < 6; i++) {
      const answer = await this.exchange(this.takeOutgoing());
      assert.equal(answer.type, "Access-Challenge", `handshake round ${i}`);
      if (await Promise.race([secure.then(() => true), ticks(5).then(() => false)])) return;
    }
    throw new Error("no TLS handshake");
  }

  /** Writes inner data into the tunnel and sends it: the server's answer (fragments gathered). */
  async inner(data: Buffer): Promise<RadiusPacket> {
    this.tls!.write(data);
    await ticks();
    return this.exchange(this.takeOutgoing());
  }

  close() {
    this.tls?.destroy();
    this.socket.close();
  }
}

/** RFC 5281 section 10.1: AVP Code, flags (M), 24-bit length, data, padded to 4 octets. */
function avp(code: number, data: Buffer): Buffer {
  const out = Buffer.alloc(8 + data.length + ((4 - (data.length % 4)) % 4));
  out.writeUInt32BE(code, 0);
  out.writeUInt32BE(8 + data.length, 4);
  out[4] = 0x40;
  data.copy(out, 8);
  return out;
}

describe("inner methods out of order", { skip: missing ?? false }, () => {
  let lab: EapTestServer;
  before(async () => {
    lab = await startEapServer();
    await lab.user("alice", "alice-pw");
  });
  after(() => lab?.stop());
  const open = () => lab.server.radius.eap!.openConversations;

  test("PEAP: an EAP-MSCHAPv2 Response before the challenge is rejected", async () => {
    const peer = new Supplicant(lab, PEAP);
    try {
      await peer.handshake();
      // The ACK of the server's Finished; the server then asks for the inner identity (PEAPv0: an
      // EAP-Request/Identity without its header, so its first octet is Type 1).
      assert.equal((await peer.exchange(Buffer.alloc(0))).type, "Access-Challenge");
      assert.equal(Buffer.concat(peer.received)[0], 1, "inner Identity request");
      // PEAPv0 carries inner EAP without its 4-octet header: Type 26, OpCode 2 (Response),
      // MS-CHAPv2-ID, MS-Length, Value-Size 49, 49 octets, Name (RFC 2759 section 4).
      const response = Buffer.concat([
        Buffer.of(26, 2, 0, 0, 59, 49),
        Buffer.alloc(49, 0x11),
        Buffer.from("alice"),
      ]);
      const answer = await peer.inner(response);
      assert.equal(answer.type, "Access-Reject");
      assert.equal(open(), 0, "conversation freed");
    } finally {
      peer.close();
    }
  });

  test("TTLS: a User-Password AVP while an inner EAP-MSCHAPv2 conversation waits is rejected", async () => {
    const peer = new Supplicant(lab, TTLS);
    try {
      await peer.handshake();
      // Inner EAP begins: an EAP-Message AVP (79) with EAP-Response/Identity.
      const identity = Buffer.concat([Buffer.of(2, 0, 0, 10, 1), Buffer.from("alice")]);
      peer.tls!.write(avp(79, identity));
      await ticks();
      const challenge = await peer.exchange(peer.takeOutgoing());
      assert.equal(challenge.type, "Access-Challenge", "the server goes on with inner EAP");
      const inner = Buffer.concat(peer.received);
      assert.equal(inner.readUInt32BE(0), 79, "an EAP-Message AVP");
      assert.deepEqual([inner[8], inner[12]], [1, 26], "EAP-Request/MSCHAPv2 (the challenge)");
      // Then PAP's User-Password AVP (2) where an EAP-Message is expected.
      const answer = await peer.inner(avp(2, Buffer.from("alice-pw")));
      assert.equal(answer.type, "Access-Reject");
      assert.equal(open(), 0, "conversation freed");
    } finally {
      peer.close();
    }
  });
});
