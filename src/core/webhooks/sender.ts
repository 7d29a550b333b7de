// Sends one webhook request: POST, 10 s for the whole exchange, redirects not followed, the first
// ~1 KB of the answer kept. Names are resolved here and the connection goes to the address that
// was checked, so a DNS answer that changes between check and connect (rebinding) cannot reach a
// refused address. What a delivery records never says which address a name resolved to (an
// operator could otherwise map the server's internal names with the test button): a refusal says
// the address is private or reserved, and network errors name the URL's host instead.
import { lookup } from "node:dns/promises";
import { createRequire } from "node:module";
import { isIP } from "node:net";
import { performance } from "node:perf_hooks";
import type { Agent, buildConnector } from "undici";
import { refusedAddress } from "./addresses.ts";
import { DELIVERY_TIMEOUT_MS, RESPONSE_EXCERPT_BYTES } from "./rules.ts";

/** fetch() for a URL: the guarded one below, or the global one. */
export type UrlFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Resolves a host name to its addresses (tests replace DNS with this). */
export type Resolver = (hostname: string) => Promise<string[]>;

export interface SenderOptions {
  /** WEBHOOK_ALLOW_PRIVATE: allow private addresses and plain http://. */
  allowPrivate: boolean;
  timeoutMs?: number;
  resolve?: Resolver;
  /** What the refusals say lifts them (the setting of the caller's area). */
  allowHint?: string;
}

export interface SendResult {
  /** The HTTP status, or null when there was none (refused, network error, timeout). */
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  excerpt: string | null;
  /** The receiver's Retry-After, in milliseconds from now. */
  retryAfterMs: number | undefined;
}

const ALLOW_HINT = "(WEBHOOK_ALLOW_PRIVATE=1 allows it)";
/** Read at most this much of a body before hanging up. */
const MAX_BODY_READ = 64 * 1024;

/**
 * undici is loaded at the first delivery: a process that sends no webhook (the CLI, a server whose
 * worker runs elsewhere) never pays its start-up time and memory.
 */
let undici: typeof import("undici") | undefined;
const loadUndici = () => {
  undici ??= createRequire(import.meta.url)("undici") as typeof import("undici");
  return undici;
};

class RefusedError extends Error {
  readonly code = "WISP_REFUSED";
}

const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Runs of characters an IP address (with a zone or :port) is written with. */
const ADDRESS_LIKE = /[0-9A-Fa-f.:]*[.:][0-9A-Fa-f.:]*(?:%[\w.-]+)?/g;

/**
 * The message with every IP address in it replaced by the URL's host: errors from the connection
 * name the address connected to, which for a name is what it resolved to. A literal address in
 * the URL is the operator's own and stays.
 */
export function withoutAddresses(message: string, host: string): string {
  const own = host.replace(/^\[|\]$/g, "");
  return message.replace(ADDRESS_LIKE, (token) => {
    const trimmed = token.replace(/[.:]+$/, ""); // the end of a sentence, not part of the address
    const address = [trimmed, trimmed.replace(/:\d+$/, "")].find((t) => isIP(t.replace(/%.*$/, "")));
    return address === undefined || address === own ? token : token.replace(address, own);
  });
}

function describe(error: unknown, timeoutMs: number, host: string): string {
  const e = error as { name?: string; code?: string; message?: string; cause?: unknown } | null;
  if (e?.code === "WISP_REFUSED") return e.message ?? "refused";
  if (
    e?.name === "TimeoutError" ||
    e?.code === "UND_ERR_HEADERS_TIMEOUT" ||
    e?.code === "UND_ERR_BODY_TIMEOUT"
  )
    return `timeout: no complete answer in ${timeoutMs} ms`;
  if (e?.code === "UND_ERR_CONNECT_TIMEOUT") return `timeout: could not connect in ${timeoutMs} ms`;
  const message = withoutAddresses(e?.message ?? String(error), host);
  return (e?.code ? `${e.code}: ${message}` : message).slice(0, 500);
}

export class WebhookSender {
  private agentMade: Agent | undefined;
  private readonly timeoutMs: number;
  private readonly resolve: Resolver;
  private readonly allowHint: string;

