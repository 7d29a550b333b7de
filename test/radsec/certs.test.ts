// RadSec certificates in the core, on both databases: Wisp's own RadSec client CA (apart from the EAP
// CA), certificates issued for networks, outside CAs uploaded for networks with their match rules,
// and identify(), which the listener asks which network a verified NAS certificate belongs to.
// Certificates of outside CAs are made here with the same code Wisp issues with; what OpenSSL makes
// of Wisp's files is checked in certs-openssl.test.ts.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { describe, test } from "node:test";
import { EKU_CLIENT_AUTH } from "../../src/core/certs/pem.ts";
import {
  type CertifiedKey,
  createAuthority,
  createLeaf,
  type Signer,
  signerOf,
} from "../../src/core/certs/x509.ts";
import { type Core, createCore } from "../../src/core/index.ts";
import type { Network } from "../../src/core/networks/service.ts";
import { RadsecRepo } from "../../src/core/radsec/repo.ts";
import { globMatches, RADSEC_REFUSALS } from "../../src/core/radsec/rules.ts";
import { RadsecService } from "../../src/core/radsec/service.ts";
import type { RadsecIdentity } from "../../src/core/radsec/types.ts";
import { SecretBox } from "../../src/core/webhooks/crypto.ts";
import type { Database } from "../../src/db/database.ts";
import { dialects, withDatabase } from "../support/databases.ts";

const KEY = Buffer.alloc(32, 9).toString("base64");
const PASSWORD = "nas p12 password";
const DAY = 86_400_000;

function coreOf(database: Database): Core {
  return createCore(database, { publicUrl: "https://wifi.example.org", webhookSecretKey: KEY });
}

/** A RadSec service on the database whose clock reads `now` (the core's EAP CA is refused as upload). */
function radsecAt(database: Database, core: Core, now: Date): RadsecService {
  return new RadsecService(new RadsecRepo(database.db), {
    box: new SecretBox({ secretKey: KEY }),
    eapAuthorities: async () => (await core.certs.serverCredentials()).ca,
    now: () => now,
  });
}

interface OutsideCa {
  ca: CertifiedKey;
  signer: Signer;
}

async function outsideCa(name: string): Promise<OutsideCa> {
  const ca = await createAuthority(name, 365);
  return { ca, signer: await signerOf(ca) };
}

/** A NAS certificate of an outside CA: CN and SAN DNS names, valid `days` from `now`. */
async function nasCert(issuer: OutsideCa, cn: string, dns: string[] = [], days = 30, now = new Date()) {
  const leaf = await createLeaf(issuer.signer, {
    commonName: cn,
    names: dns.length
      ? dns.map((value) => ({ type: "dns" as const, value }))
      : [{ type: "url", value: "urn:x" }],
    purpose: EKU_CLIENT_AUTH,
    days,
    now,
  });
  return leaf.der;
}

function networkOf(identity: RadsecIdentity): { account: number; network: number } | string {
  return "network" in identity
    ? { account: identity.network.account_id, network: identity.network.id }
    : identity.refused;
}

test("globs: * is any run of characters, DNS ignores case, CN and URI do not", () => {
  assert.ok(globMatches("ap-*.site1.example", "ap-17.site1.example", "cn"));
  assert.ok(globMatches("*", "anything at all", "cn"));
  assert.ok(globMatches("AP-*.Example", "ap-1.example", "dns"));
  assert.ok(!globMatches("AP-*.Example", "ap-1.example", "cn"));
  assert.ok(!globMatches("ap-*.site1.example", "ap-1.site10.example", "cn"));
  assert.ok(globMatches("urn:dev:*:wlan", "urn:dev:abc:wlan", "uri"));
  assert.ok(!globMatches("a.b", "axb", "cn"), "a dot is a dot, not any character");
  // Linear, not backtracking: a long hostile name against many stars answers at once.
  const started = Date.now();
  assert.ok(!globMatches("*a*a*a*a*a*a*a*a*a*b", "a".repeat(20_000), "cn"));
  assert.ok(Date.now() - started < 2000);
});

