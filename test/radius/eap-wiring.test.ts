// The EAP engine as Wisp starts it, without test certificates: the server identity is Wisp's own CA
// kept in the database (core/certs), EAP-TLS client certificates are the ones `wisp certs issue`
// makes, and a revocation is refused on the next login. What an operator gets from `npm start`.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { tempDir } from "../support/databases.ts";
import { eapolTest, eapolTestUnavailable } from "../support/eapol.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "wiring-Secret-14";

describe("EAP with Wisp's own certificates", { skip: eapolTestUnavailable() ?? false }, () => {
  let server: TestServer;
  let port: number;
  let accountId: number;
  const dir = tempDir("eap-wiring");
  let caFile: string;
  let serverName: string;

  before(async () => {
    port = await freeUdpPort();
    server = await startTestServer({
      env: { RADIUS_HOST: "127.0.0.1", RADIUS_AUTH_PORT: String(port), RADIUS_ACCT_PORT: "0" },
    });
    accountId = (await server.account("default")).id;
    await server.core.networks.create(accountId, { name: "office", nas_ip: "127.0.0.1", secret: SECRET });
    await server.core.users.create(accountId, { username: "alice", password: "alice-Pw-1" });
    await server.core.users.create(accountId, { username: "carol", password: "carol-Pw-1" });
    const authority = await server.core.certs.serverCredentials();
    caFile = path.join(dir, "ca.pem");
    fs.writeFileSync(caFile, authority.ca.join("\n"));
    serverName = server.core.certs.serverName();
  });
  after(() => server?.stop());

  test("PEAP checks the generated server certificate against the CA and its name, and logs in", async () => {
    const peap = await eapolTest({
      port,
      secret: SECRET,
      raw: { eap: "PEAP" },
      network: {
        identity: "alice",
        anonymous_identity: "anonymous@example.org",
        password: "alice-Pw-1",
        phase2: "autheap=MSCHAPV2",
        ca_cert: caFile,
        domain_match: serverName,
      },
    });
    assert.ok(peap.success && peap.mppeOk, peap.output.slice(-2000));
    const wrongName = await eapolTest({
      port,
      secret: SECRET,
      raw: { eap: "PEAP" },
      network: {
        identity: "alice",
        password: "alice-Pw-1",
        phase2: "autheap=MSCHAPV2",
        ca_cert: caFile,
        domain_match: "not-the-server.example.com",
      },
    });
    assert.equal(wrongName.success, false, "the supplicant refuses a server that does not match");
  });

  test("EAP-TLS with an issued PKCS#12 logs in; revoked, it is refused", async () => {
    const issued = await server.core.certs.issue(accountId, { username: "carol", password: "p12-Password" });
    const p12 = path.join(dir, "carol.p12");
    fs.writeFileSync(p12, issued.pkcs12);
    const login = () =>
      eapolTest({
        port,
        secret: SECRET,
        raw: { eap: "TLS" },
        network: {
          identity: "carol",
          ca_cert: caFile,
          domain_match: serverName,
          private_key: p12,
          private_key_passwd: "p12-Password",
        },
      });
    const first = await login();
    assert.ok(first.success && first.mppeOk, first.output.slice(-2000));
    await server.core.certs.revoke(accountId, issued.certificate.serial);
    const revoked = await login();
    assert.equal(revoked.success, false, "a revoked certificate is refused");
  });
});
