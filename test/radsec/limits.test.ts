// What protects the RadSec listener: a thousand idle connections from one address hold at most
// its per-address cap and are closed when their handshake times out, while another NAS logs in at
// once; a connection with no packet is closed after the idle timeout, one half-sending a packet
// (slowloris) after the partial-packet timeout, and one that keeps talking stays open.
import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { encodePacket, PacketCode } from "../../src/radius/packet.ts";
import { loginSender } from "../support/accounting.ts";
import { type RadsecLab, startRadsecLab } from "../support/radsec-lab.ts";

const TOKEN = "metrics-Token-0123456789abcdef";

async function metric(lab: RadsecLab, series: string): Promise<number> {
  const text = await (
    await fetch(`${lab.server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  ).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("RadSec connection limits and timeouts", () => {
  let lab: RadsecLab;
  before(async () => {
    lab = await startRadsecLab({
      env: {
        METRICS_TOKEN: TOKEN,
        RADSEC_MAX_CONNECTIONS_PER_ADDRESS: "20",
        RADSEC_HANDSHAKE_TIMEOUT: "5",
        RADSEC_IDLE_TIMEOUT: "2",
      },
    });
  });
  after(() => lab?.stop());

  test("a thousand idle connections from one address do not stop another NAS's logins", async () => {
    const sockets: net.Socket[] = [];
    let closed = 0;
    for (let i = 0; i < 1000; i++) {
      const socket = net.connect({ host: "127.0.0.1", port: lab.port, localAddress: "127.0.0.2" });
      socket.on("error", () => {});
      socket.on("close", () => closed++);
      sockets.push(socket);
    }
    const until = async (check: () => boolean, ms: number) => {
      for (const end = Date.now() + ms; !check() && Date.now() < end; ) await sleep(50);
    };
    try {
      await until(() => closed >= 980, 4000);
      assert.ok(closed >= 980, `${1000 - closed} still open`);
      assert.ok(lab.server.radsec!.admitted <= 20, `${lab.server.radsec!.admitted} admitted from 127.0.0.2`);
      const started = Date.now();
      const nas = await lab.connect();
      const answer = await nas.request(PacketCode.AccessRequest, [
        ["User-Name", "alice"],
        ["User-Password", "alice-pw"],
      ]);
      nas.close();
      assert.equal(answer.type, "Access-Accept");
      const udp = await loginSender(lab.udpPort, lab.secret)("alice", "alice-pw");
      assert.equal(udp.type, "Access-Accept", "UDP RADIUS goes on beside the flood");
      assert.ok(Date.now() - started < 1500, `login took ${Date.now() - started} ms`);
      await until(() => closed === 1000, 8000);
      assert.equal(closed, 1000, "the ones held were closed when their handshake timed out");
      assert.ok((await metric(lab, 'wisp_radsec_refused_total{reason="handshake_timeout"}')) >= 1);
      const capped =
        (await metric(lab, 'wisp_radsec_refused_total{reason="too_many_connections_from_address"}')) +
        (await metric(lab, 'wisp_radsec_refused_total{reason="handshake_rate_from_address"}'));
      assert.ok(capped >= 980, `refused by the per-address caps: ${capped}`);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  test("an idle connection is closed after the idle timeout; one sending Status-Server stays", async () => {
    const idle = await lab.connect();
    const talking = await lab.connect();
    let talkingClosed = false;
    talking.closed.then(() => {
      talkingClosed = true;
    });
    const started = Date.now();
    const idleClosed = idle.closed.then(() => Date.now());
    for (let i = 0; i < 6; i++) {
      await sleep(500);
      if (!talkingClosed)
        assert.equal((await talking.request(PacketCode.StatusServer, [])).type, "Access-Accept");
    }
    const idleFor = (await idleClosed) - started;
    assert.ok(idleFor >= 1500 && idleFor < 3000, `idle closed after ${idleFor} ms`);
    assert.equal(talkingClosed, false, "a NAS that talks keeps its connection");
    talking.close();
  });

  test("a packet sent one octet at a time (slowloris) is cut off by the partial-packet timeout", async () => {
    const client = await lab.connect();
    const packet = encodePacket({ code: 1, identifier: 5, attributes: [["User-Name", "alice"]] }, "radsec");
    const started = Date.now();
    let sent = 0;
    const drip = setInterval(() => {
      if (sent < packet.length - 1) client.write(packet.subarray(sent, ++sent));
    }, 200);
    await client.closed;
    clearInterval(drip);
    const lasted = Date.now() - started;
    assert.ok(lasted >= 1500 && lasted < 3500, `closed after ${lasted} ms`);
    assert.equal(client.unmatched.length, 0);
  });
});
