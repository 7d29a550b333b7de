// Console forms as many browsers post them at once (for the login-limit suites): each request
// carries the cookie and CSRF token a browser at that address has after opening the form.

import assert from "node:assert/strict";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { ConsoleClient } from "../support/browser.ts";
import type { RawRequest } from "../support/burst.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

export const EMAIL = "admin@example.com";
export const PASSWORD = "a long enough password";

/**
 * A server that believes X-Forwarded-For from 127.0.0.1 (so tests can be "from" other addresses),
 * with the admin EMAIL, and the hash unknown emails are checked against already made (at the first
 * of them).
 */
export async function startLoginServer(): Promise<TestServer> {
  const server = await startTestServer({ env: { TRUSTED_PROXIES: "127.0.0.1,::1" } });
  await server.core.admins.create(await server.account("default"), { email: EMAIL, password: PASSWORD });
  const warm = new ConsoleClient(server.url, { "x-forwarded-for": "192.0.2.1" });
  assert.equal((await warm.login("nobody@example.com", "whatever it is")).status, 401);
  return server;
}

export function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** n posts of the form at `path` from the address, with the cookie and CSRF token a browser has. */
export async function forms(
  base: string,
  ip: string,
  path: string,
  n: number,
  fields: (i: number) => Record<string, string>,
): Promise<RawRequest[]> {
  const client = new ConsoleClient(base, { "x-forwarded-for": ip });
  await client.get(path);
  const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  return Array.from({ length: n }, (_, i) => ({
    method: "POST",
    path,
    headers: {
      "x-forwarded-for": ip,
      cookie,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ _csrf: client.csrf, ...fields(i) }).toString(),
  }));
}

export interface Answered {
  /** The X-Forwarded-For the request came with. */
  from: string;
  status: number;
  /** performance.now() when the answer was sent. */
  at: number;
}

/**
 * Watches the server's HTTP requests from outside fastify (Node's own 'request' event): how many
 * have arrived, and each answer in the order they were sent.
 */
export function watchRequests(server: Server) {
  const answered: Answered[] = [];
  let arrived = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    arrived++;
    for (const waiter of waiters.filter((w) => arrived >= w.n)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    const from = String(request.headers["x-forwarded-for"] ?? "");
    response.once("finish", () =>
      answered.push({ from, status: response.statusCode, at: performance.now() }),
    );
  };
  server.on("request", onRequest);
  return {
    answered,
    /** Resolves once n requests (since watching began) have arrived. */
    arrivedAtLeast(n: number): Promise<void> {
      if (arrived >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    stop: () => server.off("request", onRequest),
  };
}
