// The two engines of EAP's TLS (EAP_TLS_ENGINE, issue 32): OpenSSL's memory BIOs through Wisp's
// addon (src/radius/eap/native-tunnel.ts) and node's TLSSocket (src/radius/eap/tunnel.ts), each a
// TLS server driven flight by flight by node's TLS client over memory, as the EAP methods drive
// them: the same handshakes (TLS 1.2 and 1.3), the same keys as the client exports, application
// data both ways, client certificates and their verdicts, tickets for EAP-TLS only, and a clear
// failure for records that are not TLS. The addon must be built (`npm test` builds it first).
import assert from "node:assert/strict";
import { randomBytes, X509Certificate } from "node:crypto";
import fs from "node:fs";
import { Duplex } from "node:stream";
import { after, before, describe, test } from "node:test";
import { type ConnectionOptions, connect, type TLSSocket } from "node:tls";
import { loadConfig } from "../../src/config.ts";
import { presentedCertificate } from "../../src/core/certs/presented.ts";
import { masterSessionKey } from "../../src/radius/eap/keys.ts";
import { openSslAddon } from "../../src/radius/eap/native-addon.ts";
import { EapType } from "../../src/radius/eap/packet.ts";
import { buildTunnels, resolveTlsEngine } from "../../src/radius/eap/tls-contexts.ts";
import type { Tunnel } from "../../src/radius/eap/tunnel.ts";
import type { TlsEngine } from "../../src/radius/eap/types.ts";
import { type EapTestCerts, issue, makeEapCerts } from "../support/eap-certs.ts";

/** node's TLS client over memory: what it writes is taken by the test, what the server sends pushed. */
class MemoryClient {
  readonly socket: TLSSocket;
  private readonly wire: Duplex;
  private outgoing: Buffer[] = [];
  readonly received: Buffer[] = [];
  secure = false;
  error: Error | undefined;

  constructor(options: ConnectionOptions) {
    this.wire = new Duplex({
      read() {},
      write: (chunk: Buffer, _encoding, done) => {
        this.outgoing.push(chunk);
        done();
      },
    });
    this.socket = connect({ ...options, socket: this.wire });
    this.socket.on("secureConnect", () => {
      this.secure = true;
    });
    this.socket.on("data", (chunk: Buffer) => this.received.push(chunk));
    this.socket.on("error", (error) => {
      this.error = error;
    });
  }

  /** What the client wrote since the last call, once it has had a few turns to write it. */
  async take(): Promise<Buffer> {
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    const out = Buffer.concat(this.outgoing);
    this.outgoing = [];
    return out;
  }

