// MS-CHAPv2 outside EAP through real UDP packets (RFC 2548 section 2.3, RFC 2759). The peer's
// NT-Response, the authenticator response it expects and its MPPE keys come from
// test/support/mschapv2-peer.mjs, written apart from src/radius/mschap on OpenSSL's own MD4 and
// DES (a child Node with --openssl-legacy-provider), so both sides are not one code's mistakes.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { ntPasswordHash } from "../../src/core/aaa/nt-hash.ts";
import { RadiusClient, sendRadius } from "../../src/radius/client.ts";
import type { AttributeInput, RadiusPacket } from "../../src/radius/packet.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { databaseEnv, wisp } from "../support/processes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "mschap-Secret-31";
const PEER_SCRIPT = new URL("../support/mschapv2-peer.mjs", import.meta.url).pathname;

interface PeerInput {
  username: string;
  password: string;
  authenticatorChallenge: string;
  peerChallenge: string;
}
interface PeerOutput {
  ntResponse: string;
  authenticatorResponse: string;
  clientSendKey: string;
  clientRecvKey: string;
}

/** The peer's computations for several logins at once (one child process). */
function peer(inputs: PeerInput[]): PeerOutput[] {
  const out = execFileSync(process.execPath, ["--openssl-legacy-provider", PEER_SCRIPT], {
    input: JSON.stringify(inputs),
  });
  return JSON.parse(out.toString("utf8")) as PeerOutput[];
}

interface Login {
  input: PeerInput;
  ident: number;
  expected: PeerOutput;
}

/** Logins typed by a peer: `password` is what it types, `username` what it sends. */
function logins(...pairs: [string, string][]): Login[] {
  const inputs = pairs.map(([username, password]) => ({
    username,
    password,
    authenticatorChallenge: randomBytes(16).toString("hex"),
    peerChallenge: randomBytes(16).toString("hex"),
  }));
  return peer(inputs).map((expected, i) => ({ input: inputs[i]!, ident: (i * 37 + 5) & 0xff, expected }));
}

type Attribute = [string, string | Buffer];

/** MS-CHAP-Challenge and MS-CHAP2-Response (Ident, Flags 0, Peer-Challenge, 8 reserved, NT-Response). */
function mschapAttributes(login: Login): Attribute[] {
  const response = Buffer.concat([
    Buffer.of(login.ident, 0),
    Buffer.from(login.input.peerChallenge, "hex"),
    Buffer.alloc(8),
    Buffer.from(login.expected.ntResponse, "hex"),
  ]);
  return [
    ["User-Name", login.input.username],
    ["MS-CHAP-Challenge", Buffer.from(login.input.authenticatorChallenge, "hex")],
    ["MS-CHAP2-Response", response],
    ["NAS-IP-Address", "127.0.0.1"],
    ["Calling-Station-Id", "02-00-00-00-00-31"],
  ];
}

const raw = (answer: RadiusPacket, name: string) => answer.attributes.find((a) => a.name === name)?.raw;
const text = (answer: RadiusPacket, name: string) => answer.attributes.find((a) => a.name === name)?.value;

