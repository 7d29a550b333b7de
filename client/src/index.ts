// @wisp/client: Wisp's API with types generated from its own OpenAPI document (generated/openapi.ts)
// and calls through openapi-fetch, plus what integrators need around it: key auth, 429 retries,
// paging through whole lists, voucher batches, report files and webhook signatures.
import createClient, { type Client } from "openapi-fetch";
import { Webhook } from "standardwebhooks";
import {
  WispAuthError,
  WispError,
  type WispErrorBody,
  WispRateLimitError,
  WispVersionError,
} from "./errors.ts";
import { type components, GENERATED_FROM_WISP, type paths } from "./generated/openapi.ts";
import { type RetryOptions, retryingFetch } from "./retry.ts";

export type { WispErrorBody } from "./errors.ts";
export { WispAuthError, WispError, WispRateLimitError, WispVersionError } from "./errors.ts";
export type { components, paths } from "./generated/openapi.ts";
export { GENERATED_FROM_WISP } from "./generated/openapi.ts";
export { retryAfterMs } from "./retry.ts";

export type Schemas = components["schemas"];

export interface WispClientOptions extends RetryOptions {
  /** Where Wisp answers, e.g. https://wifi.example.org */
  baseUrl: string;
  /** An API key (wisp keys create, or the console's API keys page). Never logged nor kept in errors. */
  apiKey: string;
  fetch?: typeof fetch;
}

/** The paths whose GET answers a page ({data, page, total, limit}). */
export type ListPath = {
  [P in keyof paths]: paths[P] extends {
    get: { responses: { 200: { content: { "application/json": { data: unknown[]; total: number } } } } };
  }
    ? P
    : never;
}[keyof paths];
type ListItem<P extends ListPath> = paths[P] extends {
  get: { responses: { 200: { content: { "application/json": { data: (infer T)[] } } } } };
}
  ? T
  : never;
type ListQuery<P extends ListPath> = paths[P] extends { get: { parameters: { query?: infer Q } } }
  ? Omit<NonNullable<Q>, "page">
  : never;
type ListPathParams<P extends ListPath> = paths[P] extends { get: { parameters: { path: infer A } } }
  ? A
  : never;

/** Compares dotted versions: negative when a < b. */
function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+-]/).map(Number);
  const pb = b.split(/[.+-]/).map(Number);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

/** Turns the answers no caller can fix by changing the request into thrown errors. */
function checkingFetch(base: typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (
      response.status !== 401 &&
      response.status !== 404 &&
      response.status !== 405 &&
      response.status !== 429
    )
      return response;
    const request = new Request(input, init);
    const path = new URL(request.url).pathname;
    const body = (await response
      .clone()
      .json()
      .catch(() => undefined)) as WispErrorBody | undefined;
    const said = body?.message ?? response.statusText;
    const method = request.method;
    if (response.status === 401)
      throw new WispAuthError(
        `Wisp refused the API key (${said}): it is unknown, mistyped or revoked; create a new one`,
        401,
        method,
        path,
        body,
      );
    if (response.status === 429)
      throw new WispRateLimitError(
        `still rate limited after retrying ${method} ${path}: ${said}`,
        429,
        method,
        path,
        body,
      );
    // 404 "no route ..." (not "user 7 not found") and 405: the server does not have this route.
    if (response.status === 405 || /^no route /.test(said)) {
      const server = response.headers.get("wisp-version");
      const versions = server
        ? `the server is Wisp ${server}, this client was generated from Wisp ${GENERATED_FROM_WISP}`
        : `the server sent no Wisp-Version header (older than Wisp 0.1.0, or not Wisp); this client was generated from Wisp ${GENERATED_FROM_WISP}`;
      const older = server && compareVersions(server, GENERATED_FROM_WISP) < 0 ? " (upgrade the server)" : "";
      throw new WispVersionError(
        `the server has no ${method} ${path}: ${versions}${older}`,
        response.status,
        method,
        path,
        body,
      );
    }
    return response;
  };
}