  push(records: Buffer): void {
    if (records.length > 0) this.wire.push(records);
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Flights back and forth until the client is connected, the server fails, or nothing moves. */
async function handshake(server: Tunnel, client: MemoryClient): Promise<void> {
  for (let flight = 0; flight < 8 && !client.secure && !server.failure; flight++) {
    const records = await client.take();
    if (records.length === 0) break;
    client.push(await server.receive(records));
  }
  // The client's last flight (its Finished on TLS 1.2 resumption and 1.3), and what answers it
  // (TLS 1.3 tickets).
  const last = await client.take();
  if (last.length > 0) client.push(await server.receive(last));
}

const ENGINES: TlsEngine[] = ["openssl", "node"];

let certs: EapTestCerts;
before(() => {
  certs = makeEapCerts();
});
after(() => fs.rmSync(certs.dir, { recursive: true, force: true }));

function openers(engine: TlsEngine, ticketKeys = randomBytes(48)) {
  return buildTunnels(
    { key: certs.serverKeyPem, cert: certs.serverCertPem, chain: [], ca: [certs.caPem] },
    ticketKeys,
    engine,
  );
}

function client(options: ConnectionOptions = {}): MemoryClient {
  return new MemoryClient({
    ca: certs.caPem,
    servername: "radius.test",
    minVersion: "TLSv1.2",
    maxVersion: "TLSv1.2",
    ...options,
  });
}

test("the build made the OpenSSL addon, and auto takes it", () => {
  const found = openSslAddon();
  assert.ok("addon" in found, `the addon loads: ${"error" in found ? found.error : ""}`);
  assert.equal(resolveTlsEngine("auto"), "openssl");
  assert.equal(resolveTlsEngine("node"), "node");
});

test("EAP_TLS_ENGINE: auto by default, openssl or node", () => {
  assert.equal(loadConfig({}).eapLimits.tlsEngine, "auto");
  assert.equal(loadConfig({ EAP_TLS_ENGINE: "openssl" }).eapLimits.tlsEngine, "openssl");
  assert.equal(loadConfig({ EAP_TLS_ENGINE: "node" }).eapLimits.tlsEngine, "node");
  assert.throws(
    () => loadConfig({ EAP_TLS_ENGINE: "gnutls" }),
    /EAP_TLS_ENGINE must be one of auto, openssl, node/,
  );
});

for (const engine of ENGINES) {
  describe(`EAP TLS on ${engine}`, () => {
    for (const version of ["TLSv1.2", "TLSv1.3"] as const) {
      test(`${version}: the handshake, the client's keys, application data both ways`, async () => {
        const server = openers(engine).get(EapType.Peap)!(false);
        const peer = client({ minVersion: version, maxVersion: version });
        try {
          await handshake(server, peer);
          assert.equal(server.failure, undefined);
          assert.ok(server.secure && peer.secure, "both ends finished the handshake");
          assert.equal(server.protocol, version);
          // The MSK both ends derive (RFC 5216 section 2.3, RFC 9427 section 2.1).
          assert.deepEqual(
            server.masterSessionKey(EapType.Peap),
            masterSessionKey(
              {
                protocol: peer.socket.getProtocol(),
                exportKeyingMaterial: (n, label, context) =>
                  (peer.socket.exportKeyingMaterial as (n: number, l: string, c?: Buffer) => Buffer)(
                    n,
                    label,
                    context,
                  ),
              },
              EapType.Peap,
            ),
          );
          peer.socket.write("inner request");
          assert.equal((await server.receive(await peer.take())).length, 0, "nothing to answer");
          assert.equal(server.takeApplicationData().toString(), "inner request");
          assert.equal(server.takeApplicationData().length, 0, "taken once");
          const answer = await server.send(Buffer.from("inner answer"));
          peer.push(answer);
          await peer.take();
          assert.equal(Buffer.concat(peer.received).toString(), "inner answer");
        } finally {
          peer.destroy();
          server.destroy();
        }
      });
    }

    test("EAP-TLS: a client certificate of the CA chains; a foreign one is named, not refused", async () => {
      const verdicts: (string | null)[] = [];
      for (const issuer of ["ca", "foreign"] as const) {
        const files = certs.client("carol", issuer);
        const server = openers(engine).get(EapType.Tls)!(true);
        const peer = client({ cert: fs.readFileSync(files.cert), key: fs.readFileSync(files.key) });
        try {
          await handshake(server, peer);
          assert.ok(server.secure, `${issuer}: the handshake completes (the verdict is the method's)`);
          const der = server.clientCertificateDer();
          assert.ok(der, "the client's certificate");
          assert.deepEqual(der, new X509Certificate(fs.readFileSync(files.cert)).raw);
          // The OpenSSL engine reads it from the handshake's parse; node's from an X509Certificate.
          assert.deepEqual(
            server.clientCertificate(),
            presentedCertificate(new X509Certificate(fs.readFileSync(files.cert))),
          );
          verdicts.push(server.clientCertificateError());
        } finally {
          peer.destroy();
          server.destroy();
        }
      }
      assert.deepEqual(verdicts, [null, "UNABLE_TO_VERIFY_LEAF_SIGNATURE"]);
    });

    test("EAP-TLS: the client certificate's serial, validity and names, every kind of subjectAltName", async () => {
      issue(
        certs.dir,
        "ca",
        "client-names",
        "dave",
        "subjectAltName=DNS:dave.example,email:dave@example.test,URI:urn:wisp:dave,IP:192.0.2.7\nextendedKeyUsage=clientAuth\n",
      );
      const pem = fs.readFileSync(`${certs.dir}/client-names.pem`);
      const server = openers(engine).get(EapType.Tls)!(true);
      const peer = client({ cert: pem, key: fs.readFileSync(`${certs.dir}/client-names.key`) });
      try {
        await handshake(server, peer);
        const read = server.clientCertificate()!;
        const node = new X509Certificate(pem);
        assert.deepEqual(read, presentedCertificate(node));
        assert.equal(read.commonName, "dave");
        assert.deepEqual(read.names, ["dave", "dave.example", "dave@example.test", "urn:wisp:dave"]);
        assert.equal(read.serialNumber, node.serialNumber);
        assert.equal(read.validTo.getTime(), new Date(node.validTo).getTime());
      } finally {
        peer.destroy();
        server.destroy();
      }
    });

    test("resumption: an EAP-TLS session resumes (on another context of the same keys), a PEAP one does not", async () => {
      const keys = randomBytes(48);
      const files = certs.client("dave");
      const identity = { cert: fs.readFileSync(files.cert), key: fs.readFileSync(files.key) };
      for (const [type, resumes] of [
        [EapType.Tls, true],
        [EapType.Peap, false],
      ] as const) {
        const first = openers(engine, keys).get(type)!(type === EapType.Tls);
        const peer = client(identity);
        await handshake(first, peer);
        assert.ok(first.secure);
        const session = peer.socket.getSession();
        peer.destroy();
        first.destroy();
        // A context built again from the same keys: a refresh of the credentials, another worker.
        const again = openers(engine, keys).get(type)!(type === EapType.Tls);
        const back = client({ ...identity, ...(session ? { session } : {}) });
        await handshake(again, back);
        assert.ok(again.secure, "the second handshake completes");
        assert.equal(back.socket.isSessionReused(), resumes, `type ${type}: resumed ${resumes}`);
        back.destroy();
        again.destroy();
      }
    });

    test("records that are not TLS fail the connection with OpenSSL's reason", async () => {
      const server = openers(engine).get(EapType.Ttls)!(false);
      try {
        await server.receive(Buffer.from("GET / HTTP/1.1\r\nHost: radius.test\r\n\r\n"));
        assert.ok(server.failure, "a failure");
        assert.match(server.failure!, /wrong version number|unexpected|http request|record/i);
        assert.equal(server.secure, false);
      } finally {
        server.destroy();
      }
    });
  });
}
