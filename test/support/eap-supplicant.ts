// A supplicant written for the tests, one conversation through one NAS socket: a real TLS tunnel
// (node's TLS client, TLS 1.2) carried in PEAP or EAP-TTLS packets built here, the server's
// fragments acknowledged (RFC 5216 section 2.1.5), then whatever inner data a test writes. Its
// steps can be taken apart (identity, ClientHello, rest of the handshake), so a test can leave a
// conversation half-open, do something else, and come back to it.
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { Duplex } from "node:stream";
import { connect, type TLSSocket } from "node:tls";
import { decodePacket, encodePacket, type RadiusPacket } from "../../src/radius/packet.ts";
import type { EapTestServer } from "./eap-server.ts";

export const PEAP = 25;
export const TTLS = 21;
const ticks = async (n = 20) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/** RFC 5281 section 10.1: AVP Code, flags (M), 24-bit length, data, padded to 4 octets. */
export function avp(code: number, data: Buffer): Buffer {
  const out = Buffer.alloc(8 + data.length + ((4 - (data.length % 4)) % 4));
  out.writeUInt32BE(code, 0);
  out.writeUInt32BE(8 + data.length, 4);
  out[4] = 0x40;
  data.copy(out, 8);
  return out;
}

/** EAP-TTLS inner PAP (RFC 5281 section 11.2.5): User-Name, User-Password NUL-padded to 16 octets. */
export function ttlsPap(username: string, password: string): Buffer {
  const secret = Buffer.from(password);
  const padded = Buffer.alloc(Math.max(16, Math.ceil(secret.length / 16) * 16));
  secret.copy(padded);
  return Buffer.concat([avp(1, Buffer.from(username)), avp(2, padded)]);
}

export class Supplicant {
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
  private secure: Promise<void> | undefined;
  readonly received: Buffer[] = [];

  /** `nas`: the address it sends from and the network's secret (default: the lab's network). */
  constructor(
    private readonly lab: EapTestServer,
    readonly type: number,
    private readonly nas: { address: string; secret: string } = { address: "127.0.0.1", secret: lab.secret },
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
      this.nas.secret,
      { messageAuthenticator: true },
    );
    const answer = await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no answer")), 5000);
      this.socket.once("message", (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      this.socket.send(packet, this.lab.authPort, "127.0.0.1");
    });
    const decoded = decodePacket(answer, { secret: this.nas.secret });
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

  /** EAP-Response/Identity; for TTLS also the NAK of the PEAP the server proposes first. */
  async begin(identity = "anonymous"): Promise<void> {
    await new Promise<void>((r) => this.socket.bind(0, this.nas.address, r));
    const name = Buffer.from(identity);
    const message = Buffer.concat([Buffer.of(2, 0, 0, 5 + name.length, 1), name]);
    assert.equal((await this.send(message)).type, "Access-Challenge", "the server starts a method");
    if (this.type === TTLS) {
      // RFC 3748 section 5.3.1: the peer's Type-Data lists the method it would rather use.
      assert.equal((await this.send(Buffer.of(2, this.eapId, 0, 6, 3, TTLS))).type, "Access-Challenge");
    }
  }

  /** The ClientHello; resolves once the server's first flight is in (the server holds a TLS connection). */
  async hello(): Promise<RadiusPacket> {
    this.tls = connect({
      socket: this.wire,
      ca: this.lab.certs.caPem,
      servername: "radius.test",
      minVersion: "TLSv1.2",
      maxVersion: "TLSv1.2",
    });
    this.tls.on("error", () => {});
    this.tls.on("data", (d: Buffer) => this.received.push(d));
    this.secure = new Promise<void>((r) => this.tls!.once("secureConnect", () => r()));
    await ticks();
    return this.exchange(this.takeOutgoing());
  }

  /** The rest of the TLS handshake, once hello() has been answered. */
  async finishHandshake(): Promise<void> {
    for (let round = 1; ; round++) {
      if (await Promise.race([this.secure!.then(() => true), ticks(5).then(() => false)])) return;
      if (round > 6) throw new Error("no TLS handshake");
      const answer = await this.exchange(this.takeOutgoing());
      assert.equal(answer.type, "Access-Challenge", `handshake round ${round}`);
    }
  }

  /** EAP-Identity, the Start, and a full TLS 1.2 handshake. */
  async handshake(): Promise<void> {
    await this.begin();
    assert.equal((await this.hello()).type, "Access-Challenge", "handshake round 0");
    await this.finishHandshake();
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
