import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import dgram from "node:dgram";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import {
  accessRequestChap,
  accessRequestPap,
  RadiusClient,
  RadiusResponseError,
  RadiusTimeoutError,
  sendRadius,
} from "../../src/radius/client.ts";
import {
  type AttributeInput,
  decodePacket,
  encodePacket,
  getAttribute,
  hasMessageAuthenticator,
  type RadiusPacket,
  verifyChap,
  verifyMessageAuthenticator,
  verifyRequestAuthenticator,
} from "../../src/radius/packet.ts";

const SECRET = "client-test-secret";

interface TestServer {
  port: number;
  /** Raw datagrams received, in order. */
  received: Buffer[];
  socket: dgram.Socket;
  close(): void;
}

type Handler = (req: RadiusPacket, raw: Buffer, rinfo: dgram.RemoteInfo, server: TestServer) => void;

/** A UDP server on 127.0.0.1; the handler decides whether and how to answer. */
function listen(handler: Handler): Promise<TestServer> {
  const socket = dgram.createSocket("udp4");
  const server: TestServer = { port: 0, received: [], socket, close: () => socket.close() };
  socket.on("message", (msg, rinfo) => {
    server.received.push(msg);
    handler(decodePacket(msg, { secret: SECRET }), msg, rinfo, server);
  });
  return new Promise((resolve) => {
    socket.bind(0, "127.0.0.1", () => {
      server.port = (socket.address() as AddressInfo).port;
      resolve(server);
    });
  });
}

function answer(
  server: TestServer,
  req: RadiusPacket,
  rinfo: dgram.RemoteInfo,
  code: number,
  attributes: AttributeInput[],
  options: { secret?: string; messageAuthenticator?: boolean } = {},
): void {
  const out = encodePacket({ code, identifier: req.identifier, attributes }, options.secret ?? SECRET, {
    requestAuthenticator: req.authenticator,
    requestCode: req.code,
    messageAuthenticator: options.messageAuthenticator ?? true,
  });
  server.socket.send(out, rinfo.port, rinfo.address);
}

/** Answers like a small NAS-facing server: bob / "s3cret" by PAP or CHAP, accounting, status. */
const aaa: Handler = (req, raw, rinfo, server) => {
  if (req.code === 4) {
    const ok = verifyRequestAuthenticator(raw, SECRET);
    return answer(server, req, rinfo, 5, [["Reply-Message", ok ? "acct ok" : "acct bad"]]);
  }
  if (req.code === 12) {
    const ok = verifyMessageAuthenticator(raw, SECRET);
    return answer(server, req, rinfo, 2, [["Reply-Message", ok ? "alive" : "bad"]]);
  }
  const chap = getAttribute(req, "CHAP-Password");
  const challenge = getAttribute(req, "CHAP-Challenge")?.raw ?? req.authenticator;
  const ok = chap
    ? verifyChap(chap.raw, challenge, "s3cret")
    : getAttribute(req, "User-Password")?.value === "s3cret";
  if (!ok) return answer(server, req, rinfo, 3, [["Reply-Message", "no"]]);
  answer(server, req, rinfo, 2, [
    ["Reply-Message", `hello ${getAttribute(req, "User-Name")?.value}`],
    ["Session-Timeout", 600],
    ["WISPr-Bandwidth-Max-Down", 5_000_000],
    ["Tunnel-Password:1", "vpn-pw"],
  ]);
};

