// The network page's WPA-Enterprise panel and the CA downloads: what to type into an access point
// (never the network's secret again), the server name, and the CA as PEM and DER whose bytes are
// the server's CA and whose fingerprint is the one openssl computes, behind the console session.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { ConsoleClient } from "../support/browser.ts";
import { openssl, opensslMissing } from "../support/openssl.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const EMAIL = "eap@example.com";
const PASSWORD = "eap console password";
const SECRET = "lobby-shared-secret-42";

describe("WPA-Enterprise on the console", () => {
  let server: TestServer;
  let client: ConsoleClient;
  let networkId: number;

  before(async () => {
    server = await startTestServer({ env: { EAP_SERVER_NAME: "radius.example.net" } });
    const account = await server.account("default");
    const { network } = await server.core.networks.create(account.id, {
      name: "Lobby",
      nas_ip: "10.20.0.0/24",
      secret: SECRET,
    });
    networkId = network.id;
    await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
    client = new ConsoleClient(server.url);
    assert.equal((await client.login(EMAIL, PASSWORD)).status, 303);
  });
  after(() => server?.stop());

  /** A download's bytes, with the session's cookie. */
  async function download(path: string) {
    const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(`${server.url}${path}`, { headers: { cookie }, redirect: "manual" });
    return { response, bytes: Buffer.from(await response.arrayBuffer()) };
  }

  test("the network page says what to type into an access point, without the secret", async () => {
    const page = await client.get(`/console/networks/${networkId}`);
    assert.equal(page.status, 200);
    assert.ok(!page.text.includes(SECRET), "the shared secret is not shown again");
    assert.match(page.text, /WPA-Enterprise \(802\.1X\)/);
    assert.match(page.text, /PEAP \(inner MSCHAPv2\), EAP-TTLS \(inner PAP or MSCHAPv2\), EAP-TLS/);
    assert.match(page.text, /Server name to match<\/dt><dd><code>radius\.example\.net<\/code>/);
    assert.match(page.text, /<dt>Authentication port<\/dt>/);
    const authority = (await server.core.certs.authorityCertificate())!;
    assert.ok(page.text.includes(`<code class="fingerprint">${authority.fingerprint}</code>`));
    assert.match(page.text, /href="\/console\/eap\/ca\.pem"/);
    assert.match(page.text, /href="\/console\/eap\/ca\.der"/);
    // The server certificate the RADIUS server presents carries that name and chains to that CA.
    const credentials = await server.core.certs.serverCredentials();
    const cert = new X509Certificate(credentials.cert);
    assert.equal(cert.subjectAltName, "DNS:radius.example.net");
    assert.ok(cert.verify(new X509Certificate(authority.pem).publicKey));
  });

  test("the CA downloads are the server's CA, PEM and DER, with the page's fingerprint", async () => {
    const authority = (await server.core.certs.authorityCertificate())!;
    const pem = await download("/console/eap/ca.pem");
    assert.equal(pem.response.status, 200);
    assert.equal(pem.response.headers.get("content-type"), "application/x-pem-file");
    assert.match(
      pem.response.headers.get("content-disposition") ?? "",
      /attachment; filename="wisp-eap-ca\.pem"/,
    );
    assert.equal(pem.bytes.toString("utf8"), authority.pem);
    const der = await download("/console/eap/ca.der");
    assert.equal(der.response.status, 200);
    assert.equal(der.response.headers.get("content-type"), "application/pkix-cert");
    assert.deepEqual(der.bytes, new X509Certificate(pem.bytes).raw);
    assert.deepEqual(
      der.bytes,
      (await server.core.certs.serverCredentials()).ca.map((c) => new X509Certificate(c).raw)[0],
    );
  });

  test("openssl computes the fingerprint the page shows", { skip: opensslMissing ?? false }, async () => {
    const { bytes } = await download("/console/eap/ca.der");
    const result = await openssl(["x509", "-inform", "DER", "-noout", "-fingerprint", "-sha256"], bytes);
    assert.equal(result.code, 0, result.stderr);
    const fingerprint = /=([0-9A-F:]+)/.exec(result.stdout)![1]!;
    const page = await client.get(`/console/networks/${networkId}`);
    assert.ok(page.text.includes(fingerprint), fingerprint);
  });

  test("without a session the downloads lead to the login page", async () => {
    for (const path of ["/console/eap/ca.pem", "/console/eap/ca.der"]) {
      const response = await fetch(`${server.url}${path}`, { redirect: "manual" });
      assert.equal(response.status, 303, path);
      assert.match(response.headers.get("location") ?? "", /^\/console\/login\?next=/);
    }
  });
});
