// The certificate the RadSec listener presents: RADSEC_CERT_FILE + RADSEC_KEY_FILE when set (a
// NAS pins its CA), else the EAP server certificate; bad files stop the start with one line.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { createAuthority, createLeaf, EKU_SERVER_AUTH, signerOf } from "../../src/core/certs/x509.ts";
import { PacketCode } from "../../src/radius/packet.ts";
import { tempDir } from "../support/databases.ts";
import { startRadsecLab } from "../support/radsec-lab.ts";

describe("RadSec server certificate", () => {
  test("RADSEC_CERT_FILE and RADSEC_KEY_FILE are what the listener presents", async () => {
    const ca = await createAuthority("Operator CA", 30);
    const leaf = await createLeaf(await signerOf(ca), {
      commonName: "radsec.example.test",
      names: [{ type: "dns", value: "radsec.example.test" }],
      purpose: EKU_SERVER_AUTH,
      days: 30,
    });
    const dir = tempDir("radsec-cert");
    const certFile = path.join(dir, "server.pem");
    const keyFile = path.join(dir, "server.key");
    writeFileSync(certFile, leaf.cert);
    writeFileSync(keyFile, leaf.key);
    const lab = await startRadsecLab({ env: { RADSEC_CERT_FILE: certFile, RADSEC_KEY_FILE: keyFile } });
    try {
      const client = await lab.connect({ ca: ca.cert });
      assert.equal(client.socket.getPeerX509Certificate()?.subject, "CN=radsec.example.test");
      assert.equal(client.socket.authorized, true, "chains to the operator's CA");
      assert.equal((await client.request(PacketCode.StatusServer, [])).type, "Access-Accept");
      client.close();
      await assert.rejects(lab.connect({ ca: lab.serverCa }), /certificate/i, "not the EAP certificate");
    } finally {
      await lab.stop();
    }
    const other = await createLeaf(await signerOf(ca), {
      commonName: "other",
      names: [{ type: "dns", value: "other.test" }],
      purpose: EKU_SERVER_AUTH,
      days: 30,
    });
    const otherKey = path.join(dir, "other.key");
    writeFileSync(otherKey, other.key);
    assert.throws(
      () => loadConfig({ RADSEC_PORT: "2083", RADSEC_CERT_FILE: certFile, RADSEC_KEY_FILE: otherKey }),
      (error: Error) => error instanceof ConfigError && /do not match/.test(error.message),
    );
    assert.throws(() => loadConfig({ RADSEC_CERT_FILE: certFile }), /go together/);
    assert.throws(() => loadConfig({ RADSEC_RADIUS11: "maybe" }), /RADSEC_RADIUS11 must be one of/);
  });

  test("without them the EAP server certificate is presented", async () => {
    const lab = await startRadsecLab();
    try {
      const client = await lab.connect();
      assert.equal(client.socket.authorized, true, "chains to the EAP CA");
      const eap = await lab.server.core.certs.serverCredentials();
      assert.equal(client.socket.getPeerX509Certificate()?.toString().trim(), eap.cert.trim());
      client.close();
    } finally {
      await lab.stop();
    }
  });
});

describe("RADSEC_RADIUS11", () => {
  test("require: a NAS without ALPN radius/1.1 is refused; forbid: radius/1.1 is never chosen", async () => {
    const strict = await startRadsecLab({ env: { RADSEC_RADIUS11: "require" } });
    try {
      const none = await strict.connect().then(
        async (client) =>
          Promise.race([
            client.closed.then(() => "closed"),
            client.request(PacketCode.StatusServer, []).then(() => "answered"),
          ]),
        () => "closed",
      );
      assert.equal(none, "closed", "no ALPN offered");
      const modern = await strict.connect({ alpn: ["radius/1.1"], minVersion: "TLSv1.3" });
      assert.equal((await modern.request(PacketCode.StatusServer, [])).type, "Access-Accept");
      modern.close();
    } finally {
      await strict.stop();
    }
    const old = await startRadsecLab({ env: { RADSEC_RADIUS11: "forbid" } });
    try {
      const client = await old.connect({ alpn: ["radius/1.1", "radius/1.0"] });
      assert.equal(client.socket.alpnProtocol, "radius/1.0");
      client.close();
    } finally {
      await old.stop();
    }
  });
});