describe("sendRadius against a server using the codec", () => {
  let server: TestServer;
  before(async () => {
    server = await listen(aaa);
  });
  after(() => server.close());

  const target = () => ({ host: "127.0.0.1", port: server.port, secret: SECRET, timeoutMs: 2000 });

  test("PAP: Access-Accept decoded and verified, hidden reply attributes revealed", async () => {
    const res = await sendRadius({
      ...target(),
      ...accessRequestPap("bob", "s3cret", [["NAS-Identifier", "t"]]),
    });
    assert.equal(res.type, "Access-Accept");
    assert.deepEqual(
      res.attributes.map((a) => `${a.name}=${a.value}`),
      [
        // The server put a Message-Authenticator first.
        `Message-Authenticator=${res.attributes[0]!.value}`,
        "Reply-Message=hello bob",
        "Session-Timeout=600",
        "WISPr-Bandwidth-Max-Down=5000000",
        "Tunnel-Password=vpn-pw",
      ],
    );
    const req = decodePacket(server.received.at(-1)!, { secret: SECRET });
    assert.deepEqual(
      req.attributes.map((a) => `${a.name}=${a.value}`),
      ["User-Name=bob", "User-Password=s3cret", "NAS-Identifier=t"],
    );
  });

  test("PAP with a wrong password: Access-Reject resolves (it is a valid answer)", async () => {
    const res = await sendRadius({ ...target(), ...accessRequestPap("bob", "nope") });
    assert.equal(res.type, "Access-Reject");
  });

  test("CHAP with the Request Authenticator as challenge, and with CHAP-Challenge", async () => {
    const plain = await sendRadius({ ...target(), ...accessRequestChap("bob", "s3cret") });
    assert.equal(plain.type, "Access-Accept");
    const sent = decodePacket(server.received.at(-1)!);
    assert.equal(getAttribute(sent, "CHAP-Challenge"), undefined);
    const challenge = Buffer.from("00112233445566778899aabbccddeeff", "hex");
    const withChallenge = await sendRadius({
      ...target(),
      ...accessRequestChap("bob", "s3cret", [], { challenge }),
    });
    assert.equal(withChallenge.type, "Access-Accept");
    assert.deepEqual(getAttribute(decodePacket(server.received.at(-1)!), "CHAP-Challenge")?.raw, challenge);
    const wrong = await sendRadius({ ...target(), ...accessRequestChap("bob", "S3cret") });
    assert.equal(wrong.type, "Access-Reject");
  });

  test("Accounting-Request is signed; Status-Server carries a Message-Authenticator", async () => {
    const acct = await sendRadius({
      ...target(),
      code: "Accounting-Request",
      attributes: [
        ["Acct-Status-Type", "Start"],
        ["Acct-Session-Id", "abc"],
        ["User-Name", "bob"],
      ],
    });
    assert.equal(acct.type, "Accounting-Response");
    assert.equal(getAttribute(acct, "Reply-Message")?.value, "acct ok");
    const status = await sendRadius({ ...target(), code: 12 });
    assert.equal(getAttribute(status, "Reply-Message")?.value, "alive");
  });

  test("messageAuthenticator: the request carries one, first", async () => {
    await sendRadius({ ...target(), ...accessRequestPap("bob", "s3cret"), messageAuthenticator: true });
    const raw = server.received.at(-1)!;
    assert.equal(raw[20], 80);
    assert.equal(verifyMessageAuthenticator(raw, SECRET), true);
  });

  test("a hostname is resolved", async () => {
    const res = await sendRadius({ ...target(), host: "localhost", ...accessRequestPap("bob", "s3cret") });
    assert.equal(res.type, "Access-Accept");
  });

  test("requests a client cannot send are refused", async () => {
    await assert.rejects(sendRadius({ ...target(), code: "Access-Accept" }), TypeError);
    await assert.rejects(sendRadius({ ...target(), code: 99 }), TypeError);
  });
});

describe("responses that must not be trusted", () => {
  test("a response signed with another secret rejects at once", async () => {
    const server = await listen((req, _raw, rinfo, s) => answer(s, req, rinfo, 2, [], { secret: "other" }));
    try {
      const started = Date.now();
      await assert.rejects(
        sendRadius({ host: "127.0.0.1", port: server.port, secret: SECRET, timeoutMs: 3000, code: 12 }),
        (err: unknown) => err instanceof RadiusResponseError && /shared secret/.test(err.message),
      );
      assert.ok(Date.now() - started < 2000, "no waiting for a timeout");
    } finally {
      server.close();
    }
  });

  test("a response code that does not answer the request", async () => {
    const server = await listen((req, _raw, rinfo, s) => answer(s, req, rinfo, 5, []));
    try {
      const options = { host: "127.0.0.1", port: server.port, secret: SECRET, ...accessRequestPap("a", "b") };
      await assert.rejects(sendRadius(options), /unexpected Accounting-Response/);
    } finally {
      server.close();
    }
  });

  test("requireMessageAuthenticator refuses responses without one", async () => {
    const server = await listen((req, _raw, rinfo, s) =>
      answer(s, req, rinfo, 3, [], { messageAuthenticator: false }),
    );
    try {
      const base = { host: "127.0.0.1", port: server.port, secret: SECRET, ...accessRequestPap("a", "b") };
      assert.equal((await sendRadius(base)).type, "Access-Reject");
      await assert.rejects(
        sendRadius({ ...base, requireMessageAuthenticator: true }),
        /has no Message-Authenticator/,
      );
    } finally {
      server.close();
    }
  });

  test("a malformed but correctly signed response", async () => {
    const server = await listen((req, _raw, rinfo, s) => {
      // Access-Accept with attribute 0: signed correctly, but FreeRADIUS would drop it.
      const out = Buffer.concat([Buffer.of(2, req.identifier, 0, 23), req.authenticator, Buffer.of(0, 3, 0)]);
      createHash("md5").update(out).update(SECRET).digest().copy(out, 4);
      s.socket.send(out, rinfo.port, rinfo.address);
    });
    try {
      const options = { host: "127.0.0.1", port: server.port, secret: SECRET, ...accessRequestPap("a", "b") };
      await assert.rejects(sendRadius(options), (err: unknown) => {
        return (
          err instanceof RadiusResponseError &&
          /malformed Access-Accept: invalid attribute 0/.test(err.message)
        );
      });
    } finally {
      server.close();
    }
  });

  test("answers from another port are ignored, even when correctly signed", async () => {
    const spoofer = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => spoofer.bind(0, "127.0.0.1", resolve));
    const server = await listen((req, _raw, rinfo, s) => {
      const forged = encodePacket(
        { code: 2, identifier: req.identifier, attributes: [["Reply-Message", "forged"]] },
        SECRET,
        { requestAuthenticator: req.authenticator },
      );
      spoofer.send(forged, rinfo.port, rinfo.address);
      setTimeout(() => answer(s, req, rinfo, 3, [["Reply-Message", "real"]]), 50);
    });
    try {
      const res = await sendRadius({
        host: "127.0.0.1",
        port: server.port,
        secret: SECRET,
        ...accessRequestPap("a", "b"),
      });
      assert.equal(getAttribute(res, "Reply-Message")?.value, "real");
    } finally {
      server.close();
      spoofer.close();
    }
  });
});

