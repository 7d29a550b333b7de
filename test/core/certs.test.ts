// Wisp's own CA and server certificate (made once per deployment, kept in the database, one CA when
// instances race), client certificates for EAP-TLS, and the check the EAP engine runs at every
// EAP-TLS handshake: revoked, expired, foreign, wrong identity, unknown user. What OpenSSL makes of
// the files and certificates is in certs-openssl.test.ts.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { describe, test } from "node:test";
import { CertsRepo } from "../../src/core/certs/repo.ts";
import { REFUSALS } from "../../src/core/certs/rules.ts";
import { CertsService } from "../../src/core/certs/service.ts";
import { createCore } from "../../src/core/index.ts";
import { SecretBox } from "../../src/core/webhooks/crypto.ts";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { dialects, withDatabase } from "../support/databases.ts";

const PUBLIC_URL = "https://wifi.example.org";
const KEY = Buffer.alloc(32, 7).toString("base64");
const PASSWORD = "correct horse battery";

function coreOf(database: Database, extra: { eapServerName?: string } = {}) {
  return createCore(database, { publicUrl: PUBLIC_URL, webhookSecretKey: KEY, ...extra });
}

/** A certs service over the database whose clock reads `now`. */
function serviceAt(database: Database, now: Date) {
  return new CertsService(new CertsRepo(database.db), {
    serverName: "wifi.example.org",
    box: new SecretBox({ secretKey: KEY }),
    now: () => now,
  });
}

async function countAuthorities(database: Database): Promise<number> {
  const rows = await database.db
    .withTables<{ eap_authority: { id: number } }>()
    .selectFrom("eap_authority")
    .select("id")
    .execute();
  return rows.length;
}

for (const { dialect, skip } of await dialects()) {
  describe(`certificates on ${dialect}`, { skip }, () => {
    test("the CA and server certificate are made once, kept, and the same after a restart", async () => {
      await withDatabase(dialect, async (database, testDb) => {
        const first = await coreOf(database).certs.serverCredentials();
        const again = await coreOf(database).certs.serverCredentials();
        const restarted = openDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl });
        try {
          const later = await coreOf(restarted).certs.serverCredentials();
          assert.deepEqual(again, first);
          assert.deepEqual(later, first);
        } finally {
          await restarted.close();
        }
        assert.equal(await countAuthorities(database), 1);
        assert.equal(first.ca.length, 1);
        assert.deepEqual(first.chain, []);
        const server = new X509Certificate(first.cert);
        assert.ok(
          server.checkPrivateKey(await import("node:crypto").then((c) => c.createPrivateKey(first.key))),
        );
        assert.ok(server.verify(new X509Certificate(first.ca[0]!).publicKey), "signed by the CA");
        assert.equal(server.subjectAltName, "DNS:wifi.example.org");
        assert.deepEqual(server.keyUsage, ["1.3.6.1.5.5.7.3.1"], "EKU serverAuth only");
        assert.equal(server.publicKey.asymmetricKeyDetails?.namedCurve, "prime256v1");
        // The private keys are sealed at rest, not stored as PEM.
        const raw = JSON.stringify(
          await database.db
            .withTables<{ eap_authority: { ca_key: string; server_key: string } }>()
            .selectFrom("eap_authority")
            .select(["ca_key", "server_key"])
            .execute(),
        );
        assert.ok(!raw.includes("PRIVATE KEY"), raw);
      });
    });

    test("a changed EAP_SERVER_NAME gets a new server certificate from the same CA", async () => {
      await withDatabase(dialect, async (database) => {
        const before = await coreOf(database).certs.serverCredentials();
        const after = await coreOf(database, {
          eapServerName: "radius.example.net",
        }).certs.serverCredentials();
        assert.deepEqual(after.ca, before.ca);
        assert.notEqual(after.cert, before.cert);
        assert.equal(new X509Certificate(after.cert).subjectAltName, "DNS:radius.example.net");
        assert.equal(await countAuthorities(database), 1);
      });
    });

    test("client certificates: issued, listed, checked, revoked", async () => {
      await withDatabase(dialect, async (database) => {
        const core = coreOf(database);
        const account = await core.accounts.resolve(undefined);
        const other = await core.accounts.create("other");
        await core.users.create(account.id, { username: "alice", password: "pw-alice" });
        await core.users.create(account.id, { username: "bob", password: "pw-bob" });
        await core.users.create(other.id, { username: "alice", password: "pw-alice" });
        const network = { account_id: account.id };

        await assert.rejects(
          core.certs.issue(account.id, { username: "carol", password: PASSWORD }),
          /no user named "carol"/,
        );
        await assert.rejects(
          core.certs.issue(account.id, { username: "alice", password: "short" }),
          /password must be 8/,
        );
        await assert.rejects(
          core.certs.issue(account.id, { username: "alice", password: PASSWORD, days: 0 }),
          /days must be/,
        );

        const alice = await core.certs.issue(account.id, { username: "alice", password: PASSWORD, days: 30 });
        const bob = await core.certs.issue(account.id, { username: "bob", password: PASSWORD });
        const theirs = await core.certs.issue(other.id, { username: "alice", password: PASSWORD });
        assert.match(alice.certificate.serial, /^[0-9a-f]{32}$/);
        assert.equal(alice.certificate.status, "valid");
        assert.deepEqual(
          (await core.certs.list(account.id)).map((c) => c.username),
          ["alice", "bob"],
        );
        assert.deepEqual(
          (await core.certs.list(account.id, { user: "bob" })).map((c) => c.serial),
          [bob.certificate.serial],
        );

        const aliceDer = derOf(alice.cert);
        assert.equal(await core.certs.checkClientCertificate(network, aliceDer, "alice"), null);
        assert.equal(await core.certs.checkClientCertificate(network, aliceDer, "Alice"), REFUSALS.identity);
        assert.equal(await core.certs.checkClientCertificate(network, aliceDer, "bob"), REFUSALS.identity);
        const theirDer = derOf(theirs.cert);
        assert.equal(await core.certs.checkClientCertificate(network, theirDer, "alice"), REFUSALS.foreign);
        assert.equal(
          await core.certs.checkClientCertificate({ account_id: other.id }, theirDer, "alice"),
          null,
        );
        assert.equal(
          await core.certs.checkClientCertificate(network, Buffer.from("junk"), "alice"),
          REFUSALS.unreadable,
        );

        // Revoked: refused from then on; revoking again or an unknown serial is told apart.
        const revoked = await core.certs.revoke(account.id, alice.certificate.serial.toUpperCase());
        assert.equal(revoked.status, "revoked");
        assert.equal(await core.certs.checkClientCertificate(network, aliceDer, "alice"), REFUSALS.revoked);
        await assert.rejects(core.certs.revoke(other.id, bob.certificate.serial), /no client certificate/);
        await assert.rejects(core.certs.revoke(account.id, "xyz"), /serial must be/);

        // A deleted user's certificate no longer logs in.
        const bobDer = derOf(bob.cert);
        assert.equal(await core.certs.checkClientCertificate(network, bobDer, "bob"), null);
        const bobUser = (await core.users.list(account.id, {}, { page: 1, limit: 10 })).data.find(
          (u) => u.username === "bob",
        )!;
        await core.users.delete(account.id, bobUser.id);
        assert.equal(await core.certs.checkClientCertificate(network, bobDer, "bob"), REFUSALS.noUser);
      });
    });

    test("an expired certificate is refused, and listed as expired", async () => {
      await withDatabase(dialect, async (database) => {
        const core = coreOf(database);
        const account = await core.accounts.resolve(undefined);
        await core.users.create(account.id, { username: "alice", password: "pw-alice" });
        // Issued by the same deployment 40 days ago, for 30 days.
        const past = serviceAt(database, new Date(Date.now() - 40 * 86_400_000));
        const old = await past.issue(account.id, { username: "alice", password: PASSWORD, days: 30 });
        const der = derOf(old.cert);
        assert.equal(
          await core.certs.checkClientCertificate({ account_id: account.id }, der, "alice"),
          REFUSALS.expired,
        );
        assert.equal((await core.certs.list(account.id))[0]!.status, "expired");
      });
    });
  });
}

