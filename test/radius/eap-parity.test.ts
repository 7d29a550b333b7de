// WPA-Enterprise parity (issue 14 point 8): one table of users and cases through eapol_test against
// Wisp's embedded server and against FreeRADIUS 3.2's rlm_eap on the same Wisp database
// (deploy/freeradius/configure.sh with EAP_CERT_FILE...), same certificate, fragment size and
// default method. Verdicts must agree, and the Access-Accept attributes too, apart from the EAP and
// key attributes (EAP-Message, Message-Authenticator, MS-MPPE-*) and the two rlm_eap adds on its
// own (User-Name = the EAP identity, Framed-MTU = its fragment size less headers).
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { md4 } from "../../src/core/aaa/md4.ts";
import { type EapTestServer, startEapServer } from "../support/eap-server.ts";
import { type EapolResult, eapolTest, eapolTestUnavailable } from "../support/eapol.ts";
import { type FreeRadiusLab, freeradiusUnavailable, startFreeRadius } from "../support/freeradius-lab.ts";

const unavailable = freeradiusUnavailable() ?? eapolTestUnavailable();
if (unavailable) console.log(`# skipping the EAP parity suite: ${unavailable}`);

/** RADIUS attribute types left out of the comparison (RFC 3579 section 3, RFC 2548 section 2.4). */
const EAP_ATTRIBUTES = new Set([1, 12, 79, 80]);
/** Microsoft (311) vendor types: MS-MPPE-Encryption-Policy/-Types, MS-MPPE-Send-Key/-Recv-Key. */
const MS_KEY_TYPES = new Set([7, 8, 16, 17]);

/** The Access-Accept's attributes as eapol_test's debug output prints them, comparable and sorted. */
export function acceptAttributes(output: string): string[] {
  const start = output.indexOf("code=2 (Access-Accept)");
  if (start < 0) return [];
  const lines = output.slice(start).split("\n").slice(1);
  const found: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const head = /^ {3}Attribute (\d+) \(([^)]*)\) length=(\d+)$/.exec(lines[i]!);
    if (!head) break;
    // eapol_test prints no value for the attributes it does not know (Filter-Id): compare lengths.
    const value = /^ {6}Value: (.*)$/.exec(lines[i + 1] ?? "")?.[1];
    if (value !== undefined) i++;
    const type = Number(head[1]);
    if (EAP_ATTRIBUTES.has(type)) continue;
    if (
      type === 26 &&
      value?.startsWith("00000137") &&
      MS_KEY_TYPES.has(Number.parseInt(value.slice(8, 10), 16))
    )
      continue;
    found.push(value === undefined ? `${type} length=${head[3]}` : `${head[2]} = ${value}`);
  }
  return found.sort();
}

type Method = "PEAP" | "TTLS-PAP" | "TTLS-MSCHAPV2" | "TLS";
interface EapCase {
  name: string;
  method: Method;
  identity: string;
  password?: string;
  /** EAP-TLS: whose certificate, from which CA. */
  cert?: { name: string; issuer: "ca" | "foreign" };
  /** The verdict of both servers. */
  accept: boolean;
}

const PASSWORDS: Record<string, string> = {
  "eap-alice": "alice-Pw-1",
  "eap-nt": "nt-Pw-2",
  "eap-disabled": "dis-Pw-3",
  "eap-expired": "exp-Pw-4",
};
const TUNNELLED: Method[] = ["PEAP", "TTLS-PAP", "TTLS-MSCHAPV2"];
const CASES: EapCase[] = [
  ...TUNNELLED.flatMap((method): EapCase[] => [
    {
      name: "success with reply items",
      method,
      identity: "eap-alice",
      password: PASSWORDS["eap-alice"],
      accept: true,
    },
    { name: "wrong password", method, identity: "eap-alice", password: "not-it", accept: false },
    { name: "unknown user", method, identity: "eap-nobody", password: "whatever-1", accept: false },
    {
      name: "disabled user",
      method,
      identity: "eap-disabled",
      password: PASSWORDS["eap-disabled"],
      accept: false,
    },
    {
      name: "expired user",
      method,
      identity: "eap-expired",
      password: PASSWORDS["eap-expired"],
      accept: false,
    },
    // NT-Password only: MS-CHAPv2 uses the hash; PAP compares the hash of the password sent.
    { name: "NT-Password only", method, identity: "eap-nt", password: PASSWORDS["eap-nt"], accept: true },
  ]),
  {
    name: "certificate",
    method: "TLS",
    identity: "eap-alice",
    cert: { name: "eap-alice", issuer: "ca" },
    accept: true,
  },
  {
    name: "foreign CA",
    method: "TLS",
    identity: "eap-alice",
    cert: { name: "eap-alice", issuer: "foreign" },
    accept: false,
  },
  {
    name: "identity not in certificate",
    method: "TLS",
    identity: "eap-nt",
    cert: { name: "eap-alice", issuer: "ca" },
    accept: false,
  },
  {
    name: "disabled user",
    method: "TLS",
    identity: "eap-disabled",
    cert: { name: "eap-disabled", issuer: "ca" },
    accept: false,
  },
  {
    name: "expired user",
    method: "TLS",
    identity: "eap-expired",
    cert: { name: "eap-expired", issuer: "ca" },
    accept: false,
  },
];