describe("timeouts and retransmission", () => {
  test("the same datagram is retransmitted, then RadiusTimeoutError", async () => {
    const server = await listen(() => {});
    try {
      const started = Date.now();
      await assert.rejects(
        sendRadius({
          host: "127.0.0.1",
          port: server.port,
          secret: SECRET,
          timeoutMs: 80,
          retries: 2,
          ...accessRequestPap("bob", "x"),
        }),
        (err: unknown) => err instanceof RadiusTimeoutError && /after 3 attempts/.test(err.message),
      );
      assert.ok(Date.now() - started >= 3 * 80 - 10);
      assert.equal(server.received.length, 3);
      assert.deepEqual(server.received[1], server.received[0], "same identifier and authenticator");
      assert.deepEqual(server.received[2], server.received[0]);
    } finally {
      server.close();
    }
  });

  test("a late answer to a retransmission still resolves", async () => {
    let seen = 0;
    const server = await listen((req, _raw, rinfo, s) => {
      if (++seen === 2) answer(s, req, rinfo, 2, []);
    });
    try {
      const options = {
        host: "127.0.0.1",
        port: server.port,
        secret: SECRET,
        timeoutMs: 60,
        retries: 3,
        code: 12,
      };
      assert.equal((await sendRadius(options)).type, "Access-Accept");
      assert.equal(server.received.length, 2);
    } finally {
      server.close();
    }
  });

  test("an abort signal stops waiting", async () => {
    const server = await listen(() => {});
    try {
      const signal = AbortSignal.timeout(50);
      const options = {
        host: "127.0.0.1",
        port: server.port,
        secret: SECRET,
        timeoutMs: 5000,
        code: 12,
        signal,
      };
      await assert.rejects(sendRadius(options), (err: unknown) => (err as Error).name === "TimeoutError");
    } finally {
      server.close();
    }
  });
});

test("identifiers: 256 requests in flight on one socket, all distinct; the 257th is refused", async () => {
  const held: Array<() => void> = [];
  const server = await listen((req, raw, rinfo, s) => {
    assert.equal(hasMessageAuthenticator(raw), true);
    held.push(() => answer(s, req, rinfo, 2, [["Reply-Message", String(req.identifier)]]));
  });
  const client = new RadiusClient();
  try {
    const base = {
      host: "127.0.0.1",
      port: server.port,
      secret: SECRET,
      timeoutMs: 5000,
      retries: 0,
      code: 12,
    };
    const inFlight = Array.from({ length: 256 }, () => client.send(base));
    while (held.length < 256) await new Promise((resolve) => setTimeout(resolve, 5));
    await assert.rejects(client.send(base), /no free RADIUS identifier/);
    for (const release of held) release();
    const responses = await Promise.all(inFlight);
    const ids = new Set(responses.map((r) => r.identifier));
    assert.equal(ids.size, 256);
    for (const r of responses) assert.equal(getAttribute(r, "Reply-Message")?.value, String(r.identifier));
    // Identifiers are free again once answered.
    held.length = 0;
    const again = client.send(base);
    while (held.length < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    held[0]!();
    assert.equal((await again).type, "Access-Accept");
  } finally {
    client.close();
    server.close();
  }
});
