// A real Wisp server on a loopback port, on a fresh database, with helpers to make keys and call it.
import { loadConfig } from "../../src/config.ts";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import type { NewKeyRequest } from "../../src/core/keys/service.ts";
import { type RunningServer, type ServerOverrides, startServer } from "../../src/server.ts";
import { createTestDatabase, type TestDatabase } from "./databases.ts";
import { OpenApiChecker } from "./openapi.ts";
import { RETENTION_OFF } from "./processes.ts";

export interface ApiResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the server answered
  body: any;
  text: string;
}

export interface CallOptions {
  key?: string;
  body?: unknown;
  /** Sent as is, instead of JSON.stringify(body). */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface TestServer extends RunningServer {
  database: TestDatabase;
  account(name: string): Promise<AccountRow>;
  key(account: AccountRow | string, request?: Partial<NewKeyRequest>): Promise<string>;
  call(method: string, path: string, options?: CallOptions): Promise<ApiResponse>;
  stop(): Promise<void>;
}

export interface TestServerOptions extends ServerOverrides {
  dialect?: "sqlite" | "postgres";
  env?: Record<string, string>;
  /** Reuse another server's database (several instances over one database). */
  database?: TestDatabase;
}

/**
 * One checker per OpenAPI document in a test process: the servers of a file mostly publish the
 * same document, and each checker compiles its validators anew (about 30 ms to make, 5 ms per
 * route checked). The same text gives the same validators.
 */
const checkers = new Map<string, OpenApiChecker>();

function checkerOf(text: string): OpenApiChecker {
  let checker = checkers.get(text);
  if (!checker) {
    checker = new OpenApiChecker(JSON.parse(text) as ConstructorParameters<typeof OpenApiChecker>[0]);
    checkers.set(text, checker);
  }
  return checker;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const database =
    options.database ?? (await createTestDatabase(options.dialect ?? "sqlite", { migrated: true }));
  const config = loadConfig({
    HOST: "127.0.0.1",
    PORT: "0",
    DATA_DIR: database.dataDir,
    DATABASE_URL: database.databaseUrl,
    LOG_LEVEL: process.env.WISP_TEST_LOG_LEVEL ?? "silent",
    // RADIUS stays off unless a test asks for ports: parallel test files would collide on 1812.
    RADIUS_AUTH_PORT: "0",
    RADIUS_ACCT_PORT: "0",
    ...RETENTION_OFF,
    ...options.env,
  });
  const server = await startServer(config, options);
  // The server's own document, fetched before the first API call a test makes rather than at every
  // start: @fastify/swagger builds it on the first request, ~0.1-0.2 s of CPU a server that many
  // suites (the console's, RADIUS's) never call.
  let checker: Promise<OpenApiChecker> | undefined;
  const documentChecker = () => {
    checker ??= fetch(`${server.url}/api/openapi.json`).then(async (res) => checkerOf(await res.text()));
    return checker;
  };
  let counter = 0;

  async function account(name: string) {
    return server.core.accounts
      .resolve(name === "default" ? undefined : name)
      .catch(() => server.core.accounts.create(name));
  }

  return {
    ...server,
    database,
    account,
    async key(owner, request = {}) {
      const row = typeof owner === "string" ? await account(owner) : owner;
      const { key } = await server.core.keys.create(row, { name: `test key ${++counter}`, ...request });
      return key;
    },
    async call(method, path, { key, body, rawBody, headers = {} } = {}) {
      const openApi = await documentChecker();
      const init: RequestInit = { method, headers: { ...headers } };
      const sent = init.headers as Record<string, string>;
      if (key !== undefined) sent.authorization ??= `Bearer ${key}`;
      if (rawBody !== undefined || body !== undefined) {
        sent["content-type"] ??= "application/json;charset=utf-8";
        init.body = rawBody ?? JSON.stringify(body);
      }
      const response = await fetch(`${server.url}${path}`, init);
      const text = await response.text();
      const isJson = (response.headers.get("content-type") ?? "").includes("application/json");
      const parsed = isJson && text ? JSON.parse(text) : text;
      if (response.status >= 400 && !isJson) {
        throw new Error(`${method} ${path} answered ${response.status} without a JSON error body: ${text}`);
      }
      if (isJson) openApi.check(method, new URL(path, server.url).pathname, response.status, parsed);
      return { status: response.status, headers: response.headers, body: parsed, text };
    },
    async stop() {
      await server.close();
      if (!options.database) await database.drop();
    },
  };
}
