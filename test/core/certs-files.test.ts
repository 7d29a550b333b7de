// The EAP server identity from files (EAP_CERT_FILE, EAP_KEY_FILE, EAP_CA_FILE, EAP_CA_KEY_FILE):
// files made by the openssl command, as an operator's own CA would make them, are presented as they
// are; bad ones stop the process at start with one line naming the file and the problem.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { before, describe, test } from "node:test";
import { createSecureContext, type SecureContext, TLSSocket, connect as tlsConnect } from "node:tls";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { sentChain } from "../../src/core/certs/files.ts";
import { REFUSALS } from "../../src/core/certs/rules.ts";
import { createAuthority } from "../../src/core/certs/x509.ts";
import { createCore } from "../../src/core/index.ts";
import { tempDir, withDatabase } from "../support/databases.ts";
import { openssl, opensslMissing, verifyWith, writeFile } from "../support/openssl.ts";
import { runServerToExit } from "../support/processes.ts";

const KEY = Buffer.alloc(32, 9).toString("base64");

async function run(args: string[]): Promise<void> {
  const result = await openssl(args);
  assert.equal(result.code, 0, `openssl ${args.join(" ")}: ${result.stderr}`);
}

/** An RSA CA and EC P-256 leaves signed by it, made with openssl in `dir`. */
async function makeFiles(dir: string) {
  const at = (name: string) => path.join(dir, name);
  await run(
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", at("ca.key"), "-out", at("ca.pem")]
      .concat(["-days", "30", "-subj", "/CN=Operator CA"])
      .concat([
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
      ]),
  );
  const leaf = async (name: string, extensions: string) => {
    writeFile(dir, `${name}.ext`, extensions);
    await run([
      "genpkey",
      "-algorithm",
      "EC",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-out",
      at(`${name}.key`),
    ]);
    await run([
      "req",
      "-new",
      "-key",
      at(`${name}.key`),
      "-out",
      at(`${name}.csr`),
      "-subj",
      "/CN=radius.test",
    ]);
    await run(
      ["x509", "-req", "-in", at(`${name}.csr`), "-CA", at("ca.pem"), "-CAkey", at("ca.key")].concat([
        "-CAcreateserial",
        "-days",
        "30",
        "-extfile",
        at(`${name}.ext`),
        "-out",
        at(`${name}.pem`),
      ]),
    );
  };
  await leaf("server", "subjectAltName=DNS:radius.test,DNS:eap.test\nextendedKeyUsage=serverAuth\n");
  await leaf("clientonly", "subjectAltName=DNS:radius.test\nextendedKeyUsage=clientAuth\n");
  // The server certificate followed by its CA, as many operators' certificate files are.
  writeFile(
    dir,
    "fullchain.pem",
    fs.readFileSync(at("server.pem"), "utf8") + fs.readFileSync(at("ca.pem"), "utf8"),
  );
  const expired = await createAuthority("radius.test", 1, new Date(Date.now() - 3 * 86_400_000));
  writeFile(dir, "expired.pem", expired.cert);
  writeFile(dir, "expired.key", expired.key);
  writeFile(dir, "garbage.pem", "not a certificate\n");
  return at;
}

