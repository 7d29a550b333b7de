// Talking to one directory's servers with ldapts: in failover order, each behind a circuit breaker,
// with a few connections bound as the service that searches share, a pool of connections for users'
// binds (password checks, one at a time on each), bounded connect and operation timeouts. A server
// that does not answer, or answers with a broken connection, counts as a failure; an LDAP result
// (even invalidCredentials) is an answer. Referrals are never chased: ldapts returns continuation
// references (RFC 4511 section 4.5.3) as text, which are ignored, and a referral result (code 10)
// is an error.
import { isIP } from "node:net";
import type { ConnectionOptions } from "node:tls";
import type { Client, Entry } from "ldapts";

export interface ServerSettings {
  startTls: boolean;
  /** PEM certificates to trust instead of the system's; empty: the system's. */
  caPem: string;
  connectTimeoutMs: number;
  timeoutMs: number;
  poolSize: number;
  breakerFailures: number;
  breakerCooldownMs: number;
}

/** The service's bind: DN and password (an empty DN searches anonymously). */
export type DirectoryBind = { dn: string; password: string };

/** Every server of a directory failed, is open in its breaker, or was busy past the timeout. */
export class DirectoryUnavailable extends Error {
  constructor(
    message: string,
    /** A few words for the auth log (radpostauth.reason is short): the full story is in message. */
    readonly summary = "no answer",
  ) {
    super(message);
  }
}

export type BreakerState = "closed" | "open" | "half-open";

/**
 * A circuit breaker: open after `threshold` failures in a row, no traffic until `cooldownMs` has
 * passed, then one probe (half-open): its success closes it, its failure opens it again.
 */
export class Breaker {
  private failures = 0;
  private openUntil = 0;
  private probing = false;
  lastError = "";
  /** Counts the calls that changed what status() shows (a failure, the first success after one). */
  changes = 0;

  constructor(
    private readonly threshold: number,
    private readonly cooldownMs: number,
  ) {}

  state(now = Date.now()): BreakerState {
    if (this.failures < this.threshold) return "closed";
    return now < this.openUntil || this.probing ? "open" : "half-open";
  }

  /** Whether a request may go to the server now (takes the half-open probe's turn). */
  allow(now = Date.now()): boolean {
    const state = this.state(now);
    if (state === "closed") return true;
    if (state === "open") return false;
    this.probing = true;
    return true;
  }

  success(): void {
    if (this.failures > 0 || this.lastError !== "") this.changes++;
    this.failures = 0;
    this.probing = false;
    this.lastError = "";
  }

  failure(error: string, now = Date.now()): void {
    this.changes++;
    this.probing = false;
    this.failures++;
    this.lastError = error;
    if (this.failures >= this.threshold) this.openUntil = now + this.cooldownMs;
  }

  /** When an open breaker lets a probe through (epoch ms); 0 while it is closed. */
  get reopensAt(): number {
    return this.failures >= this.threshold ? this.openUntil : 0;
  }
}

/**
 * A server's status as told at some time (with its breaker's reopensAt then), as it stands `now`:
 * an open breaker half-opens once its cooldown has passed, as Breaker.state() says, though no call
 * has changed anything since.
 */
export function statusAt(told: ServerStatus, reopensAt: number, now: number): ServerStatus {
  return told.state === "open" && now >= reopensAt ? { ...told, state: "half-open" } : told;
}

/** Connections to one server for users' binds, at most `size` open; a waiter gives up after `waitMs`. */
class Pool {
  private readonly idle: Client[] = [];
  private open = 0;
  private readonly waiters: ((client: Client | null) => void)[] = [];

  constructor(
    private readonly size: number,
    private readonly waitMs: number,
    private readonly connect: () => Promise<Client>,
  ) {}

