// Requests that fail before any route is chosen (by Node's HTTP parser or by the router) still get
// the common error shape {"error": true, "message", "code"} with the right status. Sent as raw bytes,
// since a well-behaved client cannot send most of them.
import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { startTestServer, type TestServer } from "../support/server.ts";

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: whatever the server sent
  body: any;
}

/** Writes `bytes` on a fresh connection and reads until the server closes it or the answer is whole. */
function raw(server: TestServer, bytes: string): Promise<RawAnswer> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), "127.0.0.1");
    let text = "";
    const finish = () => {
      socket.destroy();
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) return reject(new Error(`no complete answer: ${JSON.stringify(text)}`));
      const [statusLine = "", ...lines] = text.slice(0, end).split("\r\n");
      const headers = Object.fromEntries(
        lines.map((line) => [
          line.slice(0, line.indexOf(":")).toLowerCase(),
          line.slice(line.indexOf(":") + 1).trim(),
        ]),
      );
      const body = text.slice(end + 4, end + 4 + Number(headers["content-length"] ?? text.length));
      try {
        resolve({ status: Number(statusLine.split(" ")[1]), headers, body: JSON.parse(body) });
      } catch {
        reject(new Error(`the body is not JSON: ${JSON.stringify(text)}`));
      }
    };
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
      const end = text.indexOf("\r\n\r\n");
      const length = /\r\ncontent-length: *(\d+)/i.exec(text)?.[1];
      if (end >= 0 && length !== undefined && text.length - end - 4 >= Number(length)) finish();
    });
    socket.on("close", finish);
    socket.on("error", () => {});
    socket.write(bytes);
  });
}

function assertShape(answer: RawAnswer, status: number, message: RegExp): void {
  const context = JSON.stringify(answer);
  assert.equal(answer.status, status, context);
  assert.match(answer.headers["content-type"] ?? "", /^application\/json; charset=utf-8$/, context);
  assert.deepEqual(Object.keys(answer.body).sort(), ["code", "error", "message"], context);
  assert.equal(answer.body.error, true);
  assert.equal(answer.body.code, status);
  assert.match(answer.body.message, message, context);
}

describe("errors raised before routing", () => {
  let server: TestServer;
  let key: string;
  before(async () => {
    server = await startTestServer();
    key = await server.key("default");
  });
  after(() => server.stop());

  const get = (target: string, headers: string[] = []) =>
    [`GET ${target} HTTP/1.1`, "Host: localhost", ...headers, "Connection: close", "", ""].join("\r\n");

  test("malformed percent-encoding in the path: 400, with or without a key, API or console", async () => {
    for (const target of ["/api/users/%E0%A4%A", "/api/users/%zz", "/console/users/%E0%A4%A"]) {
      assertShape(await raw(server, get(target)), 400, /percent-encoding/);
      assertShape(await raw(server, get(target, [`Authorization: Bearer ${key}`])), 400, /percent-encoding/);
    }
  });

  test("a path segment over the router's limit: 414", async () => {
    assertShape(await raw(server, get(`/api/users/${"9".repeat(150)}`)), 414, /longer than 100 characters/);
  });

  test("a request line Node cannot parse: 400", async () => {
    assertShape(await raw(server, "BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n"), 400, /unknown method/);
    assertShape(await raw(server, "GET /api/users HTTP/9.9\r\nHost: x\r\n\r\n"), 400, /not valid HTTP/);
    assertShape(await raw(server, "GET /a b c HTTP/1.1\r\nHost: x\r\n\r\n"), 400, /not valid HTTP/);
    assertShape(
      await raw(server, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"),
      400,
      /TLS handshake arrived on a plain-HTTP port/,
    );
  });

  test("a header Node cannot parse: 400", async () => {
    assertShape(await raw(server, get("/api/users", ["Bad Header: x"])), 400, /header is not valid HTTP/);
    assertShape(await raw(server, get("/api/users", ["Content-Length: abc"])), 400, /Content-Length/);
  });

  test("headers over the size limit: 431", async () => {
    const big = `X-Big: ${"a".repeat(20 * 1024)}`;
    assertShape(await raw(server, get("/api/users", [big])), 431, /larger than the 16 KiB limit/);
  });

  test("the server keeps answering normally afterwards", async () => {
    const ok = await server.call("GET", "/api/users", { key });
    assert.equal(ok.status, 200);
  });
});