export interface WispClient {
  /** Every operation, typed: api.GET("/api/users/{user_id}", { params: { path: { user_id: 1 } } }). */
  api: Client<paths>;
  /** Every item of a list, page after page. */
  all<P extends ListPath>(
    path: P,
    options?: { query?: ListQuery<P>; path?: ListPathParams<P>; pageSize?: number },
  ): AsyncGenerator<ListItem<P>>;
  /** Creates 1-10000 vouchers at once, all or nothing. */
  createVoucherBatch(
    body: NonNullable<paths["/api/vouchers/batch"]["post"]["requestBody"]>["content"]["application/json"],
  ): Promise<paths["/api/vouchers/batch"]["post"]["responses"][201]["content"]["application/json"]>;
  /** Asks for a report as a CSV file (format=csvfile), waits until it is built, returns its text. */
  downloadReport(
    report: "110" | "115" | "120",
    query?: { earliest?: string; latest?: string; sort?: string },
    options?: { pollMs?: number; timeoutMs?: number },
  ): Promise<{ filename: string | null; csv: string }>;
}

/** The error body of a failed call as a thrown WispError. */
function fail(method: string, path: string, response: Response, error: unknown): never {
  const body = error as WispErrorBody | undefined;
  throw new WispError(
    `${method} ${path} answered ${response.status}: ${body?.message ?? "no message"}`,
    response.status,
    method,
    path,
    body,
  );
}

export function createWispClient(options: WispClientOptions): WispClient {
  const base = options.fetch ?? globalThis.fetch;
  const api = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    fetch: checkingFetch(retryingFetch(base, options)),
    headers: { authorization: `Bearer ${options.apiKey}` },
  });

  async function* all<P extends ListPath>(
    path: P,
    {
      query,
      path: pathParams,
      pageSize = 1000,
    }: { query?: ListQuery<P>; path?: ListPathParams<P>; pageSize?: number } = {},
  ): AsyncGenerator<ListItem<P>> {
    for (let page = 1; ; page++) {
      // One loop over every list path: the page's shape is ListPath's, its items ListItem<P>.
      const get = api.GET as (
        p: string,
        init: unknown,
      ) => Promise<{
        data?: { data: ListItem<P>[]; limit: number; total: number };
        error?: unknown;
        response: Response;
      }>;
      const { data, error, response } = await get(path, {
        params: { query: { ...query, page, limit: pageSize }, path: pathParams },
      });
      if (!data) fail("GET", path, response, error);
      for (const item of data.data) yield item;
      if (data.data.length === 0 || page * data.limit >= data.total) return;
    }
  }

  return {
    api,
    all,
    async createVoucherBatch(body) {
      const { data, error, response } = await api.POST("/api/vouchers/batch", { body });
      if (!data) fail("POST", "/api/vouchers/batch", response, error);
      return data;
    },
    async downloadReport(report, query = {}, { pollMs = 250, timeoutMs = 120_000 } = {}) {
      const path = `/api/reports/${report}` as const;
      const queued = await api.GET(path, { params: { query: { ...query, format: "csvfile" } as never } });
      const task = queued.data as { task_name?: string } | undefined;
      if (queued.response.status !== 202 || !task?.task_name)
        fail("GET", path, queued.response, queued.error);
      const until = Date.now() + timeoutMs;
      for (;;) {
        const { data, response, error } = await api.GET("/api/reports/tasks", {
          params: { query: { task_name: task.task_name, format: "csvfile" } },
          parseAs: "text",
        });
        if (response.status === 200) {
          const disposition = response.headers.get("content-disposition") ?? "";
          return { filename: /filename="([^"]+)"/.exec(disposition)?.[1] ?? null, csv: data as string };
        }
        if (response.status !== 202) fail("GET", "/api/reports/tasks", response, error);
        if (Date.now() > until)
          throw new WispError(
            `report ${report} not built within ${timeoutMs} ms`,
            202,
            "GET",
            "/api/reports/tasks",
          );
        await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
    },
  };
}

/**
 * Checks a webhook Wisp sent (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature)
 * with the endpoint's whsec_ secret, on the raw body as received. Returns the parsed event; throws
 * when the signature does not match or the timestamp is more than 5 minutes away.
 */
export function verifyWebhook(
  secret: string,
  rawBody: string,
  headers: Headers | { readonly [name: string]: string | string[] | undefined } | object,
): unknown {
  const get = (name: string) => {
    const value =
      headers instanceof Headers
        ? headers.get(name)
        : (headers as Record<string, string | string[] | undefined>)[name];
    return Array.isArray(value) ? value[0] : (value ?? undefined);
  };
  const signed: Record<string, string> = {};
  for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
    const value = get(name);
    if (value === undefined) throw new Error(`the webhook lacks its ${name} header`);
    signed[name] = value;
  }
  return new Webhook(secret).verify(rawBody, signed);
}
