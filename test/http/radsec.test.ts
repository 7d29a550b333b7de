// /api/networks/{id}/radsec...: a network's RadSec settings through the API, against a real server.
// Issued files are opened with openssl (verify -CAfile, pkcs12, pkey); bad PEM and another
// account's network answer in the documented error shape.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { EKU_CLIENT_AUTH } from "../../src/core/certs/pem.ts";
import { createAuthority, createLeaf, signerOf } from "../../src/core/certs/x509.ts";
import { NO_RADSEC_CONNECTIONS } from "../../src/core/index.ts";
import type { Network } from "../../src/core/networks/service.ts";
import { tempDir } from "../support/databases.ts";
import { openssl, opensslMissing, writeFile } from "../support/openssl.ts";
import { type ApiResponse, startTestServer, type TestServer } from "../support/server.ts";

const PASSWORD = "radsec p12 secret";

function isError(res: ApiResponse, status: number, message: RegExp): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.error, true, res.text);
  assert.equal(res.body.code, status, res.text);
  assert.match(res.body.message, message);
}

describe("RadSec settings API", { skip: opensslMissing ?? false }, () => {
  let server: TestServer;
  let key: string;
  let readKey: string;
  let otherKey: string;
  let site: Network;
  let udp: Network;
  let theirs: Network;
  const dir = tempDir("radsec-api");

  before(async () => {
    server = await startTestServer();
    const account = await server.account("default");
    const other = await server.account("other");
    key = await server.key(account, { rateLimit: 100_000 });
    readKey = await server.key(account, { permissions: "networks:read", rateLimit: 100_000 });
    otherKey = await server.key(other, { rateLimit: 100_000 });
    site = (await server.core.networks.create(account.id, { name: "Behind NAT", nas_ip: "" })).network;
    udp = (await server.core.networks.create(account.id, { name: "LAN", nas_ip: "192.0.2.10" })).network;
    theirs = (await server.core.networks.create(other.id, { name: "Theirs", nas_ip: "" })).network;
  });
  after(async () => {
    server.core.radsecConnections = NO_RADSEC_CONNECTIONS;
    await server?.stop();
  });

  test("networks show their transport; several RadSec-only networks need no address", async () => {
    const second = await server.core.networks.create((await server.account("default")).id, {
      name: "Also behind NAT",
      nas_ip: "",
    });
    const list = await server.call("GET", "/api/networks", { key });
    const byName = Object.fromEntries(list.body.data.map((n: Network) => [n.name, [n.nas_ip, n.transport]]));
    assert.deepEqual(byName, {
      "Behind NAT": ["", "radsec"],
      LAN: ["192.0.2.10", "udp"],
      "Also behind NAT": ["", "radsec"],
    });
    await server.core.networks.delete((await server.account("default")).id, second.network.id);
  });

  test("issue: 201 with PEM and PKCS#12 that openssl opens and verifies; listed; read key refused", async () => {
    const path = `/api/networks/${site.id}/radsec/certificates`;
    isError(
      await server.call("POST", path, { key: readKey, body: { password: PASSWORD } }),
      403,
      /networks:write/,
    );
    isError(await server.call("POST", path, { key, body: { password: "short" } }), 400, /password/);
    isError(await server.call("POST", path, { key, body: { password: PASSWORD, days: 0 } }), 400, /days/);
    isError(
      await server.call("POST", path, { key, body: { password: PASSWORD, extra: 1 } }),
      400,
      /extra|additional/,
    );
    assert.deepEqual((await server.call("GET", path, { key })).body, { data: [] }, "nothing half-written");

    const res = await server.call("POST", path, { key, body: { password: PASSWORD, days: 30 } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const { certificate, cert, key: privateKey, ca, pkcs12 } = res.body;
    assert.equal(res.headers.get("location"), `${path}/${certificate.serial}`);
    assert.equal(certificate.status, "valid");
    assert.equal(certificate.subject, `CN=wisp-network-${site.id}`);

    const caFile = writeFile(dir, "ca.pem", ca);
    const certFile = writeFile(dir, "nas.pem", cert);
    const verified = await openssl(["verify", "-CAfile", caFile, "-purpose", "sslclient", certFile]);
    assert.equal(verified.code, 0, verified.stderr);
    assert.match(verified.stdout, /nas\.pem: OK/);
    const p12File = writeFile(dir, "nas.p12", Buffer.from(pkcs12, "base64"));
    const info = await openssl(["pkcs12", "-in", p12File, "-passin", `pass:${PASSWORD}`, "-nodes"]);
    assert.equal(info.code, 0, info.stderr);
    assert.ok(info.stdout.includes(new X509Certificate(cert).toString().trim()), "the certificate");
    assert.ok(info.stdout.includes(new X509Certificate(ca).toString().trim()), "the CA");
    assert.match(info.stdout, /-----BEGIN PRIVATE KEY-----/);
    const wrong = await openssl(["pkcs12", "-in", p12File, "-passin", "pass:not the password", "-nodes"]);
    assert.notEqual(wrong.code, 0);
    const keyFile = writeFile(dir, "nas.key", privateKey);
    const pkey = await openssl(["pkey", "-in", keyFile, "-passin", `pass:${PASSWORD}`, "-pubout"]);
    assert.equal(pkey.code, 0, pkey.stderr);
    assert.equal(
      pkey.stdout.trim(),
      new X509Certificate(cert).publicKey.export({ type: "spki", format: "pem" }).toString().trim(),
    );
    assert.notEqual(
      (await openssl(["pkey", "-in", keyFile, "-passin", "pass:nope"])).code,
      0,
      "the key is encrypted",
    );

    const listed = await server.call("GET", path, { key: readKey });
    assert.deepEqual(listed.body.data, [certificate]);
    const one = await server.call("GET", `${path}/${certificate.serial}`, { key: readKey });
    assert.deepEqual(one.body, { certificate, cert });
    assert.ok(!one.text.includes("PRIVATE KEY"), "the key is never kept");
    assert.equal((await server.call("GET", `/api/networks/${site.id}`, { key })).body.transport, "radsec");
  });

  test("revoke: 200 revoked, unknown 404, bad serial 400, another account 404", async () => {
    const path = `/api/networks/${udp.id}/radsec/certificates`;
    const issued = (await server.call("POST", path, { key, body: { password: PASSWORD } })).body;
    assert.equal((await server.call("GET", `/api/networks/${udp.id}`, { key })).body.transport, "both");
    const serial = issued.certificate.serial as string;
    isError(
      await server.call("POST", `${path}/${serial}/revoke`, { key: otherKey, body: {} }),
      404,
      /not found/,
    );
    isError(await server.call("POST", `${path}/zz/revoke`, { key, body: {} }), 400, /serial/);
    isError(
      await server.call("POST", `${path}/abcdef/revoke`, { key, body: {} }),
      404,
      /no RadSec certificate/,
    );
    const res = await server.call("POST", `${path}/${serial}/revoke`, { key, body: {} });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, "revoked");
    assert.match(res.body.revoked_at, /^\d{4}-/);
    assert.equal((await server.call("GET", `/api/networks/${udp.id}`, { key })).body.transport, "udp");
  });

  test("CA upload: bad PEM 400, not a CA 400, upload, replace, read, remove; scoped to the account", async () => {
    const path = `/api/networks/${site.id}/radsec/ca`;
    const outside = await createAuthority("Meraki Org 1234 RadSec CA", 365);
    const leaf = await createLeaf(await signerOf(outside), {
      commonName: "ap",
      names: [{ type: "dns", value: "ap.example" }],
      purpose: EKU_CLIENT_AUTH,
      days: 5,
    });
    const match = { field: "cn", patterns: ["Q2*"] };
    isError(await server.call("GET", path, { key }), 404, /no uploaded RadSec CA/);
    isError(
      await server.call("PUT", path, {
        key,
        body: { ca: "-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----", match },
      }),
      400,
      /not a readable X\.509/,
    );
    isError(
      await server.call("PUT", path, { key, body: { ca: leaf.cert, match } }),
      400,
      /not a CA certificate/,
    );
    isError(
      await server.call("PUT", path, { key, body: { ca: `${outside.cert}${outside.key}`, match } }),
      400,
      /private key/,
    );
    isError(
      await server.call("PUT", path, {
        key,
        body: { ca: outside.cert, match: { field: "o", patterns: ["x"] } },
      }),
      400,
      /field/,
    );
    isError(await server.call("PUT", path, { key, body: { ca: "x".repeat(70_000), match } }), 400, /ca/);
    isError(
      await server.call("PUT", path, { key: readKey, body: { ca: outside.cert, match } }),
      403,
      /networks:write/,
    );
    isError(
      await server.call("PUT", path, { key: otherKey, body: { ca: outside.cert, match } }),
      404,
      /not found/,
    );
    isError(await server.call("GET", path, { key }), 404, /no uploaded RadSec CA/);

    const put = await server.call("PUT", path, { key, body: { ca: outside.cert, match } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.subject, "CN=Meraki Org 1234 RadSec CA");
    assert.deepEqual(put.body.match, match);
    const replaced = await server.call("PUT", path, {
      key,
      body: { ca: outside.cert, match: { field: "dns", patterns: ["*.site.example"] } },
    });
    assert.deepEqual(replaced.body.match, { field: "dns", patterns: ["*.site.example"] });
    assert.deepEqual((await server.call("GET", path, { key: readKey })).body, replaced.body);
    isError(await server.call("GET", path, { key: otherKey }), 404, /not found/);
    isError(await server.call("DELETE", path, { key: otherKey }), 404, /not found/);
    const { pems } = await server.core.radsec.authorities();
    assert.ok(pems.includes(new X509Certificate(outside.cert).toString()), "the listener trusts it now");

    const settings = await server.call("GET", `/api/networks/${site.id}/radsec`, { key: readKey });
    assert.equal(settings.status, 200, settings.text);
    assert.equal(settings.body.transport, "radsec");
    assert.deepEqual(settings.body.ca, replaced.body);
    assert.deepEqual(settings.body.connections, []);

    const deleted = await server.call("DELETE", path, { key });
    assert.equal(deleted.status, 204);
    isError(await server.call("DELETE", path, { key }), 404, /no uploaded RadSec CA/);
    assert.ok(
      !(await server.core.radsec.authorities()).pems.includes(new X509Certificate(outside.cert).toString()),
    );
  });

  test("live connections come from the listener's port; another account's network is 404", async () => {
    const account = await server.account("default");
    server.core.radsecConnections = {
      byNetwork: (accountId, networkId) =>
        accountId === account.id && networkId === site.id
          ? [
              {
                networkId,
                accountId,
                remote: "203.0.113.5:40001",
                since: "2025-01-02T03:04:05Z",
                tlsVersion: "TLSv1.3",
                protocol: "radius/1.0",
                peerSubject: "CN=ap-1",
                peerFingerprint: "AA:BB",
              },
            ]
          : [],
    };
    const res = await server.call("GET", `/api/networks/${site.id}/radsec`, { key });
    assert.deepEqual(res.body.connections, [
      {
        remote: "203.0.113.5:40001",
        since: "2025-01-02T03:04:05Z",
        tls_version: "TLSv1.3",
        protocol: "radius/1.0",
        peer_subject: "CN=ap-1",
        peer_fingerprint: "AA:BB",
      },
    ]);
    for (const path of [
      `/api/networks/${theirs.id}/radsec`,
      `/api/networks/${theirs.id}/radsec/certificates`,
      `/api/networks/${theirs.id}/radsec/ca`,
    ]) {
      isError(await server.call("GET", path, { key }), 404, /not found/);
    }
    isError(
      await server.call("POST", `/api/networks/${theirs.id}/radsec/certificates`, {
        key,
        body: { password: PASSWORD },
      }),
      404,
      /not found/,
    );
    const other = await server.account("other");
    assert.deepEqual(
      await server.core.radsec.certificates(other.id, theirs.id),
      [],
      "nothing was issued there",
    );
  });
});