describe("EAP identity from files", { skip: opensslMissing ?? false }, () => {
  let at: (name: string) => string;
  before(async () => {
    at = await makeFiles(tempDir("eapfiles"));
  });

  test("the files are presented as they are, and client certificates are signed with EAP_CA_KEY_FILE", async () => {
    const config = loadConfig({
      EAP_CERT_FILE: at("fullchain.pem"),
      EAP_KEY_FILE: at("server.key"),
      EAP_CA_FILE: at("ca.pem"),
      EAP_CA_KEY_FILE: at("ca.key"),
    });
    assert.equal(config.eapServerName, undefined);
    await withDatabase("sqlite", async (database) => {
      const core = createCore(database, { ...config, webhookSecretKey: KEY });
      const credentials = await core.certs.serverCredentials();
      const server = new X509Certificate(fs.readFileSync(at("server.pem")));
      const ca = new X509Certificate(fs.readFileSync(at("ca.pem")));
      assert.equal(credentials.cert, server.toString());
      assert.deepEqual(credentials.chain, [ca.toString()]);
      assert.deepEqual(credentials.ca, [ca.toString()]);
      assert.ok(server.checkPrivateKey((await import("node:crypto")).createPrivateKey(credentials.key)));
      assert.equal(core.certs.serverName(), "radius.test");
      const authority = await core.certs.authorityCertificate();
      assert.deepEqual(authority?.der, ca.raw);
      assert.equal(
        await database.db
          .withTables<{ eap_authority: { id: number } }>()
          .selectFrom("eap_authority")
          .select("id")
          .executeTakeFirst(),
        undefined,
        "no CA made",
      );

      const account = await core.accounts.resolve(undefined);
      await core.users.create(account.id, { username: "alice", password: "pw" });
      const issued = await core.certs.issue(account.id, { username: "alice", password: "p12 password" });
      const client = writeFile(tempDir("eapfiles-client"), "alice.pem", issued.cert);
      assert.match((await verifyWith(at("ca.pem"), client, "sslclient")).stdout, /OK/);
      const der = new X509Certificate(issued.cert).raw;
      assert.equal(await core.certs.checkClientCertificate({ account_id: account.id }, der, "alice"), null);
      // A certificate the same CA signed outside Wisp is not one Wisp issued.
      const outside = new X509Certificate(fs.readFileSync(at("clientonly.pem"))).raw;
      assert.equal(
        await core.certs.checkClientCertificate({ account_id: account.id }, outside, "radius.test"),
        REFUSALS.foreign,
      );
    });
  });

  test("the chain sent is built once as OpenSSL's auto chain builds it per handshake: same certificates on the wire", async () => {
    const pem = (name: string) => fs.readFileSync(at(name), "utf8");
    const [server, ca, other] = [pem("server.pem"), pem("ca.pem"), pem("expired.pem")];
    const caText = new X509Certificate(ca).toString();
    assert.deepEqual(sentChain(server, [], [other, ca]), [caText]);
    assert.deepEqual(sentChain(server, ["given"], [ca]), ["given"], "a configured chain is sent as it is");
    assert.deepEqual(sentChain(server, [], [other]), [], "no issuer among the CAs: nothing added");
    assert.deepEqual(sentChain(other, [], [ca, other]), [], "a self-signed certificate needs no chain");
    // What a TLS client receives: OpenSSL's auto chain (no chain configured, the CA in the trust
    // store) against the chain built once.
    const received = async (context: SecureContext) => {
      const listener = net.createServer((raw) => {
        const socket = new TLSSocket(raw, { isServer: true, secureContext: context });
        socket.on("secure", () => socket.end()).on("error", () => raw.destroy());
      });
      await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
      const { port } = listener.address() as net.AddressInfo;
      try {
        return await new Promise<string[]>((resolve, reject) => {
          const client = tlsConnect({ port, host: "127.0.0.1", rejectUnauthorized: false }, () => {
            const names: string[] = [];
            const seen = new Set<string>();
            for (
              let c = client.getPeerCertificate(true);
              c && !seen.has(c.fingerprint256);
              c = c.issuerCertificate
            ) {
              seen.add(c.fingerprint256);
              names.push(c.subject.CN as string);
            }
            client.end();
            resolve(names);
          }).on("error", reject);
        });
      } finally {
        listener.close();
      }
    };
    const key = pem("server.key");
    const auto = await received(createSecureContext({ key, cert: server, ca: [ca] }));
    const built = await received(
      createSecureContext({ key, cert: [server, ...sentChain(server, [], [ca])].join("\n"), ca: [ca] }),
    );
    assert.deepEqual(auto, ["radius.test", "Operator CA"]);
    assert.deepEqual(built, auto);
  });

  test("without EAP_CA_KEY_FILE nothing is issued, and the reason says so", async () => {
    const config = loadConfig({
      EAP_CERT_FILE: at("server.pem"),
      EAP_KEY_FILE: at("server.key"),
      EAP_CA_FILE: at("ca.pem"),
      EAP_SERVER_NAME: "EAP.test",
    });
    assert.equal(config.eapServerName, "eap.test");
    await withDatabase("sqlite", async (database) => {
      const core = createCore(database, { ...config, webhookSecretKey: KEY });
      const account = await core.accounts.resolve(undefined);
      await core.users.create(account.id, { username: "alice", password: "pw" });
      await assert.rejects(
        core.certs.issue(account.id, { username: "alice", password: "p12 password" }),
        /cannot be issued: the CA comes from EAP_CA_FILE and no EAP_CA_KEY_FILE is set/,
      );
      assert.equal((await core.certs.authorityCertificate())?.subject, "CN=Operator CA");
    });
  });

  test("a self-signed server certificate alone is the CA devices install, its CN the name", async () => {
    const dir = tempDir("eapfiles-self");
    const self = await createAuthority("radius.self.test", 30);
    const config = loadConfig({
      EAP_CERT_FILE: writeFile(dir, "self.pem", self.cert),
      EAP_KEY_FILE: writeFile(dir, "self.key", self.key),
    });
    await withDatabase("sqlite", async (database) => {
      const core = createCore(database, { ...config, webhookSecretKey: KEY });
      assert.equal(core.certs.serverName(), "radius.self.test");
      assert.equal((await core.certs.authorityCertificate())?.pem, new X509Certificate(self.cert).toString());
      assert.deepEqual((await core.certs.serverCredentials()).ca, [], "no EAP_CA_FILE: no client CAs");
    });
  });

  test("bad files and settings are refused with one line naming the file", () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ EAP_CERT_FILE: at("server.pem") }, /^EAP_CERT_FILE and EAP_KEY_FILE go together/],
      [
        { EAP_CERT_FILE: at("nope.pem"), EAP_KEY_FILE: at("server.key") },
        /^EAP_CERT_FILE: cannot read .*nope\.pem: no such file$/,
      ],
      [
        { EAP_CERT_FILE: at("garbage.pem"), EAP_KEY_FILE: at("server.key") },
        /^EAP_CERT_FILE: .*garbage\.pem holds no PEM certificate$/,
      ],
      [
        { EAP_CERT_FILE: at("server.pem"), EAP_KEY_FILE: at("clientonly.key") },
        /^EAP_KEY_FILE: .*clientonly\.key does not match the certificate in .*server\.pem$/,
      ],
      [
        { EAP_CERT_FILE: at("server.pem"), EAP_KEY_FILE: at("garbage.pem") },
        /^EAP_KEY_FILE: .*garbage\.pem holds no PEM private key$/,
      ],
      [
        { EAP_CERT_FILE: at("clientonly.pem"), EAP_KEY_FILE: at("clientonly.key") },
        /without serverAuth; supplicants refuse it/,
      ],
      [
        { EAP_CERT_FILE: at("expired.pem"), EAP_KEY_FILE: at("expired.key") },
        /^EAP_CERT_FILE: the certificate in .*expired\.pem expired on /,
      ],
      [
        { EAP_CERT_FILE: at("server.pem"), EAP_KEY_FILE: at("server.key"), EAP_CA_FILE: at("server.pem") },
        /^EAP_CA_FILE: certificate 1 in .*server\.pem is not a CA/,
      ],
      [
        {
          EAP_CERT_FILE: at("server.pem"),
          EAP_KEY_FILE: at("server.key"),
          EAP_CA_FILE: at("ca.pem"),
          EAP_CA_KEY_FILE: at("server.key"),
        },
        /^EAP_CA_KEY_FILE: .*server\.key matches no certificate in .*ca\.pem$/,
      ],
      [
        { EAP_CERT_FILE: at("server.pem"), EAP_KEY_FILE: at("server.key"), EAP_SERVER_NAME: "other.test" },
        /^EAP_SERVER_NAME other\.test is not a name of the certificate in EAP_CERT_FILE \(radius\.test, eap\.test\)$/,
      ],
      [{ EAP_SERVER_NAME: "not a name" }, /^EAP_SERVER_NAME must be a DNS name/],
    ];
    for (const [env, message] of cases) {
      assert.throws(
        () => loadConfig(env),
        (error: Error) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.match(error.message, message);
          assert.ok(!error.message.includes("\n"), "one line");
          return true;
        },
      );
    }
  });

  test("the server stops at start with that line and exit code 1", async () => {
    const result = await runServerToExit({
      HOST: "127.0.0.1",
      PORT: "0",
      DATA_DIR: tempDir("eapfiles-server"),
      EAP_CERT_FILE: at("server.pem"),
      EAP_KEY_FILE: at("clientonly.key"),
    });
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /^wisp: configuration error: EAP_KEY_FILE: \S+ does not match the certificate in \S+\n$/,
    );
  });
});