/**
 * A repository whose first read of the CA row waits until every instance has read it: all of them
 * find no CA, make one, and race to insert it, the case instances starting together can meet.
 */
function racingRepo(
  database: Database,
  barrier: { waiting: number; size: number; release: () => void; all: Promise<void> },
) {
  const repo = new CertsRepo(database.db);
  const read = repo.authority.bind(repo);
  let first = true;
  repo.authority = async () => {
    const row = await read();
    if (first) {
      first = false;
      if (++barrier.waiting === barrier.size) barrier.release();
      await barrier.all;
    }
    return row;
  };
  return repo;
}

describe("instances starting together on PostgreSQL", async () => {
  const [, postgres] = await dialects();
  test("all find no CA, each makes one, one row wins and all present it", {
    skip: postgres!.skip,
  }, async () => {
    await withDatabase("postgres", async (database, testDb) => {
      const instances = [0, 1, 2].map(() =>
        openDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl }),
      );
      let release!: () => void;
      const all = new Promise<void>((resolve) => {
        release = resolve;
      });
      const barrier = { waiting: 0, size: instances.length, release, all };
      try {
        const services = instances.map(
          (db) =>
            new CertsService(racingRepo(db, barrier), {
              serverName: "wifi.example.org",
              box: new SecretBox({ secretKey: KEY }),
            }),
        );
        const credentials = await Promise.all(services.map((service) => service.serverCredentials()));
        assert.equal(barrier.waiting, 3, "every instance read before any wrote");
        assert.deepEqual(credentials[1], credentials[0]);
        assert.deepEqual(credentials[2], credentials[0]);
        assert.equal(await countAuthorities(database), 1);
        assert.deepEqual(await coreOf(database).certs.serverCredentials(), credentials[0]);
      } finally {
        await Promise.all(instances.map((db) => db.close()));
      }
    });
  });
});

const derOf = (pem: string) => new X509Certificate(pem).raw;
