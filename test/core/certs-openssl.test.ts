// Wisp's certificates as OpenSSL sees them: the PKCS#12 file opened and read by the openssl
// command, the chains verified by it, and a real mutual-TLS handshake through node:tls (OpenSSL)
// with the generated server credentials and an issued PKCS#12: the TLS that EAP runs inside.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import path from "node:path";
import { describe, test } from "node:test";
import tls from "node:tls";
import { createAuthority } from "../../src/core/certs/x509.ts";
import { createCore } from "../../src/core/index.ts";
import type { Database } from "../../src/db/database.ts";
import { tempDir, withDatabase } from "../support/databases.ts";
import { describeCertificate, openssl, opensslMissing, verifyWith, writeFile } from "../support/openssl.ts";

const KEY = Buffer.alloc(32, 7).toString("base64");
const PASSWORD = "correct horse battery";

const coreOf = (database: Database) =>
  createCore(database, { publicUrl: "https://wifi.example.org", webhookSecretKey: KEY });

/** The client certificate inside a PKCS#12 file, as openssl reads it. */
async function clientDer(pkcs12: Buffer): Promise<Buffer> {
  const dir = tempDir("p12");
  const file = writeFile(dir, "client.p12", pkcs12);
  const result = await openssl(["pkcs12", "-in", file, "-nokeys", "-clcerts", "-passin", `pass:${PASSWORD}`]);
  assert.equal(result.code, 0, result.stderr);
  return new X509Certificate(result.stdout).raw;
}

describe("PKCS#12 and chains as openssl sees them", { skip: opensslMissing ?? false }, () => {
  test("the file opens with the password, holds clientAuth and the CN, and every certificate verifies", async () => {
    await withDatabase("sqlite", async (database) => {
      const core = coreOf(database);
      const account = await core.accounts.resolve(undefined);
      await core.users.create(account.id, { username: "alice@example.org", password: "pw" });
      const issued = await core.certs.issue(account.id, {
        username: "alice@example.org",
        password: PASSWORD,
      });
      const dir = tempDir("p12");
      const p12 = writeFile(dir, "alice.p12", issued.pkcs12);
      const info = await openssl(["pkcs12", "-info", "-nokeys", "-in", p12, "-passin", `pass:${PASSWORD}`]);
      assert.equal(info.code, 0, info.stderr);
      assert.match(info.stderr + info.stdout, /MAC: sha256/);
      assert.match(info.stderr + info.stdout, /PBES2, PBKDF2, AES-256-CBC/);
      const wrong = await openssl([
        "pkcs12",
        "-info",
        "-nokeys",
        "-in",
        p12,
        "-passin",
        "pass:wrong password",
      ]);
      assert.notEqual(wrong.code, 0, "a wrong password does not open it");

      const client = await clientDer(issued.pkcs12);
      const text = await describeCertificate(new X509Certificate(client).toString());
      assert.match(text, /TLS Web Client Authentication/);
      assert.doesNotMatch(text, /TLS Web Server Authentication/);
      assert.match(text, /subject=CN=alice@example\.org/);
      assert.match(text, /othername: UPN::?alice@example\.org/);
      assert.match(text, /email:alice@example\.org/);
      const keyOut = await openssl([
        "pkcs12",
        "-in",
        p12,
        "-nocerts",
        "-nodes",
        "-passin",
        `pass:${PASSWORD}`,
      ]);
      assert.match(keyOut.stdout, /BEGIN PRIVATE KEY/);

      const credentials = await core.certs.serverCredentials();
      const ca = writeFile(dir, "ca.pem", credentials.ca[0]!);
      const server = writeFile(dir, "server.pem", credentials.cert);
      const clientPem = writeFile(dir, "client.pem", new X509Certificate(client).toString());
      assert.match((await verifyWith(ca, server, "sslserver")).stdout, /server\.pem: OK/);
      assert.match((await verifyWith(ca, clientPem, "sslclient")).stdout, /client\.pem: OK/);
      // EKU is enforced both ways (eap-lab.md trap 3): neither serves the other purpose.
      assert.notEqual((await verifyWith(ca, clientPem, "sslserver")).code, 0);
      assert.notEqual((await verifyWith(ca, server, "sslclient")).code, 0);
      assert.equal(path.basename(p12), "alice.p12");
    });
  });
});

/** A TLS server with `server` options on a loopback port; resolves with the port and the peers seen. */
async function tlsServer(options: tls.TlsOptions) {
  const peers: (tls.PeerCertificate | null)[] = [];
  const server = tls.createServer(options, (socket) => {
    peers.push(socket.getPeerCertificate());
    socket.end("ok");
  });
  server.on("tlsClientError", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as { port: number }).port, peers, close: () => server.close() };
}

function connect(options: tls.ConnectionOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", ...options }, () =>
      socket.once("data", (d) => resolve(d.toString())),
    );
    socket.on("error", reject);
  });
}

describe("the certificates in a real TLS handshake (OpenSSL through node:tls)", () => {
  test("mutual TLS works with the server credentials and the PKCS#12, name and purposes enforced", async () => {
    await withDatabase("sqlite", async (database) => {
      const core = coreOf(database);
      const account = await core.accounts.resolve(undefined);
      await core.users.create(account.id, { username: "alice", password: "pw" });
      const issued = await core.certs.issue(account.id, { username: "alice", password: PASSWORD });
      const credentials = await core.certs.serverCredentials();
      const server = await tlsServer({
        key: credentials.key,
        cert: [credentials.cert, ...credentials.chain].join(""),
        ca: credentials.ca,
        requestCert: true,
        rejectUnauthorized: true,
        minVersion: "TLSv1.2",
      });
      try {
        const client = { port: server.port, ca: credentials.ca, pfx: issued.pkcs12, passphrase: PASSWORD };
        // As wpa_supplicant with ca_cert and domain_match: the CA and the SAN name must both hold.
        assert.equal(await connect({ ...client, servername: "wifi.example.org" }), "ok");
        const peer = server.peers[0]!;
        assert.equal(peer.subject.CN, "alice");
        assert.equal(
          await core.certs.checkClientCertificate({ account_id: account.id }, peer.raw, "alice"),
          null,
        );
        await assert.rejects(connect({ ...client, servername: "other.example.org" }), /altnames/);
        // A device trusting another CA refuses Wisp (as with the wrong ca_cert in eapol_test).
        const foreign = await createAuthority("Someone Else", 30);
        await assert.rejects(
          connect({ port: server.port, ca: [foreign.cert], servername: "wifi.example.org" }),
          // OpenSSL builds the server's chain from its trust store, so the CA travels with it.
          /self-signed certificate in certificate chain|unable to get local issuer certificate/,
        );
        // Without a client certificate the server ends the handshake (EAP-TLS needs one).
        await assert.rejects(
          connect({ port: server.port, ca: credentials.ca, servername: "wifi.example.org" }),
        );
        // The client certificate cannot act as a server: its EKU is clientAuth only.
        const wrong = await tlsServer({ pfx: issued.pkcs12, passphrase: PASSWORD });
        try {
          await assert.rejects(
            connect({
              port: wrong.port,
              ca: credentials.ca,
              servername: "alice",
              checkServerIdentity: () => undefined,
            }),
            /unsuitable certificate purpose/,
          );
        } finally {
          wrong.close();
        }
      } finally {
        server.close();
      }
    });
  });
});
