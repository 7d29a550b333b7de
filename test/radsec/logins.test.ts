// RadSec decides exactly like UDP: PAP, CHAP, accounting, Status-Server over mutual TLS with a
// certificate Wisp issued for the network; many requests in flight on one connection, answered as
// they finish; RADIUS/1.1 when the NAS offers it by ALPN (RFC 9765), tested with our own client
// (no peer we can run speaks it).
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { ntPasswordHash } from "../../src/core/aaa/nt-hash.ts";
import { generateNtResponse } from "../../src/radius/mschap/mschapv2.ts";
import { PacketCode, type RadiusPacket } from "../../src/radius/packet.ts";
import { attribute, eventually, loginSender } from "../support/accounting.ts";
import { type RadsecLab, startRadsecLab } from "../support/radsec-lab.ts";

const pap = (user: string, password: string, nas = "ap-1") =>
  [
    ["User-Name", user],
    ["User-Password", password],
    ["NAS-Identifier", nas],
    ["Calling-Station-Id", "02-00-00-00-09-09"],
  ] as const;

function chap(user: string, password: string, challenge: Buffer) {
  const id = 7;
  const digest = createHash("md5")
    .update(Buffer.concat([Buffer.of(id), Buffer.from(password), challenge]))
    .digest();
  return [
    ["User-Name", user],
    ["CHAP-Password", Buffer.concat([Buffer.of(id), digest])],
    ["CHAP-Challenge", challenge],
  ] as const;
}

/** MS-CHAP-Challenge and MS-CHAP2-Response (RFC 2548 section 2.3.2) computed as a peer would. */
function mschapv2(user: string, password: string) {
  const authenticator = randomBytes(16);
  const peer = randomBytes(16);
  const nt = generateNtResponse(authenticator, peer, user, ntPasswordHash(password));
  return [
    ["User-Name", user],
    ["MS-CHAP-Challenge", authenticator],
    ["MS-CHAP2-Response", Buffer.concat([Buffer.of(1, 0), peer, Buffer.alloc(8), nt])],
  ] as const;
}

const reply = (packet: RadiusPacket) =>
  packet.attributes
    .filter((a) => a.name !== "Message-Authenticator")
    .map((a) => `${a.name}=${a.value}`)
    .sort();