  async acquire(): Promise<Client> {
    while (this.idle.length > 0) {
      const client = this.idle.pop()!;
      if (client.isConnected) return client;
      this.open--; // dropped by the server while idle: its bind is gone too
    }
    if (this.open < this.size) {
      this.open++;
      try {
        return await this.connect();
      } catch (error) {
        this.open--;
        throw error;
      }
    }
    const client = await new Promise<Client | null>((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(give), 1);
        resolve(null);
      }, this.waitMs);
      const give = (c: Client | null) => {
        clearTimeout(timer);
        resolve(c);
      };
      this.waiters.push(give);
    });
    if (!client) throw new DirectoryUnavailable("every connection stayed busy", "busy");
    return client;
  }

  release(client: Client, healthy: boolean): void {
    if (!healthy || !client.isConnected) {
      this.open--;
      void client.unbind().catch(() => {});
      // A waiter gets a fresh connection of its own instead.
      const waiter = this.waiters.shift();
      if (waiter) this.acquireFor(waiter);
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter(client);
    else this.idle.push(client);
  }

  private acquireFor(waiter: (client: Client | null) => void): void {
    this.open++;
    this.connect().then(waiter, () => {
      this.open--;
      waiter(null);
    });
  }

  async close(): Promise<void> {
    const all = this.idle.splice(0);
    this.open -= all.length;
    await Promise.all(all.map((c) => c.unbind().catch(() => {})));
  }
}

/** Operations outstanding on one shared connection before another connection is opened. */
const PER_CONNECTION = 64;

interface Shared {
  client: Client;
  inFlight: number;
  /** An operation on it failed without an LDAP answer: no new ones; closed once the last ends. */
  broken: boolean;
}

/**
 * Connections bound as the service, shared by searches: a search needs no connection of its own
 * (RFC 4511 section 4.1.1: several operations may be outstanding on one connection, told apart by
 * messageID). Each connection's writes are corked until the end of the event-loop turn, so the
 * searches of a burst of logins leave in one write instead of one each: a write to a loopback TCP
 * socket cost about 40 µs of kernel time here (bench/ldap.ts), and slapd reads them all at once.
 * Another connection opens only when every open one has PER_CONNECTION operations outstanding, up to
 * `size`; past that the least busy one takes more (each operation's own timeout still bounds it).
 */
class SharedPool {
  private readonly shared: Shared[] = [];
  private opening: Promise<Shared> | undefined;

  constructor(
    private readonly size: number,
    private readonly connect: () => Promise<Client>,
  ) {}

  async acquire(): Promise<Client> {
    for (;;) {
      let best: Shared | undefined;
      for (let i = this.shared.length - 1; i >= 0; i--) {
        const held = this.shared[i]!;
        // Dropped by the server: ldapts would reconnect on its own without the service's bind.
        if (!held.client.isConnected) held.broken = true;
        if (held.broken) {
          if (held.inFlight === 0) this.drop(i);
          continue;
        }
        if (!best || held.inFlight < best.inFlight) best = held;
      }
      const full = this.shared.length >= this.size;
      if (best && (best.inFlight < PER_CONNECTION || full || this.opening)) return this.take(best);
      if (this.opening) {
        await this.opening.catch(() => {});
        continue;
      }
      this.opening = this.connect().then((client) => {
        const held = { client, inFlight: 0, broken: false };
        this.shared.push(held);
        return held;
      });
      try {
        return this.take(await this.opening);
      } finally {
        this.opening = undefined;
      }
    }
  }

  private take(held: Shared): Client {
    held.inFlight++;
    corkForTurn(held.client);
    return held.client;
  }

  release(client: Client, healthy: boolean): void {
    const index = this.shared.findIndex((h) => h.client === client);
    const held = this.shared[index];
    if (!held) return;
    held.inFlight--;
    if (!healthy || !client.isConnected) held.broken = true;
    if (held.broken && held.inFlight === 0) this.drop(index);
  }

  private drop(index: number): void {
    const [held] = this.shared.splice(index, 1);
    void held?.client.unbind().catch(() => {});
  }

  async close(): Promise<void> {
    const all = this.shared.splice(0);
    await Promise.all(all.map((h) => h.client.unbind().catch(() => {})));
  }
}

const corked = new WeakSet<object>();

/** Holds a connection's writes until the end of this event-loop turn, then sends them together. */
function corkForTurn(client: Client): void {
  // ldapts keeps its socket private (8.0.x); without one there is nothing to cork.
  const socket = (client as unknown as { socket?: import("node:net").Socket }).socket;
  if (!socket || corked.has(socket) || socket.destroyed) return;
  corked.add(socket);
  socket.cork();
  setImmediate(() => {
    corked.delete(socket);
    socket.uncork();
  });
}

