// RadSec refuses what it must, one connection at a time: no certificate, a CA nobody trusts, a
// revoked or expired certificate, another account's network, a certificate matching no rule,
// TLS 1.1, plain TCP; after the handshake a malformed stream closes that connection only
// (RFC 6613 section 2.6.4) while others go on. Each refusal is counted by reason in /metrics.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { createAuthority, createLeaf, EKU_CLIENT_AUTH, signerOf } from "../../src/core/certs/x509.ts";
import { encodePacket, PacketCode } from "../../src/radius/packet.ts";
import type { RadsecTestClient } from "../support/radsec-client.ts";
import { type RadsecLab, startRadsecLab } from "../support/radsec-lab.ts";

const TOKEN = "metrics-Token-0123456789abcdef";

const login = (user = "alice", password = "alice-pw") =>
  [
    ["User-Name", user],
    ["User-Password", password],
  ] as const;

async function refusedCount(lab: RadsecLab, reason: string): Promise<number> {
  const text = await (
    await fetch(`${lab.server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  ).text();
  const series = `wisp_radsec_refused_total{reason="${reason}"} `;
  const line = text.split("\n").find((l) => l.startsWith(series));
  return line ? Number(line.slice(series.length)) : 0;
}

/** Connects and asks for a Status-Server answer: "refused" when the server ends it first. */
async function outcome(connect: () => Promise<RadsecTestClient>): Promise<"answered" | "refused"> {
  let client: RadsecTestClient;
  try {
    client = await connect();
  } catch {
    return "refused";
  }
  const answered = client.request(PacketCode.StatusServer, []).then(() => "answered" as const);
  const result = await Promise.race([answered, client.closed.then(() => "refused" as const)]);
  client.close();
  return result;
}

async function expectRefused(lab: RadsecLab, reason: string, connect: () => Promise<RadsecTestClient>) {
  const before = await refusedCount(lab, reason);
  assert.equal(await outcome(connect), "refused");
  assert.equal(await refusedCount(lab, reason), before + 1, `counted as ${reason}`);
}

/** A raw TLS connection presenting the NAS certificate, for writing bytes the client would not. */
function rawTls(lab: RadsecLab): Promise<RadsecTestClient> {
  return lab.connect();
}

function closedWithin(client: RadsecTestClient, ms: number): Promise<boolean> {
  return Promise.race([
    client.closed.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ]);
}

/** An Access-Request padded with Class attributes to exactly `length` octets. */
function accessRequestOfLength(length: number, identifier: number): Buffer {
  const base = encodePacket({ code: 1, identifier, attributes: [...login()] }, "radsec");
  const attributes: [string, Buffer][] = [];
  let room = length - base.length;
  while (room > 0) {
    const size = Math.min(room, 255);
    if (size < 3) throw new Error("cannot pad by less than 3");
    const next = room - size;
    const take = next > 0 && next < 3 ? size - 3 : size;
    attributes.push(["Class", Buffer.alloc(take - 2, 0x41)]);
    room -= take;
  }
  return encodePacket({ code: 1, identifier, attributes: [...login(), ...attributes] }, "radsec");
}

describe("RadSec refusals and bad input", () => {
  let lab: RadsecLab;
  before(async () => {
    lab = await startRadsecLab({ env: { METRICS_TOKEN: TOKEN } });
  });
  after(() => lab?.stop());

  test("a NAS without a client certificate is refused", async () => {
    await expectRefused(lab, "no_certificate", () => lab.connect({ cert: undefined, key: undefined }));
  });

  test("a certificate from a CA Wisp does not trust is refused", async () => {
    const stranger = await createAuthority("Stranger CA", 30);
    const leaf = await createLeaf(await signerOf(stranger), {
      commonName: "ap.stranger.test",
      names: [{ type: "dns", value: "ap.stranger.test" }],
      purpose: EKU_CLIENT_AUTH,
      days: 30,
    });
    await expectRefused(lab, "untrusted", () => lab.connect({ cert: leaf.cert, key: leaf.key }));
  });

  test("a revoked certificate is refused; a valid one of the same network still works", async () => {
    const second = await lab.issue(lab.network.id);
    assert.equal(await outcome(() => lab.connect({ cert: second.cert, key: second.key })), "answered");
    await lab.server.core.radsec.revoke(lab.accountId, lab.network.id, second.serial);
    await expectRefused(lab, "revoked", () => lab.connect({ cert: second.cert, key: second.key }));
    assert.equal(await outcome(() => lab.connect()), "answered");
  });

  test("an outside CA uploaded for a network: a matching certificate is that network, expired or unmatched ones are refused", async () => {
    const org = await createAuthority("Org CA", 365);
    const signer = await signerOf(org);
    const leaf = (name: string, now?: Date) =>
      createLeaf(signer, {
        commonName: name,
        names: [{ type: "dns", value: name }],
        purpose: EKU_CLIENT_AUTH,
        days: 1,
        ...(now ? { now } : {}),
      });
    const { network } = await lab.server.core.networks.create(lab.accountId, {
      name: "Org site",
      nas_ip: "",
    });
    await lab.server.core.radsec.trust(lab.accountId, network.id, {
      ca: org.cert,
      match: { field: "cn", patterns: ["ap-*.org.test"] },
    });
    const good = await leaf("ap-7.org.test");
    // The listener re-reads the CAs it trusts every few seconds: the NAS's retries get in then.
    let client: RadsecTestClient | undefined;
    for (let tries = 0; !client && tries < 40; tries++) {
      const attempt = await lab.connect({ cert: good.cert, key: good.key }).catch(() => undefined);
      if (attempt && (await outcome(async () => attempt)) === "answered") {
        client = await lab.connect({ cert: good.cert, key: good.key });
      } else await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.ok(client, "the uploaded CA is trusted within seconds");
    try {
      const answer = await client.request(PacketCode.AccessRequest, [...login()]);
      assert.equal(answer.type, "Access-Accept");
      assert.deepEqual(
        lab.server.radsec!.byNetwork(lab.accountId, network.id).map((c) => c.peerSubject),
        ["CN=ap-7.org.test"],
      );
    } finally {
      client.close();
    }
    const expired = await leaf("ap-8.org.test", new Date(Date.now() - 5 * 86_400_000));
    await expectRefused(lab, "expired", () => lab.connect({ cert: expired.cert, key: expired.key }));
    const other = await leaf("printer.org.test");
    await expectRefused(lab, "unknown_network", () => lab.connect({ cert: other.cert, key: other.key }));
  });

  test("another account's certificate is that account's network: it never reaches this account's users", async () => {
    const other = await lab.server.account("other-account");
    const { network } = await lab.server.core.networks.create(other.id, { name: "Their site", nas_ip: "" });
    const theirs = await lab.issue(network.id, other.id);
    const client = await lab.connect({ cert: theirs.cert, key: theirs.key });
    try {
      const answer = await client.request(PacketCode.AccessRequest, [...login()]);
      assert.equal(answer.type, "Access-Reject");
      assert.equal(answer.attributes.find((a) => a.name === "Reply-Message")?.value, "unknown user");
      assert.equal(lab.server.radsec!.byNetwork(lab.accountId, network.id).length, 0);
      assert.equal(lab.server.radsec!.byNetwork(other.id, network.id).length, 1);
    } finally {
      client.close();
    }
  });

  test("TLS 1.1 is refused in the handshake (openssl s_client -tls1_1)", async () => {
    const before = await refusedCount(lab, "tls_version");
    const child = spawn(
      "openssl",
      ["s_client", "-connect", `127.0.0.1:${lab.port}`, "-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    child.stdin.end();
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    assert.notEqual(code, 0, output);
    assert.match(output, /alert|error|handshake failure|no protocols/i);
    assert.equal(await refusedCount(lab, "tls_version"), before + 1);
  });

  test("a plain-TCP RADIUS packet gets no answer and the connection is closed", async () => {
    const socket = net.connect(lab.port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    const received: Buffer[] = [];
    socket.on("data", (d) => received.push(d));
    socket.on("error", () => {});
    socket.write(encodePacket({ code: 1, identifier: 1, attributes: [...login()] }, "radsec"));
    await new Promise((resolve) => socket.once("close", resolve));
    const bytes = Buffer.concat(received);
    assert.notEqual(bytes[0], PacketCode.AccessAccept, "no RADIUS answer");
    assert.ok(bytes.length === 0 || bytes[0] === 0x15, "at most a TLS alert");
  });

  for (const length of [0, 19, 4097, 65535]) {
    test(`a packet Length of ${length} closes that connection only`, async () => {
      const bystander = await lab.connect();
      const bad = await rawTls(lab);
      const header = Buffer.alloc(20);
      header[0] = PacketCode.AccessRequest;
      header.writeUInt16BE(length, 2);
      bad.write(header);
      assert.equal(await closedWithin(bad, 3000), true, "the bad connection is closed");
      assert.equal((await bystander.request(PacketCode.AccessRequest, [...login()])).type, "Access-Accept");
      bystander.close();
    });
  }

  test("a 4096-octet packet is answered; split octet by octet or coalesced, packets are still found", async () => {
    const client = await lab.connect();
    try {
      const big = accessRequestOfLength(4096, 200);
      assert.equal(big.length, 4096);
      client.write(big);
      for (const octet of accessRequestOfLength(300, 201)) client.write(Buffer.of(octet));
      const statuses = [1, 2, 3].map((id) =>
        encodePacket(
          { code: PacketCode.StatusServer, identifier: id, attributes: [["NAS-Identifier", "x"]] },
          "radsec",
        ),
      );
      client.write(Buffer.concat(statuses));
      const deadline = Date.now() + 10_000;
      while (client.unmatched.length < 5 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      const answered = client.unmatched.map((m) => `${m[0]}:${m[1]}`).sort();
      assert.deepEqual(answered, ["2:1", "2:2", "2:200", "2:201", "2:3"]);
    } finally {
      client.close();
    }
  });

  test("a copy of a request still in flight is not answered twice", async () => {
    const client = await lab.connect();
    try {
      const request = encodePacket({ code: 1, identifier: 9, attributes: [...login()] }, "radsec");
      client.write(Buffer.concat([request, request]));
      await new Promise((r) => setTimeout(r, 1500));
      assert.deepEqual(
        client.unmatched.map((m) => m[1]),
        [9],
      );
    } finally {
      client.close();
    }
  });

  test("garbage after the handshake closes the connection", async () => {
    const client = await lab.connect();
    client.write(Buffer.from("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    assert.equal(await closedWithin(client, 3000), true);
  });
});