describe("RadSec logins", () => {
  let lab: RadsecLab;
  before(async () => {
    lab = await startRadsecLab();
    await lab.reply("Session-Timeout", "3600");
  });
  after(() => lab?.stop());

  test("PAP over RadSec gets the same verdicts and reply attributes as over UDP", async () => {
    const client = await lab.connect();
    try {
      assert.equal(client.socket.alpnProtocol, false, "no ALPN offered: RADIUS/1.0");
      const accept = await client.request(PacketCode.AccessRequest, [...pap("alice", "alice-pw")]);
      assert.equal(accept.type, "Access-Accept");
      assert.equal(attribute(accept, "Session-Timeout"), "3600");
      const reject = await client.request(PacketCode.AccessRequest, [...pap("alice", "wrong")]);
      assert.equal(reject.type, "Access-Reject");
      assert.equal(attribute(reject, "Reply-Message"), "wrong password");
      const udp = loginSender(lab.udpPort, lab.secret);
      assert.deepEqual(reply(await udp("alice", "alice-pw")), reply(accept));
      assert.deepEqual(reply(await udp("alice", "wrong")), reply(reject));
      const unknown = await client.request(PacketCode.AccessRequest, [...pap("nobody", "x")]);
      assert.equal(attribute(unknown, "Reply-Message"), "unknown user");
    } finally {
      client.close();
    }
  });

  test("each attempt is recorded against the network the certificate names", async () => {
    const client = await lab.connect();
    try {
      await client.request(PacketCode.AccessRequest, [...pap("alice", "alice-pw", "tls-proof")]);
    } finally {
      client.close();
    }
    const row = await eventually(async () => {
      await lab.server.core.aaa.drain();
      return lab.server.core.database.db
        .selectFrom("radpostauth")
        .select(["username", "reply", "network_id", "account_id"])
        .where("nas_identifier", "=", "tls-proof")
        .executeTakeFirst();
    });
    assert.deepEqual(row, {
      username: "alice",
      reply: "Access-Accept",
      network_id: lab.network.id,
      account_id: lab.accountId,
    });
  });

  test("CHAP with a CHAP-Challenge, and Status-Server (RFC 5997) answered with Access-Accept", async () => {
    const client = await lab.connect();
    try {
      const challenge = randomBytes(16);
      assert.equal(
        (await client.request(PacketCode.AccessRequest, [...chap("alice", "alice-pw", challenge)])).type,
        "Access-Accept",
      );
      assert.equal(
        (await client.request(PacketCode.AccessRequest, [...chap("alice", "nope", challenge)])).type,
        "Access-Reject",
      );
      const status = await client.request(PacketCode.StatusServer, [["NAS-Identifier", "ap-1"]]);
      assert.equal(status.type, "Access-Accept");
    } finally {
      client.close();
    }
  });

  test("MS-CHAPv2 and a voucher over RadSec; over RADIUS/1.1 the MPPE keys travel unhidden", async () => {
    const voucher = await lab.server.call("POST", "/api/vouchers", {
      key: lab.key,
      body: { validity: 3600 },
    });
    assert.equal(voucher.status, 201, voucher.text);
    for (const alpn of [undefined, ["radius/1.1"]]) {
      const client = await lab.connect(alpn ? { alpn, minVersion: "TLSv1.3" } : {});
      try {
        const accept = await client.request(PacketCode.AccessRequest, [...mschapv2("alice", "alice-pw")]);
        assert.equal(
          accept.type,
          "Access-Accept",
          `MS-CHAPv2 over ${client.socket.alpnProtocol || "radius/1.0"}`,
        );
        const success = accept.attributes.find((a) => a.name === "MS-CHAP2-Success")?.raw;
        assert.match(success?.subarray(1).toString() ?? "", /^S=[0-9A-F]{40}$/);
        const keys = accept.attributes.filter(
          (a) => a.name.startsWith("MS-MPPE-") && a.name.endsWith("-Key"),
        );
        assert.equal(keys.length, 2);
        for (const key of keys) assert.equal(key.encrypted, undefined, "decoded (1.0) or plain (1.1)");
        const wrong = await client.request(PacketCode.AccessRequest, [...mschapv2("alice", "nope")]);
        assert.equal(wrong.type, "Access-Reject");
        const code = voucher.body.code as string;
        assert.equal(
          (await client.request(PacketCode.AccessRequest, [...pap(code, code)])).type,
          "Access-Accept",
        );
      } finally {
        client.close();
      }
    }
  });

  test("accounting over the same connection opens and closes a session of the network", async () => {
    const client = await lab.connect();
    const station = [
      ["User-Name", "alice"],
      ["Acct-Session-Id", "radsec-1"],
      ["Calling-Station-Id", "02-00-00-00-01-01"],
      ["Called-Station-Id", "02-00-00-00-00-01:lab"],
    ] as const;
    try {
      const start = await client.request(PacketCode.AccountingRequest, [
        ...station,
        ["Acct-Status-Type", "Start"],
      ]);
      assert.equal(start.type, "Accounting-Response");
      const open = await eventually(async () => {
        const res = await lab.server.call("GET", "/api/sessions?status=active", { key: lab.key });
        return res.body.data.find((s: { acct_session_id: string }) => s.acct_session_id === "radsec-1");
      });
      assert.equal(open.network_id, lab.network.id);
      const stop = await client.request(PacketCode.AccountingRequest, [
        ...station,
        ["Acct-Status-Type", "Stop"],
        ["Acct-Session-Time", 60],
      ]);
      assert.equal(stop.type, "Accounting-Response");
    } finally {
      client.close();
    }
  });

  test("many requests in flight on one connection are all answered, as they finish", async () => {
    const client = await lab.connect();
    try {
      const order: string[] = [];
      const logins = Array.from({ length: 60 }, (_, i) =>
        client.request(PacketCode.AccessRequest, [...pap("alice", i % 3 ? "alice-pw" : "bad")]).then((p) => {
          order.push("login");
          return p;
        }),
      );
      // Sent after the logins, answered before them: nothing to look up.
      const status = client.request(PacketCode.StatusServer, []).then((p) => {
        order.push("status");
        return p;
      });
      const answers = await Promise.all(logins);
      await status;
      assert.deepEqual(
        answers.map((answer) => answer.type),
        answers.map((_, i) => (i % 3 ? "Access-Accept" : "Access-Reject")),
      );
      assert.ok(
        order.indexOf("status") < order.length - 1,
        `Status-Server was not answered out of order: ${order.join(",")}`,
      );
    } finally {
      client.close();
    }
  });

  test("RADIUS/1.1 through ALPN: Token instead of authenticators, the password in the clear inside TLS", async () => {
    const client = await lab.connect({ alpn: ["radius/1.1", "radius/1.0"], minVersion: "TLSv1.3" });
    try {
      assert.equal(client.socket.alpnProtocol, "radius/1.1");
      const accept = await client.request(PacketCode.AccessRequest, [...pap("alice", "alice-pw")]);
      assert.equal(accept.type, "Access-Accept");
      assert.equal(attribute(accept, "Session-Timeout"), "3600");
      assert.equal(
        accept.attributes.some((a) => a.name === "Message-Authenticator"),
        false,
        "RFC 9765 5.2",
      );
      assert.equal(
        accept.authenticator.subarray(4).equals(Buffer.alloc(12)),
        true,
        "12 reserved zero octets",
      );
      assert.equal(
        (await client.request(PacketCode.AccessRequest, [...pap("alice", "wrong")])).type,
        "Access-Reject",
      );
      const challenge = randomBytes(16);
      assert.equal(
        (await client.request(PacketCode.AccessRequest, [...chap("alice", "alice-pw", challenge)])).type,
        "Access-Accept",
      );
      const acct = await client.request(PacketCode.AccountingRequest, [
        ["User-Name", "alice"],
        ["Acct-Session-Id", "radsec-11"],
        ["Acct-Status-Type", "Start"],
      ]);
      assert.equal(acct.type, "Accounting-Response");
    } finally {
      client.close();
    }
  });

  test("ALPN radius/1.0 keeps RADIUS/1.0; names Wisp does not speak end the handshake", async () => {
    const old = await lab.connect({ alpn: ["radius/1.0"] });
    try {
      assert.equal(old.socket.alpnProtocol, "radius/1.0");
      assert.equal(
        (await old.request(PacketCode.AccessRequest, [...pap("alice", "alice-pw")])).type,
        "Access-Accept",
      );
    } finally {
      old.close();
    }
    await assert.rejects(
      lab.connect({ alpn: ["http/1.1"] }),
      /no_application_protocol|application protocol|socket hang up|ECONNRESET/i,
    );
  });

  test("RADIUS/1.1 is refused over TLS 1.2 (RFC 9765 requires TLS 1.3)", async () => {
    // The refusal comes as the handshake ends: the client sees either the handshake fail or the close.
    const refused = await lab.connect({ alpn: ["radius/1.1"], maxVersion: "TLSv1.2" }).then(
      async (client) => {
        await client.closed;
        return "closed";
      },
      (error: Error) => error.message,
    );
    assert.match(refused, /closed|disconnected|ECONNRESET|hang up/);
  });
});
