// EAP packets a test sends by hand: RFC 3748 section 4 framing, and a real TLS ClientHello.
import { Duplex } from "node:stream";
import { connect } from "node:tls";

/** RFC 3748 section 4: Code, Identifier, Length, Type, Type-Data. */
export const eap = (code: number, id: number, type: number, data: Buffer) => {
  const out = Buffer.alloc(5 + data.length);
  out[0] = code;
  out[1] = id;
  out.writeUInt16BE(out.length, 2);
  out[4] = type;
  data.copy(out, 5);
  return out;
};

/** A TLS ClientHello as a supplicant would send it (a node TLS client over a Duplex). */
export async function clientHello(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const wire = new Duplex({
    read() {},
    write(chunk, _e, done) {
      chunks.push(chunk);
      done();
    },
  });
  const socket = connect({ socket: wire, rejectUnauthorized: false, servername: "radius.test" });
  socket.on("error", () => {});
  for (let i = 0; i < 5 && chunks.length === 0; i++) await new Promise((r) => setImmediate(r));
  socket.destroy();
  return Buffer.concat(chunks);
}