  constructor(private readonly options: SenderOptions) {
    this.timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    this.resolve = options.resolve ?? systemResolver;
    this.allowHint = options.allowHint ?? ALLOW_HINT;
  }

  /**
   * fetch() through the same guard: https only and a checked address (unless allowed). Identity
   * providers' discovery documents, keys, token endpoints and SAML metadata (core/idp) go out this
   * way: an operator's URL is as untrusted as a webhook's. Redirects are the caller's choice.
   */
  readonly fetch: UrlFetch = async (url, init = {}) => {
    const target = new URL(url);
    if (!this.options.allowPrivate && target.protocol !== "https:") {
      throw new RefusedError(`refused: plain http:// ${this.allowHint}`);
    }
    const { fetch } = loadUndici();
    const response = await fetch(target, {
      ...(init as Parameters<typeof fetch>[1]),
      dispatcher: this.agent,
    }).catch((error: unknown) => {
      // undici wraps the connector's refusal in a TypeError("fetch failed") with it as the cause.
      const cause = (error as { cause?: unknown })?.cause;
      throw cause instanceof RefusedError ? cause : error;
    });
    return response as unknown as Response;
  };

  /** The connection pool, made at the first delivery. */
  private get agent(): Agent {
    if (this.agentMade) return this.agentMade;
    const { Agent, buildConnector } = loadUndici();
    const base = buildConnector({ timeout: this.timeoutMs });
    const connect: buildConnector.connector = (connectOptions, callback) => {
      this.address(connectOptions.hostname).then(
        (address) => base({ ...connectOptions, hostname: address }, callback),
        (error: Error) => callback(error, null),
      );
    };
    this.agentMade = new Agent({
      connect,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      keepAliveTimeout: 10_000,
    });
    return this.agentMade;
  }

  /** The address to connect to for a host: a checked one, or a RefusedError. */
  private async address(host: string): Promise<string> {
    const hostname = host.replace(/^\[|\]$/g, "");
    const addresses = isIP(hostname) ? [hostname] : await this.resolve(hostname);
    if (addresses.length === 0) throw new Error(`${hostname} has no addresses`);
    if (this.options.allowPrivate) return addresses[0]!;
    const allowed = addresses.find((a) => refusedAddress(a) === null);
    if (allowed) return allowed;
    // The literal in the URL is named with its category; a name's addresses are not named at all.
    throw new RefusedError(
      isIP(hostname)
        ? `refused: ${refusedAddress(hostname)} ${this.allowHint}`
        : `refused: ${hostname} resolves to a private or reserved address ${this.allowHint}`,
    );
  }

  /**
   * `request` changes the method and body type for other callers with the same guards (the guest
   * SMS gateways, core/guests/sms.ts); webhooks POST JSON.
   */
  async send(
    url: string,
    headers: Record<string, string>,
    body: string,
    request: { method?: "POST" | "PUT"; contentType?: string; userAgent?: string } = {},
  ): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const failed = (error: string): SendResult => ({
      statusCode: null,
      error,
      durationMs: elapsed(),
      excerpt: null,
      retryAfterMs: undefined,
    });
    if (!this.options.allowPrivate && new URL(url).protocol !== "https:") {
      return failed(`refused: plain http:// ${this.allowHint}`);
    }
    try {
      const response = await loadUndici().request(url, {
        method: request.method ?? "POST",
        headers: {
          ...headers,
          "content-type": request.contentType ?? "application/json",
          "user-agent": request.userAgent ?? "Wisp-Webhooks/1",
        },
        body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const kept: Buffer[] = [];
      let keptBytes = 0;
      let read = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        if (keptBytes < RESPONSE_EXCERPT_BYTES) {
          const part = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - keptBytes);
          kept.push(part);
          keptBytes += part.length;
        }
        read += chunk.length;
        if (read >= MAX_BODY_READ) break;
      }
      return {
        statusCode: response.statusCode,
        error: null,
        durationMs: elapsed(),
        excerpt: new TextDecoder().decode(Buffer.concat(kept)),
        retryAfterMs: parseRetryAfter(response.headers["retry-after"]),
      };
    } catch (error) {
      return failed(describe(error, this.timeoutMs, new URL(url).hostname));
    }
  }

  async close(): Promise<void> {
    await this.agentMade?.close();
  }
}
