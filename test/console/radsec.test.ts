// RadSec on the console's network page, at the HTTP level (forms with their CSRF token, a real
// server): transport, live connections from the listener's port, certificates issued (the file is
// the answer to the form; openssl opens it), revoked and downloaded, and an outside CA uploaded,
// refused when bad, and removed; another account's network answers 404.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { createAuthority } from "../../src/core/certs/x509.ts";
import { NO_RADSEC_CONNECTIONS } from "../../src/core/index.ts";
import { ConsoleClient } from "../support/browser.ts";
import { tempDir } from "../support/databases.ts";
import { openssl, opensslMissing, writeFile } from "../support/openssl.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const EMAIL = "radsec@example.com";
const OTHER_EMAIL = "radsec-other@example.com";
const PASSWORD = "radsec console password";
const FILE_PASSWORD = "nas file password";

describe("RadSec on the console", { skip: opensslMissing ?? false }, () => {
  let server: TestServer;
  let client: ConsoleClient;
  let other: ConsoleClient;
  let accountId: number;
  let networkId: number;
  const dir = tempDir("radsec-console");

  before(async () => {
    server = await startTestServer();
    const account = await server.account("default");
    const otherAccount = await server.account("other");
    accountId = account.id;
    await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
    await server.core.admins.create(otherAccount, { email: OTHER_EMAIL, password: PASSWORD });
    client = new ConsoleClient(server.url);
    other = new ConsoleClient(server.url);
    assert.equal((await client.login(EMAIL, PASSWORD)).status, 303);
    assert.equal((await other.login(OTHER_EMAIL, PASSWORD)).status, 303);
  });
  after(async () => {
    server.core.radsecConnections = NO_RADSEC_CONNECTIONS;
    await server?.stop();
  });

  test("a network made without an address is RadSec only; its page says so and who is connected", async () => {
    await client.get("/console/networks/new");
    const made = await client.post("/console/networks", {
      name: "Behind NAT",
      nas_ip: "",
      coa_port: "3799",
      interim_interval: "0",
      stale_after: "0",
      eap_method: "peap",
    });
    assert.equal(made.status, 303, made.text);
    networkId = Number(/\/console\/networks\/(\d+)\/secret/.exec(made.location ?? "")![1]);
    const network = await server.core.networks.get(accountId, networkId);
    assert.deepEqual([network.nas_ip, network.transport], ["", "radsec"]);

    const page = await client.get(`/console/networks/${networkId}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /none: reached over RadSec only/);
    assert.match(page.text, /<dt>Transport<\/dt><dd>RadSec only \(by certificate\)<\/dd>/);
    assert.match(page.text, /<dt>Connected now<\/dt><dd>\s*not connected/);
    assert.match(page.text, /No certificate issued for this network\./);

    server.core.radsecConnections = {
      byNetwork: (account, id) =>
        account === accountId && id === networkId
          ? [
              {
                accountId,
                networkId,
                remote: "203.0.113.7:51000",
                since: "2025-03-04T05:06:07Z",
                tlsVersion: "TLSv1.3",
                protocol: "radius/1.1",
                peerSubject: "CN=ap-17.site.example",
                peerFingerprint: "12:34:AB",
              },
            ]
          : [],
    };
    const live = await client.get(`/console/networks/${networkId}`);
    server.core.radsecConnections = NO_RADSEC_CONNECTIONS;
    assert.match(
      live.text,
      /connected since .*2025.* from <code>203\.0\.113\.7:51000<\/code>, TLSv1\.3 \(radius\/1\.1\)/,
    );
    assert.match(
      live.text,
      /peer <code>CN=ap-17\.site\.example<\/code> <code class="fingerprint">12:34:AB<\/code>/,
    );
  });

  test("issue: a short password is shown again with its error; PEM and PKCS#12 downloads open with openssl", async () => {
    const path = `/console/networks/${networkId}/radsec/certificates`;
    await client.get(`/console/networks/${networkId}`);
    const refused = await client.post(path, { password: "short", days: "30", format: "pem" });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /<p class="error" id="e-password">Password must be 8 to 1024 characters/);
    assert.deepEqual(await server.core.radsec.certificates(accountId, networkId), [], "nothing issued");
    assert.equal((await client.post(path, { password: FILE_PASSWORD }, { csrf: null })).status, 403, "CSRF");

    const pem = await client.post(path, { password: FILE_PASSWORD, days: "30", format: "pem" });
    assert.equal(pem.status, 200);
    assert.equal(pem.headers.get("content-type"), "application/x-pem-file");
    assert.equal(pem.headers.get("cache-control"), "no-store");
    const [issued] = await server.core.radsec.certificates(accountId, networkId);
    assert.match(
      pem.headers.get("content-disposition") ?? "",
      new RegExp(`attachment; filename="wisp-network-${networkId}-${issued!.serial}\\.pem"`),
    );
    const pemFile = writeFile(dir, "nas.pem", pem.text);
    const ca = [...pem.text.matchAll(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g)][1]![0];
    const caFile = writeFile(dir, "ca.pem", ca);
    const verified = await openssl(["verify", "-CAfile", caFile, "-purpose", "sslclient", pemFile]);
    assert.equal(verified.code, 0, verified.stderr);
    assert.equal(
      (await openssl(["pkey", "-in", pemFile, "-passin", `pass:${FILE_PASSWORD}`, "-noout"])).code,
      0,
    );

    // The PKCS#12 answer is binary: fetched with the session's cookie and a fresh token.
    await client.get(`/console/networks/${networkId}`);
    const cookie = [...client.cookies].map(([n, v]) => `${n}=${v}`).join("; ");
    const body = new URLSearchParams({ _csrf: client.csrf, password: FILE_PASSWORD, format: "p12" });
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body,
      redirect: "manual",
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "application/x-pkcs12");
    const p12File = writeFile(dir, "nas.p12", Buffer.from(await response.arrayBuffer()));
    const info = await openssl(["pkcs12", "-in", p12File, "-passin", `pass:${FILE_PASSWORD}`, "-nodes"]);
    assert.equal(info.code, 0, info.stderr);
    assert.match(info.stdout, /subject=CN = wisp-network-\d+/);
    assert.match(info.stdout, /subject=CN = Wisp RadSec client CA/);
  });

  test("the page lists certificates; the PEM link downloads one; revoke marks it revoked", async () => {
    const [first] = await server.core.radsec.certificates(accountId, networkId);
    const page = await client.get(`/console/networks/${networkId}`);
    assert.ok(page.text.includes(`<code>${first!.serial}</code>`));
    assert.ok(page.text.includes(`<code class="fingerprint">${first!.fingerprint}</code>`));
    const download = await client.get(
      `/console/networks/${networkId}/radsec/certificates/${first!.serial}.pem`,
    );
    assert.equal(download.status, 200);
    assert.equal(new X509Certificate(download.text).serialNumber.toLowerCase(), first!.serial);
    assert.ok(!download.text.includes("PRIVATE KEY"));

    const revoke = `/console/networks/${networkId}/radsec/certificates/${first!.serial}/revoke`;
    await other.get("/console/networks");
    assert.equal((await other.post(revoke, {})).status, 404, "another account's network");
    const done = await client.post(revoke, {});
    assert.equal(done.status, 303);
    assert.equal(done.location, `/console/networks/${networkId}?notice=radsec-revoked#radsec`);
    const shown = await client.get(`/console/networks/${networkId}?notice=radsec-revoked`);
    assert.match(shown.text, /The RadSec certificate was revoked/);
    assert.match(shown.text, /<span class="badge bad">revoked<\/span>/);
    assert.equal((await server.core.radsec.certificates(accountId, networkId))[0]!.status, "revoked");
  });

  test("outside CA: bad PEM shown again with its error, upload with a rule, remove; others get 404", async () => {
    const path = `/console/networks/${networkId}/radsec/ca`;
    const outside = await createAuthority("Org RadSec CA", 365);
    await client.get(`/console/networks/${networkId}`);
    const bad = await client.post(path, { ca: "not a certificate", match_field: "cn", patterns: "ap-*" });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /<p class="error" id="e-ca">CA certificate \(PEM\) must be exactly one PEM block/);
    assert.ok(bad.text.includes("not a certificate"), "the field keeps what was typed");
    const withKey = await client.post(path, {
      ca: `${outside.cert}${outside.key}`,
      match_field: "cn",
      patterns: "*",
    });
    assert.equal(withKey.status, 400);
    assert.match(withKey.text, /holds a private key/);
    assert.ok(!withKey.text.includes("PRIVATE KEY-----"), "the key is not echoed back");
    assert.equal(await server.core.radsec.trusted(accountId, networkId), null);

    await other.get("/console/networks");
    assert.equal(
      (await other.post(path, { ca: outside.cert, match_field: "cn", patterns: "*" })).status,
      404,
    );
    assert.equal((await other.get(`/console/networks/${networkId}`)).status, 404);

    const saved = await client.post(path, {
      ca: outside.cert,
      match_field: "dns",
      patterns: "*.site1.example\r\n\r\nspare.example\r\n",
    });
    assert.equal(saved.status, 303, saved.text);
    const trusted = await server.core.radsec.trusted(accountId, networkId);
    assert.deepEqual(trusted!.match, { field: "dns", patterns: ["*.site1.example", "spare.example"] });
    const page = await client.get(`/console/networks/${networkId}?notice=radsec-ca-saved`);
    assert.match(page.text, /<code>CN=Org RadSec CA<\/code>/);
    assert.match(
      page.text,
      /subjectAltName DNS: <code>\*\.site1\.example<\/code> <code>spare\.example<\/code>/,
    );

    const removed = await client.post(`${path}/delete`, {});
    assert.equal(removed.status, 303);
    assert.equal(await server.core.radsec.trusted(accountId, networkId), null);
  });
});