export interface ServerStatus {
  url: string;
  state: BreakerState;
  last_error: string;
}

/**
 * ldapts, loaded with the first connection (or the first filter checked, rules.ts): a server with no
 * directory never holds it (idle memory, issue 32 point 4).
 */
let ldapts: typeof import("ldapts") | undefined;

/** An LDAP result code from the server: it answered (wrong password, no such object...). */
export const isLdapAnswer = (error: unknown) =>
  ldapts !== undefined && error instanceof ldapts.ResultCodeError;

class Server {
  readonly breaker: Breaker;
  readonly service: SharedPool;
  readonly auth: Pool;

  constructor(
    readonly url: string,
    private readonly settings: ServerSettings,
    bind: DirectoryBind,
  ) {
    this.breaker = new Breaker(settings.breakerFailures, settings.breakerCooldownMs);
    this.service = new SharedPool(settings.poolSize, async () => {
      const client = await this.connect();
      // An empty bind DN: the service searches anonymously (a directory that allows it).
      if (bind.dn !== "") await this.guard(client, () => client.bind(bind.dn, bind.password));
      return client;
    });
    this.auth = new Pool(settings.poolSize, settings.timeoutMs, () => this.connect());
  }

  private tlsOptions(): ConnectionOptions {
    const host = new URL(this.url).hostname.replace(/^\[|\]$/g, "");
    const options: ConnectionOptions = { minVersion: "TLSv1.2", host };
    // RFC 6066 section 3: SNI carries DNS names only.
    if (isIP(host) === 0) options.servername = host;
    if (this.settings.caPem.trim() !== "") options.ca = this.settings.caPem;
    return options;
  }

  private async guard<T>(client: Client, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      void client.unbind().catch(() => {});
      throw error;
    }
  }

  private async connect(): Promise<Client> {
    // ldapts speaks TLS from the start whenever tlsOptions is given: only for ldaps://.
    const ldaps = this.url.startsWith("ldaps:");
    ldapts ??= await import("ldapts");
    const client = new ldapts.Client({
      url: this.url,
      timeout: this.settings.timeoutMs,
      connectTimeout: this.settings.connectTimeoutMs,
      ...(ldaps ? { tlsOptions: this.tlsOptions() } : {}),
      strictDN: false,
    });
    // StartTLS (RFC 4511 section 4.14) before any bind, so no password crosses in clear.
    if (this.settings.startTls && !ldaps) {
      await this.guard(client, () => client.startTLS(this.tlsOptions()));
    }
    return client;
  }

  status(): ServerStatus {
    return { url: this.url, state: this.breaker.state(), last_error: this.breaker.lastError };
  }
}

export interface SearchSpec {
  base: string;
  scope: "sub" | "one" | "base";
  filter: string;
  attributes: string[];
  sizeLimit?: number;
  /** Attributes returned as octets. */
  binary?: string[];
}

/**
 * What the directories' code asks of one directory's servers: a DirectoryClient in this thread, or
 * one on the directory worker thread (./worker-client.ts) that forwards to a DirectoryClient there.
 */
export interface DirectoryConnection {
  search(spec: SearchSpec): Promise<{ entries: Entry[]; references: number }>;
  pages(spec: SearchSpec, pageSize: number): AsyncGenerator<Entry[]>;
  checkPassword(dn: string, password: string): Promise<boolean>;
  status(): ServerStatus[];
  close(): Promise<void>;
}

/** Makes the connection of one directory (its servers in failover order). */
export type ConnectDirectory = (
  urls: readonly string[],
  settings: ServerSettings,
  bind: DirectoryBind,
) => DirectoryConnection;

export class DirectoryClient implements DirectoryConnection {
  private readonly servers: Server[];

  constructor(urls: readonly string[], settings: ServerSettings, bind: DirectoryBind) {
    this.servers = urls.map((url) => new Server(url, settings, bind));
  }

