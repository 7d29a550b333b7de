// Requests that arrive together, as from many clients at once: every connection is opened first,
// then every request is written in one go, so the server reads them all in the same turn of its
// event loop (fetch from the test's own process would trickle them in as its turns allow).
import net from "node:net";

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

function serialize(host: string, { method, path, headers = {}, body }: RawRequest): string {
  const lines = [`${method} ${path} HTTP/1.1`, `host: ${host}`, "connection: close"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push(`content-length: ${Buffer.byteLength(body)}`);
  return `${lines.join("\r\n")}\r\n\r\n${body ?? ""}`;
}

function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const end = body.indexOf("\r\n", at);
    const size = Number.parseInt(body.toString("latin1", at, end), 16);
    if (!size) break;
    parts.push(body.subarray(end + 2, end + 2 + size));
    at = end + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

function parse(raw: Buffer): RawResponse {
  const split = raw.indexOf("\r\n\r\n");
  const [statusLine = "", ...headerLines] = raw.toString("latin1", 0, split).split("\r\n");
  const headers = new Headers();
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  let body = raw.subarray(split + 4);
  if (/chunked/i.test(headers.get("transfer-encoding") ?? "")) body = dechunk(body);
  return { status: Number(statusLine.split(" ")[1]), headers, text: body.toString("utf8") };
}

/** Sends every request at the same moment, each on its own connection; answers in the same order. */
export async function burst(base: string, requests: RawRequest[]): Promise<RawResponse[]> {
  const url = new URL(base);
  const port = Number(url.port);
  const sockets = await Promise.all(
    requests.map(
      () =>
        new Promise<net.Socket>((resolve, reject) => {
          const socket = net.connect(port, url.hostname, () => resolve(socket));
          socket.once("error", reject);
        }),
    ),
  );
  const answers = sockets.map(
    (socket) =>
      new Promise<RawResponse>((resolve, reject) => {
        const chunks: Buffer[] = [];
        socket.on("data", (chunk) => chunks.push(chunk));
        socket.on("error", reject);
        socket.on("end", () => resolve(parse(Buffer.concat(chunks))));
      }),
  );
  // Until the server has accepted every connection: then one read of its finds every request.
  await new Promise((resolve) => setTimeout(resolve, 100));
  for (const [i, socket] of sockets.entries()) socket.write(serialize(url.host, requests[i]!));
  return Promise.all(answers);
}