describe("MS-CHAPv2 in Access-Request (RFC 2548, RFC 2759)", () => {
  let server: TestServer;
  let authPort: number;
  let accountId: number;

  const send = (attributes: AttributeInput[]) =>
    sendRadius({
      code: "Access-Request",
      attributes,
      host: "127.0.0.1",
      port: authPort,
      secret: SECRET,
      timeoutMs: 3000,
      retries: 0,
      messageAuthenticator: true,
    });

  async function user(
    username: string,
    password: string | undefined,
    check: [string, string][] = [],
    status?: string,
  ) {
    const created = await server.core.users.create(accountId, { username, password, status });
    for (const [attribute, value] of check) {
      await server.core.attributes.addToUser(accountId, {
        userid: created.id,
        table: "radcheck",
        attribute,
        operator: ":=",
        value,
      });
    }
  }

  before(async () => {
    authPort = await freeUdpPort();
    server = await startTestServer({
      env: { RADIUS_HOST: "127.0.0.1", RADIUS_AUTH_PORT: String(authPort), RADIUS_ACCT_PORT: "0" },
    });
    accountId = (await server.account("default")).id;
    await server.core.networks.create(accountId, { name: "MS-CHAP", nas_ip: "127.0.0.1", secret: SECRET });
    await user("alice", "alice-pw");
    await user("nt-only", undefined, [["NT-Password", ntPasswordHash("nt only pw").toString("hex")]]);
    await user("disabled", "disabled-pw", [], "disabled");
    await user("unicode", "pässwörd 🔑");
    await user("User", "clientPass");
  });
  after(() => server?.stop());

  test("a right password: Access-Accept with MS-CHAP2-Success and the MPPE keys of RFC 3079", async () => {
    const [login] = logins(["alice", "alice-pw"]);
    const answer = await send(mschapAttributes(login!));
    assert.equal(answer.type, "Access-Accept", text(answer, "Reply-Message"));
    // MS-CHAP2-Success: the peer's Ident, then the 42-octet authenticator response it expects.
    assert.deepEqual(
      raw(answer, "MS-CHAP2-Success"),
      Buffer.concat([Buffer.of(login!.ident), Buffer.from(login!.expected.authenticatorResponse)]),
    );
    // The NAS's send key is the peer's receive key and the other way round (RFC 2548 2.4.2-2.4.3).
    assert.equal(raw(answer, "MS-MPPE-Send-Key")?.toString("hex"), login!.expected.clientRecvKey);
    assert.equal(raw(answer, "MS-MPPE-Recv-Key")?.toString("hex"), login!.expected.clientSendKey);
    assert.equal(text(answer, "MS-MPPE-Encryption-Policy"), "Encryption-Allowed");
    assert.equal(text(answer, "MS-MPPE-Encryption-Types"), "RC4-40or128-bit-Allowed");
    assert.equal(text(answer, "MS-CHAP-Error"), undefined);
  });

  test("RFC 2759 section 9.2's exchange gives its S= and RFC 3079 section 3.5.3's send key", async () => {
    const hex = (text: string) => Buffer.from(text.replace(/ /g, ""), "hex");
    const response = Buffer.concat([
      Buffer.of(7, 0),
      hex("21 40 23 24 25 5E 26 2A 28 29 5F 2B 3A 33 7C 7E"),
      Buffer.alloc(8),
      hex("82 30 9E CD 8D 70 8B 5E A0 8F AA 39 81 CD 83 54 42 33 11 4A 3D 85 D6 DF"),
    ]);
    const answer = await send([
      ["User-Name", "User"],
      ["MS-CHAP-Challenge", hex("5B 5D 7C 7D 7B 3F 2F 3E 3C 2C 60 21 32 26 26 28")],
      ["MS-CHAP2-Response", response],
    ]);
    assert.equal(answer.type, "Access-Accept", text(answer, "Reply-Message"));
    assert.equal(
      raw(answer, "MS-CHAP2-Success")?.toString("latin1"),
      "\x07S=407A5589115FD0D6209F510FE9C04566932CDA56",
    );
    assert.deepEqual(raw(answer, "MS-MPPE-Send-Key"), hex("8B 7C DC 14 9B 99 3A 1B A1 18 CB 15 3F 56 DC CB"));
  });

  test("a user with only an NT-Password, and a non-ASCII password, log in", async () => {
    const [nt, unicode] = logins(["nt-only", "nt only pw"], ["unicode", "pässwörd 🔑"]);
    for (const login of [nt!, unicode!]) {
      const answer = await send(mschapAttributes(login));
      assert.equal(answer.type, "Access-Accept", `${login.input.username}: ${text(answer, "Reply-Message")}`);
      assert.equal(
        raw(answer, "MS-CHAP2-Success")?.subarray(1).toString(),
        login.expected.authenticatorResponse,
      );
    }
  });

  test("wrong password, unknown user, disabled user: Access-Reject with MS-CHAP-Error E=691", async () => {
    const cases = logins(["alice", "alice-pW"], ["nobody", "whatever"], ["disabled", "disabled-pw"]);
    const reasons = ["wrong password", "unknown user", "user disabled"];
    for (const [i, login] of cases.entries()) {
      const answer = await send(mschapAttributes(login));
      assert.equal(answer.type, "Access-Reject", login.input.username);
      assert.equal(text(answer, "Reply-Message"), reasons[i]);
      const error = raw(answer, "MS-CHAP-Error");
      assert.ok(error, "MS-CHAP-Error is there");
      assert.equal(error[0], login.ident);
      assert.match(
        error.subarray(1).toString("ascii"),
        /^E=691 R=0 C=[0-9a-f]{32} V=3 M=Authentication rejected$/,
      );
      for (const name of ["MS-CHAP2-Success", "MS-MPPE-Send-Key", "MS-MPPE-Recv-Key"]) {
        assert.equal(raw(answer, name), undefined, name);
      }
    }
  });

  test("a response to another challenge, or a tampered one, is refused", async () => {
    const [login] = logins(["alice", "alice-pw"]);
    const otherChallenge = mschapAttributes(login!).map(
      ([name, value]): Attribute => [name, name === "MS-CHAP-Challenge" ? randomBytes(16) : value],
    );
    assert.equal((await send(otherChallenge)).type, "Access-Reject");
    const flipped = { ...login!, expected: { ...login!.expected } };
    const nt = Buffer.from(flipped.expected.ntResponse, "hex");
    nt[23]! ^= 1;
    flipped.expected.ntResponse = nt.toString("hex");
    assert.equal((await send(mschapAttributes(flipped))).type, "Access-Reject");
  });

  test("a domain before a backslash is left out of the hash; the user is still looked up whole", async () => {
    // Wisp's users cannot hold a backslash, but radcheck rows written for FreeRADIUS can.
    await server.core.database.db
      .insertInto("radcheck")
      .values({
        account_id: accountId,
        username: "ACME\\carol",
        attribute: "Cleartext-Password",
        op: ":=",
        value: "carol-pw",
      })
      .execute();
    const [login, bare] = logins(["ACME\\carol", "carol-pw"], ["carol", "carol-pw"]);
    const answer = await send(mschapAttributes(login!));
    assert.equal(answer.type, "Access-Accept", text(answer, "Reply-Message"));
    assert.equal(
      raw(answer, "MS-CHAP2-Success")?.subarray(1).toString(),
      login!.expected.authenticatorResponse,
    );
    // "carol" alone is another user name, and no user's.
    assert.equal(text(await send(mschapAttributes(bare!)), "Reply-Message"), "unknown user");
  });

  test("malformed MS-CHAP attributes are no credentials: rejected, the server keeps serving", async () => {
    const [login] = logins(["alice", "alice-pw"]);
    const good = mschapAttributes(login!);
    const cut = (name: string, raw: string, length: number) =>
      good.map(([n, v]): Attribute => (n === name ? [raw, (v as Buffer).subarray(0, length)] : [n, v]));
    const variants: Attribute[][] = [
      cut("MS-CHAP-Challenge", "MS-CHAP-Challenge", 8),
      cut("MS-CHAP2-Response", "Attr-26.311.25", 49),
      good.filter(([n]) => n !== "MS-CHAP-Challenge"),
      good.filter(([n]) => n !== "MS-CHAP2-Response"),
    ];
    for (const attributes of variants) {
      const answer = await send(attributes);
      assert.equal(answer.type, "Access-Reject");
      assert.equal(text(answer, "Reply-Message"), "no credentials in the request");
      assert.equal(raw(answer, "MS-CHAP-Error"), undefined);
    }
    assert.equal((await send(good)).type, "Access-Accept");
  });

  test("300 random MS-CHAP attribute mixes are each answered, none accepted; a good login follows", async () => {
    const pick = <T>(list: readonly T[]): T => list[randomBytes(1)[0]! % list.length]!;
    const size = (max: number) => 1 + (randomBytes(2).readUInt16BE(0) % max);
    const [good] = logins(["alice", "alice-pw"]);
    const goodAttributes = mschapAttributes(good!);
    const client = new RadiusClient();
    try {
      for (let round = 0; round < 10; round++) {
        const requests = Array.from({ length: 30 }, () => {
          const attributes: Attribute[] = [["User-Name", pick(["alice", "nobody", "ACME\\alice", "\\"])]];
          for (let i = 0, n = size(4); i < n; i++) {
            attributes.push(
              pick<Attribute>([
                ["MS-CHAP-Challenge", randomBytes(size(40))],
                ["MS-CHAP-Challenge", randomBytes(16)],
                ["MS-CHAP2-Response", randomBytes(50)],
                // A real peer's response to another challenge (or to this one, under another name).
                ["MS-CHAP2-Response", goodAttributes[2]![1]],
                ["Attr-26.311.25", randomBytes(size(120))],
                ["MS-CHAP-Response", randomBytes(size(60))],
              ]),
            );
          }
          return attributes;
        });
        const answers = await Promise.all(
          requests.map((attributes) =>
            client.send({
              code: "Access-Request",
              attributes,
              host: "127.0.0.1",
              port: authPort,
              secret: SECRET,
              timeoutMs: 3000,
              retries: 0,
              messageAuthenticator: true,
            }),
          ),
        );
        for (const [i, answer] of answers.entries()) {
          assert.equal(answer.type, "Access-Reject", JSON.stringify(requests[i]));
        }
      }
    } finally {
      client.close();
    }
    assert.equal((await send(goodAttributes)).type, "Access-Accept");
  });

  test("MS-CHAPv1 (what radtest -t mschap sends) is not served: no credentials, no MS-CHAP-Error", async () => {
    // radclient turns MS-CHAP-Password into an 8-octet MS-CHAP-Challenge and an MS-CHAP-Response.
    const answer = await send([
      ["User-Name", "alice"],
      ["MS-CHAP-Challenge", randomBytes(8)],
      ["MS-CHAP-Response", Buffer.concat([Buffer.of(0, 1), Buffer.alloc(24), randomBytes(24)])],
    ]);
    assert.equal(answer.type, "Access-Reject");
    assert.equal(text(answer, "Reply-Message"), "no credentials in the request");
    assert.equal(raw(answer, "MS-CHAP-Error"), undefined);
  });

  test("a voucher logs in with MS-CHAPv2, its code in either case", async () => {
    const voucher = await server.core.vouchers.create(accountId, { validity: 3600 });
    const [upper, lower] = logins([voucher.code, voucher.code], [voucher.code, voucher.code.toLowerCase()]);
    for (const login of [upper!, lower!]) {
      const answer = await send(mschapAttributes(login));
      assert.equal(answer.type, "Access-Accept", text(answer, "Reply-Message"));
      assert.equal(
        raw(answer, "MS-CHAP2-Success")?.subarray(1).toString(),
        login.expected.authenticatorResponse,
      );
      assert.equal(raw(answer, "MS-MPPE-Send-Key")?.toString("hex"), login.expected.clientRecvKey);
    }
  });

  test("wisp radius test --mschapv2 logs in and checks the server's MS-CHAP2-Success", async () => {
    const env = {
      ...databaseEnv(server.database),
      RADIUS_HOST: "127.0.0.1",
      RADIUS_AUTH_PORT: String(authPort),
    };
    const [right, wrong] = await Promise.all([
      wisp(["radius", "test", "alice", "--mschapv2", "--password-stdin"], env, "alice-pw\n"),
      wisp(["radius", "test", "alice", "--mschapv2", "--password-stdin"], env, "alice-pX\n"),
    ]);
    assert.equal(right.code, 0, right.stdout + right.stderr);
    assert.match(right.stdout, /\(MS-CHAPv2, /);
    assert.match(right.stdout, /Received Access-Accept/);
    assert.match(right.stdout, /MS-CHAP2-Success checked: the server knows the password/);
    assert.match(right.stdout, /MS-CHAP2-Response = <hidden>/);
    assert.match(right.stdout, /MS-MPPE-Send-Key = <hidden>/);
    assert.equal(wrong.code, 1, wrong.stdout + wrong.stderr);
    assert.match(wrong.stdout, /Received Access-Reject/);
    assert.match(wrong.stdout, /MS-CHAP-Error = /);
    for (const result of [right, wrong]) assert.ok(!(result.stdout + result.stderr).includes("alice-p"));
  });

  test("the recorded attempts never hold the MS-CHAP response", async () => {
    const [login] = logins(["alice", "alice-pw"]);
    await send(mschapAttributes(login!));
    await server.core.aaa.drain();
    const rows = await server.core.database.db.selectFrom("radpostauth").selectAll().execute();
    const events = await server.core.database.db.selectFrom("events").selectAll().execute();
    assert.ok(rows.length >= 8);
    const stored = JSON.stringify([rows, events]).toLowerCase();
    for (const secret of [login!.expected.ntResponse, login!.input.peerChallenge, "alice-pw"]) {
      assert.equal(stored.includes(secret.toLowerCase()), false, `${secret} is not stored`);
    }
    for (const row of rows) assert.equal(row.pass, "");
  });
});