  /**
   * Runs `op` on the first server whose breaker lets it through, with a connection of `purpose`'s
   * pool; on a failure (no answer, timeout, TLS) the next server. An LDAP result is an answer.
   */
  private async run<T>(purpose: "service" | "auth", op: (client: Client) => Promise<T>): Promise<T> {
    const reasons: string[] = [];
    for (const server of this.servers) {
      if (!server.breaker.allow()) {
        reasons.push(`${server.url}: circuit open (${server.breaker.lastError || "failing"})`);
        continue;
      }
      const pool = purpose === "service" ? server.service : server.auth;
      let client: Client | undefined;
      try {
        client = await pool.acquire();
        const result = await op(client);
        pool.release(client, true);
        server.breaker.success();
        return result;
      } catch (error) {
        if (isLdapAnswer(error)) {
          if (client) pool.release(client, true);
          server.breaker.success();
          throw error;
        }
        if (client) pool.release(client, false);
        const message = (error as Error)?.message || String(error);
        if (!(error instanceof DirectoryUnavailable)) server.breaker.failure(message);
        reasons.push(`${server.url}: ${message}`);
      }
    }
    const skipped = this.servers.every((s) => s.breaker.state() === "open");
    throw new DirectoryUnavailable(
      `directory unavailable: ${reasons.join("; ")}`,
      skipped ? "circuit open" : "no answer",
    );
  }

  async search(spec: SearchSpec): Promise<{ entries: Entry[]; references: number }> {
    return this.run("service", async (client) => {
      const result = await client.search(spec.base, {
        scope: spec.scope,
        filter: spec.filter,
        attributes: spec.attributes,
        sizeLimit: spec.sizeLimit ?? 0,
        ...(spec.binary ? { explicitBufferAttributes: spec.binary } : {}),
      });
      return { entries: result.searchEntries, references: result.searchReferences.length };
    });
  }

  /**
   * Pages of a search (RFC 2696 simple paged results), one at a time: the caller handles a page
   * before the next is read, so memory holds one page. One connection for the whole search (the
   * paging cookie belongs to it); no failover once it has started.
   */
  async *pages(spec: SearchSpec, pageSize: number): AsyncGenerator<Entry[]> {
    const server = this.servers.find((s) => s.breaker.allow());
    if (!server)
      throw new DirectoryUnavailable("directory unavailable: every server's circuit is open", "circuit open");
    let client: Client;
    try {
      client = await server.service.acquire();
    } catch (error) {
      if (!(error instanceof DirectoryUnavailable)) server.breaker.failure((error as Error).message);
      throw new DirectoryUnavailable(`directory unavailable: ${server.url}: ${(error as Error).message}`);
    }
    let healthy = false;
    try {
      const pages = client.searchPaginated(spec.base, {
        scope: spec.scope,
        filter: spec.filter,
        attributes: spec.attributes,
        paged: { pageSize },
      });
      for await (const page of pages) yield page.searchEntries;
      healthy = true;
      server.breaker.success();
    } catch (error) {
      if (isLdapAnswer(error)) healthy = true;
      else server.breaker.failure((error as Error).message);
      throw error;
    } finally {
      server.service.release(client, healthy);
    }
  }

  /**
   * Whether `dn` binds with `password` (a simple bind, RFC 4513 section 5.1.3). Never called with an
   * empty password: that is an unauthenticated bind (section 5.1.2), which servers accept as
   * anonymous and which proves nothing.
   */
  async checkPassword(dn: string, password: string): Promise<boolean> {
    if (password === "" || dn === "") return false;
    try {
      await this.run("auth", (client) => client.bind(dn, password));
      return true;
    } catch (error) {
      if (isLdapAnswer(error)) return false;
      throw error;
    }
  }

  status(): ServerStatus[] {
    return this.servers.map((s) => s.status());
  }

  /** Each server's breaker's Breaker.reopensAt, in the order of status(). */
  reopenTimes(): number[] {
    return this.servers.map((s) => s.breaker.reopensAt);
  }

  /**
   * Grows whenever a breaker's failures or last error changed; a state that only moved with the
   * clock (open to half-open) does not count.
   */
  statusVersion(): number {
    let version = 0;
    for (const server of this.servers) version += server.breaker.changes;
    return version;
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.flatMap((s) => [s.service.close(), s.auth.close()]));
  }
}
