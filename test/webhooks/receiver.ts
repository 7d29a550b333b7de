// A webhook receiver for tests: a node:http server on loopback that records every request and
// answers as the test says. It can go down and come back on the same port.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever was sent
  json: any;
  headers: http.IncomingHttpHeaders;
  /** Epoch ms when the request arrived. */
  at: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering. */
  delayMs?: number;
}

export type Responder = (request: Received) => Answer;

export class Receiver {
  readonly received: Received[] = [];
  respond: Responder = () => ({ status: 200, body: "ok" });
  /** Requests being answered now, and the most there ever were at once, per path. */
  readonly inFlight = new Map<string, number>();
  readonly maxInFlight = new Map<string, number>();
  private server: http.Server;
  private waiters = new Set<() => void>();
  port = 0;

  private constructor() {
    this.server = this.create();
  }

  static async start(): Promise<Receiver> {
    const receiver = new Receiver();
    await receiver.listen(0);
    return receiver;
  }

  private create(): http.Server {
    return http.createServer((req, res) => {
      const path = req.url ?? "";
      const now = (this.inFlight.get(path) ?? 0) + 1;
      this.inFlight.set(path, now);
      this.maxInFlight.set(path, Math.max(this.maxInFlight.get(path) ?? 0, now));
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        const request: Received = {
          path,
          id: String(req.headers["webhook-id"] ?? ""),
          timestamp: String(req.headers["webhook-timestamp"] ?? ""),
          signature: String(req.headers["webhook-signature"] ?? ""),
          body,
          json,
          headers: req.headers,
          at: Date.now(),
        };
        const answer = this.respond(request);
        this.received.push(request);
        const finish = () => {
          this.inFlight.set(path, (this.inFlight.get(path) ?? 1) - 1);
          res.writeHead(answer.status, answer.headers);
          res.end(answer.body ?? "");
          for (const wake of this.waiters) wake();
        };
        if (answer.delayMs) setTimeout(finish, answer.delayMs);
        else finish();
      });
    });
  }

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, "127.0.0.1", () => {
        this.port = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  url(path = "/hook", host = "127.0.0.1", scheme = "http"): string {
    return `${scheme}://${host}:${this.port}${path}`;
  }

  /** Requests to one path (each endpoint of a test gets a path of its own). */
  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Resolves when the condition holds (checked after every request), rejects after timeoutMs. */
  waitFor(condition: () => boolean, timeoutMs = 10_000, what = "condition"): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`${what} not met in ${timeoutMs} ms; received ${this.received.length} requests`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** Stops listening (connections are refused) but keeps the port for up(). */
  async down(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  async up(): Promise<void> {
    this.server = this.create();
    await this.listen(this.port);
  }

  async close(): Promise<void> {
    if (this.server.listening) await this.down();
  }
}