describe("EAP parity with FreeRADIUS 3.2 rlm_eap on one SQLite database", {
  skip: unavailable ?? false,
}, () => {
  let lab: EapTestServer;
  let freeradius: FreeRadiusLab;

  function login(port: number, c: EapCase): Promise<EapolResult> {
    const common = { port, secret: lab.secret, timeoutSeconds: 10 };
    if (c.method === "TLS") {
      const cert = lab.certs.client(c.cert!.name, c.cert!.issuer);
      return eapolTest({
        ...common,
        raw: { eap: "TLS" },
        network: {
          identity: c.identity,
          client_cert: cert.cert,
          private_key: cert.key,
          ca_cert: lab.certs.caFile,
        },
      });
    }
    const [eap, phase2] =
      c.method === "PEAP"
        ? ["PEAP", "autheap=MSCHAPV2"]
        : c.method === "TTLS-PAP"
          ? ["TTLS", "auth=PAP"]
          : ["TTLS", "autheap=MSCHAPV2"];
    return eapolTest({
      ...common,
      raw: { eap: eap! },
      network: {
        identity: c.identity,
        anonymous_identity: "anonymous@example.org",
        password: c.password!,
        phase2: phase2!,
        ca_cert: lab.certs.caFile,
        domain_match: "radius.test",
      },
    });
  }

  before(async () => {
    lab = await startEapServer();
    const core = lab.server.core;
    const staff = await core.groups.create(lab.accountId, { name: "eap-staff" });
    await core.attributes.addToGroup(lab.accountId, staff.id, {
      table: "radgroupreply",
      attribute: "Acct-Interim-Interval",
      operator: ":=",
      value: "300",
    });
    const alice = await lab.user("eap-alice", PASSWORDS["eap-alice"]);
    for (const [attribute, value] of [
      ["Session-Timeout", "3600"],
      ["Reply-Message", "hello alice"],
      ["Filter-Id", "staff-acl"],
      // Without it neither server reads the groups' reply items once the user has some.
      ["Fall-Through", "Yes"],
    ]) {
      await core.attributes.addToUser(lab.accountId, {
        userid: alice,
        table: "radreply",
        attribute: attribute!,
        operator: ":=",
        value: value!,
      });
    }
    await core.groups.addMember(lab.accountId, staff.id, { userid: alice, priority: 1 });
    const ntHash = md4(Buffer.from(PASSWORDS["eap-nt"]!, "utf16le")).toString("hex");
    await lab.user("eap-nt", undefined, [["NT-Password", ":=", ntHash]]);
    await core.users.create(lab.accountId, {
      username: "eap-disabled",
      password: PASSWORDS["eap-disabled"],
      status: "disabled",
    });
    await lab.user("eap-expired", PASSWORDS["eap-expired"], [["Expiration", ":=", "1000000000"]]);
    // FreeRADIUS reads its clients (the nas table) at start: start it once the data is there.
    freeradius = await startFreeRadius(path.join(lab.server.database.dataDir, "wisp.db"), {
      env: {
        EAP_CERT_FILE: lab.certs.serverCertFile,
        EAP_KEY_FILE: lab.certs.serverKeyFile,
        EAP_CA_FILE: lab.certs.caFile,
      },
    });
  });
  after(async () => {
    await freeradius?.stop();
    await lab?.stop();
  });

  for (const c of CASES) {
    test(`${c.method}: ${c.name}`, async () => {
      const [wisp, reference] = await Promise.all([login(lab.authPort, c), login(freeradius.authPort, c)]);
      const verdict = (r: EapolResult) =>
        r.success ? "accept" : r.code === 252 ? "reject" : `exit ${r.code}`;
      const expected = c.accept ? "accept" : "reject";
      assert.equal(verdict(wisp), expected, `Wisp:\n${wisp.output.slice(-1500)}`);
      assert.equal(verdict(reference), expected, `FreeRADIUS:\n${reference.output.slice(-1500)}`);
      if (!c.accept) return;
      assert.ok(wisp.mppeOk && reference.mppeOk, "MPPE keys OK from both");
      const attributes = acceptAttributes(wisp.output);
      assert.deepEqual(attributes, acceptAttributes(reference.output));
      if (c.identity === "eap-alice") {
        // The comparison is not vacuous: the reply items are there.
        assert.ok(attributes.includes("Session-Timeout = 3600"), attributes.join("\n"));
        assert.ok(attributes.includes("Acct-Interim-Interval = 300"), attributes.join("\n"));
      }
    });
  }
});