for (const { dialect, skip } of await dialects()) {
  describe(`RadSec certificates on ${dialect}`, { skip }, () => {
    test("Wisp's RadSec CA is made once, apart from the EAP CA; authorities() lists it and uploads", async () => {
      await withDatabase(dialect, async (database) => {
        const core = coreOf(database);
        const first = await core.radsec.authorities();
        assert.deepEqual(await coreOf(database).radsec.authorities(), first, "one CA per deployment");
        assert.equal(first.pems.length, 1);
        const radsecCa = new X509Certificate(first.pems[0]!);
        const eapCa = new X509Certificate((await core.certs.serverCredentials()).ca[0]!);
        assert.equal(radsecCa.subject, "CN=Wisp RadSec client CA");
        assert.ok(radsecCa.ca);
        assert.ok(!radsecCa.publicKey.equals(eapCa.publicKey), "a separate key from the EAP CA");
        assert.ok(!first.pems.includes(eapCa.toString()), "the EAP CA is never trusted for RadSec");

        const account = await core.accounts.resolve(undefined);
        const other = await core.accounts.create("other");
        const { network } = await core.networks.create(account.id, { name: "a", nas_ip: "" });
        const { network: theirs } = await core.networks.create(other.id, { name: "b", nas_ip: "" });
        const x = await outsideCa("Shared Org CA");
        const match = { field: "cn", patterns: ["*"] };
        await core.radsec.trust(account.id, network.id, { ca: x.ca.cert, match });
        const withX = await core.radsec.authorities();
        assert.notEqual(withX.tag, first.tag);
        assert.equal(withX.pems.length, 2);
        // The same CA uploaded by another account is listed once, and the tag stays.
        await core.radsec.trust(other.id, theirs.id, { ca: x.ca.cert, match });
        assert.deepEqual(await core.radsec.authorities(), withX);
        await core.radsec.untrust(account.id, network.id);
        await core.radsec.untrust(other.id, theirs.id);
        assert.equal((await core.radsec.authorities()).tag, first.tag);
      });
    });

    test("issued certificates: the network's, refused when revoked, expired or the network is gone", async () => {
      await withDatabase(dialect, async (database) => {
        const core = coreOf(database);
        const account = await core.accounts.resolve(undefined);
        const other = await core.accounts.create("other");
        const { network } = await core.networks.create(account.id, { name: "site", nas_ip: "" });
        const { network: theirs } = await core.networks.create(other.id, { name: "x", nas_ip: "" });
        assert.equal(network.transport, "radsec");

        await assert.rejects(
          core.radsec.issue(account.id, network.id, { password: "short" }),
          /password must be 8/,
        );
        await assert.rejects(
          core.radsec.issue(account.id, network.id, { password: PASSWORD, days: 0 }),
          /days must be a whole number from 1 to 3650/,
        );
        await assert.rejects(core.radsec.issue(account.id, theirs.id, { password: PASSWORD }), /not found/);
        assert.deepEqual(await core.radsec.certificates(account.id, network.id), [], "nothing half-written");

        const issued = await core.radsec.issue(account.id, network.id, { password: PASSWORD, days: 10 });
        const leaf = new X509Certificate(issued.cert);
        assert.equal(leaf.subject, `CN=wisp-network-${network.id}`);
        assert.deepEqual(leaf.keyUsage, [EKU_CLIENT_AUTH]);
        assert.ok(leaf.verify(new X509Certificate(issued.ca).publicKey));
        assert.match(issued.key, /^-----BEGIN ENCRYPTED PRIVATE KEY-----/);
        assert.equal(issued.certificate.status, "valid");
        assert.deepEqual(networkOf(await core.radsec.identify({ chain: [leaf.raw] })), {
          account: account.id,
          network: network.id,
        });
        const udp = await core.networks.create(account.id, { name: "udp", nas_ip: "192.0.2.1" });
        assert.equal(udp.network.transport, "udp");
        await core.radsec.issue(account.id, udp.network.id, { password: PASSWORD });
        assert.equal((await core.networks.get(account.id, udp.network.id)).transport, "both");

        // Another account sees neither the certificates nor the network.
        await assert.rejects(core.radsec.certificates(other.id, network.id), /not found/);
        await assert.rejects(
          core.radsec.revoke(other.id, network.id, issued.certificate.serial),
          /not found/,
        );

        // Eleven days on, it has expired (for identify, and in the listing).
        const later = radsecAt(database, core, new Date(Date.now() + 11 * DAY));
        assert.equal(
          ((await later.identify({ chain: [leaf.raw] })) as { refused: string }).refused,
          RADSEC_REFUSALS.expired,
        );
        assert.equal((await later.certificates(account.id, network.id))[0]!.status, "expired");

        const revoked = await core.radsec.revoke(
          account.id,
          network.id,
          issued.certificate.serial.toUpperCase(),
        );
        assert.equal(revoked.status, "revoked");
        assert.equal(networkOf(await core.radsec.identify({ chain: [leaf.raw] })), RADSEC_REFUSALS.revoked);

        const second = await core.radsec.issue(account.id, network.id, { password: PASSWORD });
        const secondLeaf = new X509Certificate(second.cert);
        await core.networks.delete(account.id, network.id);
        assert.equal(
          networkOf(await core.radsec.identify({ chain: [secondLeaf.raw] })),
          RADSEC_REFUSALS.networkGone,
        );
      });
    });

    test("a user's EAP-TLS certificate never passes as a NAS, and Wisp's CAs cannot be uploaded", async () => {
      await withDatabase(dialect, async (database) => {
        const core = coreOf(database);
        const account = await core.accounts.resolve(undefined);
        const { network } = await core.networks.create(account.id, { name: "site", nas_ip: "" });
        await core.users.create(account.id, { username: "alice", password: "pw" });
        const user = await core.certs.issue(account.id, { username: "alice", password: PASSWORD });
        const userDer = new X509Certificate(user.cert).raw;
        assert.equal(networkOf(await core.radsec.identify({ chain: [userDer] })), RADSEC_REFUSALS.untrusted);

        const eapCa = (await core.certs.serverCredentials()).ca[0]!;
        const radsecCa = (await core.radsec.authorityCertificate()).pem;
        for (const ca of [eapCa, radsecCa]) {
          await assert.rejects(
            core.radsec.trust(account.id, network.id, { ca, match: { field: "cn", patterns: ["*"] } }),
            /one of Wisp's own CAs/,
          );
        }
        assert.equal(networkOf(await core.radsec.identify({ chain: [userDer] })), RADSEC_REFUSALS.untrusted);
        assert.equal(
          networkOf(await core.radsec.identify({ chain: [Buffer.from("garbage")] })),
          RADSEC_REFUSALS.unreadable,
        );
        assert.equal(networkOf(await core.radsec.identify({ chain: [] })), RADSEC_REFUSALS.unreadable);
      });
    });

    test("uploaded CA: CN and SAN DNS rules, no match, two matches, a look-alike CA", async () => {
      await withDatabase(dialect, async (database) => {
        const core = coreOf(database);
        const account = await core.accounts.resolve(undefined);
        const x = await outsideCa("Org CA");
        const make = (name: string) => core.networks.create(account.id, { name, nas_ip: "" });
        const site1 = (await make("site1")).network;
        const site2 = (await make("site2")).network;
        await core.radsec.trust(account.id, site1.id, {
          ca: x.ca.cert,
          match: { field: "cn", patterns: ["ap-*.site1.example"] },
        });
        await core.radsec.trust(account.id, site2.id, {
          ca: x.ca.cert,
          match: { field: "dns", patterns: ["*.SITE2.example", "spare.example"] },
        });
        const mine = (network: Network) => ({ account: account.id, network: network.id });

        assert.deepEqual(
          networkOf(await core.radsec.identify({ chain: [await nasCert(x, "ap-1.site1.example")] })),
          mine(site1),
        );
        assert.deepEqual(
          networkOf(await core.radsec.identify({ chain: [await nasCert(x, "nas", ["ap-9.site2.example"])] })),
          mine(site2),
        );
        const none = networkOf(
          await core.radsec.identify({ chain: [await nasCert(x, "ap-1.site3.example")] }),
        );
        assert.equal(none, `${RADSEC_REFUSALS.noMatch} (CN=ap-1.site3.example, URI:urn:x)`);
        const both = await nasCert(x, "ap-1.site1.example", ["ap-1.site2.example"]);
        assert.equal(networkOf(await core.radsec.identify({ chain: [both] })), RADSEC_REFUSALS.ambiguous);
        // Expired, though the CA and rule fit.
        const old = await nasCert(x, "ap-2.site1.example", [], 1, new Date(Date.now() - 5 * DAY));
        assert.equal(networkOf(await core.radsec.identify({ chain: [old] })), RADSEC_REFUSALS.expired);
        // Another CA with the same name but its own key: matched by signature, not by name.
        const lookAlike = await outsideCa("Org CA");
        assert.equal(
          networkOf(await core.radsec.identify({ chain: [await nasCert(lookAlike, "ap-1.site1.example")] })),
          RADSEC_REFUSALS.untrusted,
        );
        // Removing the CA stops its certificates.
        await core.radsec.untrust(account.id, site1.id);
        assert.equal(
          networkOf(await core.radsec.identify({ chain: [await nasCert(x, "ap-1.site1.example")] })),
          `${RADSEC_REFUSALS.noMatch} (CN=ap-1.site1.example, URI:urn:x)`,
        );
      });
    });

    test("the same CA uploaded by two accounts matches each account's own rules only", async () => {
      await withDatabase(dialect, async (database) => {
        const core = coreOf(database);
        const a = await core.accounts.resolve(undefined);
        const b = await core.accounts.create("b");
        const shared = await outsideCa("Cloud Vendor CA");
        const netA = (await core.networks.create(a.id, { name: "a", nas_ip: "" })).network;
        const netB = (await core.networks.create(b.id, { name: "b", nas_ip: "" })).network;
        await core.radsec.trust(a.id, netA.id, {
          ca: shared.ca.cert,
          match: { field: "cn", patterns: ["*.a.example"] },
        });
        await core.radsec.trust(b.id, netB.id, {
          ca: shared.ca.cert,
          match: { field: "cn", patterns: ["*.b.example"] },
        });
        const apA = await nasCert(shared, "ap.a.example");
        const apB = await nasCert(shared, "ap.b.example");
        assert.deepEqual(networkOf(await core.radsec.identify({ chain: [apA] })), {
          account: a.id,
          network: netA.id,
        });
        assert.deepEqual(networkOf(await core.radsec.identify({ chain: [apB] })), {
          account: b.id,
          network: netB.id,
        });
        // B widening its rule to everything cannot claim A's NAS: the certificate becomes ambiguous
        // and is refused, never given to B.
        await core.radsec.trust(b.id, netB.id, {
          ca: shared.ca.cert,
          match: { field: "cn", patterns: ["*"] },
        });
        assert.equal(networkOf(await core.radsec.identify({ chain: [apA] })), RADSEC_REFUSALS.ambiguous);
        // Each account sees only its own upload.
        assert.deepEqual((await core.radsec.trusted(a.id, netA.id))!.match.patterns, ["*.a.example"]);
        await assert.rejects(core.radsec.trusted(b.id, netA.id), /not found/);
        await assert.rejects(core.radsec.untrust(b.id, netA.id), /not found/);
        // A Wisp-issued certificate of A's network is A's, whatever B uploads.
        const issued = await core.radsec.issue(a.id, netA.id, { password: PASSWORD });
        assert.deepEqual(
          networkOf(await core.radsec.identify({ chain: [new X509Certificate(issued.cert).raw] })),
          {
            account: a.id,
            network: netA.id,
          },
        );
      });
    });

    test("hostile CA uploads get a clear 400 and change nothing", async () => {
      await withDatabase(dialect, async (database) => {
        const core = coreOf(database);
        const account = await core.accounts.resolve(undefined);
        const { network } = await core.networks.create(account.id, { name: "site", nas_ip: "" });
        const x = await outsideCa("Org CA");
        const leaf = await createLeaf(x.signer, {
          commonName: "nas",
          names: [{ type: "dns", value: "nas.example" }],
          purpose: EKU_CLIENT_AUTH,
          days: 5,
        });
        const rule = { field: "cn", patterns: ["*"] };
        const cases: [unknown, unknown, RegExp][] = [
          ["", rule, /ca must be a PEM certificate/],
          [42, rule, /ca must be a PEM certificate/],
          [
            "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n",
            rule,
            /not a readable X\.509/,
          ],
          [`${x.ca.cert}${x.ca.key}`, rule, /holds a private key/],
          [`${x.ca.cert}${x.ca.cert}`, rule, /exactly one PEM block/],
          [`hello\n${x.ca.cert}`, rule, /exactly one PEM block/],
          [leaf.cert, rule, /is not a CA certificate/],
          ["A".repeat(70_000), rule, /at most 65536 characters/],
          [x.ca.cert, { field: "ou", patterns: ["*"] }, /match\.field must be one of cn, dns, uri/],
          [x.ca.cert, { field: "cn", patterns: [] }, /match\.patterns must be a list of 1 to 100/],
          [x.ca.cert, { field: "cn", patterns: ["two words"] }, /printable ASCII characters only/],
          [x.ca.cert, undefined, /match\.field/],
        ];
        for (const [ca, match, message] of cases) {
          await assert.rejects(
            core.radsec.trust(account.id, network.id, { ca, match } as never),
            (error: Error & { status?: number }) => error.status === 400 && message.test(error.message),
            String(message),
          );
        }
        assert.equal(await core.radsec.trusted(account.id, network.id), null);
        const expired = await createAuthority("Old CA", 1, new Date(Date.now() - 3 * DAY));
        await assert.rejects(
          core.radsec.trust(account.id, network.id, { ca: expired.cert, match: rule }),
          /expired/,
        );
      });
    });
  });
}
