// The delivery engine behind the worker's two webhook jobs:
// - dispatch: fans new events out to one delivery per subscribed, enabled endpoint of the event's
//   account, with a deliver job per endpoint, in the transaction that moves the account's cursor
//   (outbox.ts);
// - deliver: sends an endpoint's due deliveries. One endpoint has at most one request in flight:
//   a job takes the endpoint's lease and sends its due deliveries one by one in outbox order, so
//   first attempts arrive in event order, and then drives the endpoint's retries (runEndpoint).
import { randomBytes } from "node:crypto";
import { isoNow } from "../shared/time.ts";
import type { SecretBox } from "./crypto.ts";
import type { OutboxRepo } from "./outbox.ts";
import {
  type AttemptOutcome,
  type DeliveryRow,
  type EndpointRow,
  type EventRow,
  type NewDeliveryRow,
  WebhooksRepo,
} from "./repo.ts";
import { retryDelay, subscribes } from "./rules.ts";
import type { SendResult, WebhookSender } from "./sender.ts";
import { signedHeaders } from "./signing.ts";

export const DISPATCH_JOB = "webhook.dispatch";
export const DELIVER_JOB = "webhook.deliver";

/** Events fanned out per dispatch transaction. */
export const DISPATCH_BATCH = 1000;
/** The endpoint lease covers one request (10 s at most) with room to spare; renewed per request. */
const ENDPOINT_LEASE_MS = 30_000;
/** A driver that finds the lease still held by its dead predecessor looks again after at least this. */
const BUSY_RETRY_MS = 1_000;
/** One lease holder sends at most this much before letting go (other jobs keep the order). */
const DRAIN_MAX_SENDS = 1000;
const DRAIN_MAX_MS = 20_000;
const DUE_BATCH = 50;

/** Adds jobs inside a transaction (the job queue's enqueue). */
export type Enqueue = (
  db: WebhooksRepo["db"],
  jobs: { kind: string; accountId: number | null; payload: unknown }[],
) => Promise<unknown>;

/** How many a drain sent, and why it stopped: nothing due, its budget spent, or its lease lost. */
interface Drained {
  sent: number;
  end: "empty" | "budget" | "lost";
}

export interface DispatchResult {
  events: number;
  deliveries: number;
}

export interface RunResult {
  /** What the job did, for the job's record. */
  result: string;
  /** Run the job again at this time (epoch ms). */
  retryAt?: number;
}

export function newMessageId(): string {
  return `msg_${randomBytes(16).toString("base64url")}`;
}

/** The request body: {event, timestamp, data}, with data as stored (already JSON). */
export function payloadOf(event: Pick<EventRow, "kind" | "created" | "data">): string {
  const kind = JSON.stringify(event.kind);
  return `{"event":${kind},"timestamp":${JSON.stringify(event.created)},"data":${event.data}}`;
}

export function sealContext(accountId: number, endpointId: number): string {
  return `webhook:${accountId}:${endpointId}`;
}

/** What one delivery attempt came to: delivered, queued again, given up, or the endpoint said 410 Gone. */
export type AttemptResult = "succeeded" | "retrying" | "failed" | "gone";

export class WebhookEngine {
  private readonly secrets = new Map<string, string>();
  /** Told of every attempt's result (metrics). */
  onAttempt: ((result: AttemptResult) => void) | undefined;

  constructor(
    private readonly repo: WebhooksRepo,
    private readonly outbox: OutboxRepo,
    private readonly enqueue: Enqueue,
    private readonly box: SecretBox,
    private readonly sender: WebhookSender,
    private readonly schedule: readonly number[],
  ) {}

  /** One dispatch transaction: up to DISPATCH_BATCH events fanned out. */
  dispatchOnce(limit = DISPATCH_BATCH): Promise<DispatchResult> {
    return this.outbox.transaction(async (outbox) => {
      const accounts = await outbox.lockCursors(1000);
      const events = await outbox.newEvents(accounts, limit);
      if (events.length === 0) return { events: 0, deliveries: 0 };
      const endpoints = await outbox.enabledEndpoints([...new Set(events.map((e) => e.account_id))]);
      const subscribed = endpoints.map((e) => ({ ...e, kinds: JSON.parse(e.event_kinds) as string[] }));
      const now = Date.now();
      const created = isoNow();
      const rows: NewDeliveryRow[] = [];
      const last = new Map<number, { txid: number; id: number }>();
      for (const event of events) {
        last.set(event.account_id, { txid: event.txid, id: event.id });
        for (const endpoint of subscribed) {
          if (endpoint.account_id !== event.account_id || !subscribes(endpoint.kinds, event.kind)) continue;
          rows.push(this.newDelivery(event.account_id, endpoint.id, event.id, now, created));
        }
      }
      await this.createWithJobs(new WebhooksRepo(outbox.db, outbox.dialect), rows);
      for (const [accountId, at] of last) await outbox.advance(accountId, at.txid, at.id);
      return { events: events.length, deliveries: rows.length };
    });
  }

  newDelivery(accountId: number, endpointId: number, eventId: number, now: number, created: string) {
    return {
      account_id: accountId,
      endpoint_id: endpointId,
      event_id: eventId,
      message_id: newMessageId(),
      status: "pending",
      tries: 0,
      attempts: 0,
      next_at: now,
      last_status: null,
      last_error: null,
      created,
      updated: created,
    } satisfies NewDeliveryRow;
  }

  /** Inserts deliveries and one deliver job per endpoint among them, with the repository's connection. */
  async createWithJobs(repo: WebhooksRepo, rows: readonly NewDeliveryRow[]): Promise<number[]> {
    const created = await repo.insertDeliveries(rows);
    const endpoints = new Map(rows.map((r) => [r.endpoint_id, r.account_id]));
    const jobs = [...endpoints].map(([endpoint, accountId]) => ({
      kind: DELIVER_JOB,
      accountId,
      payload: { endpoint },
    }));
    for (let i = 0; i < jobs.length; i += 500) await this.enqueue(repo.db, jobs.slice(i, i + 500));
    return created.map((d) => d.id);
  }

  /**
   * Runs one deliver job: makes sure the endpoint's due deliveries are sent. The job that takes
   * the endpoint's lease sends every due delivery in order and becomes the endpoint's driver: it
   * comes back when the next pending delivery is due (a retry), until none is pending. A job that
   * finds the lease taken, or nothing due, leaves the endpoint to the holder or driver and ends.
   * `token` names the lease holder (worker and job).
   */
  async runEndpoint(accountId: number, endpointId: number, jobId: number, token: string): Promise<RunResult> {
    const endpoint = await this.repo.endpoint(accountId, endpointId);
    if (!endpoint) return { result: "endpoint deleted" };
    const driving = endpoint.driver_job === jobId;
    if (!driving && !(await this.repo.hasDue(accountId, endpointId, Date.now()))) {
      return { result: "nothing due" };
    }
    // A driver finds the lease taken only when it was reclaimed from a worker that died.
    const held = endpoint.lock_until !== null && Number(endpoint.lock_until) > Date.now();
    if (held && !driving) return { result: "left to the lease holder" };
    const lock = { token, jobId, leaseMs: ENDPOINT_LEASE_MS };
    const taken = await this.repo.lockEndpoint(accountId, endpointId, lock);
    if (!taken.acquired) {
      if (!driving) return { result: "left to the lease holder" };
      return { result: "busy", retryAt: Math.max(taken.until ?? 0, Date.now() + BUSY_RETRY_MS) };
    }
    let sent = 0;
    for (;;) {
      let drained: Drained;
      try {
        drained = await this.drain(accountId, endpointId, token);
      } finally {
        await this.repo.unlock(accountId, endpointId, token);
      }
      sent += drained.sent;
      if (drained.end === "budget") return { result: `sent ${sent}, more due`, retryAt: Date.now() };
      // A job that found the lease taken just before it was let go left its deliveries to this
      // one: look again, and carry on if one is due and the lease is still free.
      if (drained.end === "lost" || !(await this.repo.hasDue(accountId, endpointId, Date.now()))) break;
      if (!(await this.repo.lockEndpoint(accountId, endpointId, lock)).acquired) break;
    }
    // Another job took the lease meanwhile: it drives the endpoint now.
    const current = await this.repo.endpoint(accountId, endpointId);
    if (current?.driver_job !== jobId) return { result: `sent ${sent}; another job drives` };
    const soonest = await this.repo.soonestPending(accountId, endpointId);
    if (soonest === undefined) return { result: `sent ${sent}; none pending` };
    return { result: `sent ${sent}; driving retries`, retryAt: Math.max(soonest, Date.now()) };
  }

  /** Sends the endpoint's due deliveries in order while the lease holds, within a budget. */
  private async drain(accountId: number, endpointId: number, token: string): Promise<Drained> {
    const started = Date.now();
    let sent = 0;
    for (;;) {
      const endpoint = await this.repo.endpoint(accountId, endpointId);
      if (!endpoint) return { sent, end: "empty" };
      const due = await this.repo.dueDeliveries(accountId, endpointId, Date.now(), DUE_BATCH);
      if (due.length === 0) return { sent, end: "empty" };
      if (!endpoint.enabled) {
        await this.repo.failPending(
          accountId,
          due.map((d) => d.id),
          "endpoint disabled",
          isoNow(),
        );
        continue;
      }
      for (const delivery of due) {
        const { disabled, locked } = await this.attempt(endpoint, delivery, token);
        sent++;
        if (!locked) return { sent, end: "lost" };
        if (sent >= DRAIN_MAX_SENDS || Date.now() - started > DRAIN_MAX_MS) return { sent, end: "budget" };
        if (disabled) break;
      }
    }
  }

  private secretOf(endpoint: EndpointRow): string {
    let secret = this.secrets.get(endpoint.secret);
    if (secret === undefined) {
      secret = this.box.open(endpoint.secret, sealContext(endpoint.account_id, endpoint.id));
      if (this.secrets.size >= 1000) this.secrets.clear();
      this.secrets.set(endpoint.secret, secret);
    }
    return secret;
  }

  /** One attempt, logged with its outcome; says whether it disabled the endpoint (HTTP 410). */
  private async attempt(endpoint: EndpointRow, delivery: DeliveryRow, token: string) {
    const started = new Date();
    const event = await this.repo.event(delivery.account_id, delivery.event_id);
    const result = await this.send(endpoint, delivery, event);
    const outcome = this.outcomeOf(delivery, result, !event);
    const { locked } = await this.repo.recordAttempt(
      delivery,
      {
        account_id: delivery.account_id,
        delivery_id: delivery.id,
        attempt: delivery.attempts + 1,
        started: started.toISOString(),
        status_code: result.statusCode,
        error: result.error?.slice(0, 500) ?? null,
        duration_ms: result.durationMs,
        response: result.excerpt,
      },
      outcome,
      { token, leaseMs: ENDPOINT_LEASE_MS },
      isoNow(),
    );
    const disabled = outcome.disableReason !== undefined;
    const status = outcome.delivery.status;
    this.onAttempt?.(
      disabled ? "gone" : status === "succeeded" ? "succeeded" : status === "pending" ? "retrying" : "failed",
    );
    return { disabled, locked };
  }

  private async send(endpoint: EndpointRow, delivery: DeliveryRow, event: EventRow | undefined) {
    const failure = (error: string): SendResult => ({
      statusCode: null,
      error,
      durationMs: 0,
      excerpt: null,
      retryAfterMs: undefined,
    });
    if (!event) return failure("the event no longer exists");
    let secret: string;
    try {
      secret = this.secretOf(endpoint);
    } catch (error) {
      return failure(`cannot sign: ${(error as Error).message}`);
    }
    const body = payloadOf(event);
    const headers = signedHeaders(secret, delivery.message_id, Math.floor(Date.now() / 1000), body);
    return this.sender.send(endpoint.url, { ...headers }, body);
  }

  private outcomeOf(delivery: DeliveryRow, result: SendResult, final: boolean): AttemptOutcome {
    const tries = delivery.tries + 1;
    const base = {
      tries,
      attempts: delivery.attempts + 1,
      next_at: delivery.next_at,
      last_status: result.statusCode,
      last_error: result.error?.slice(0, 500) ?? null,
    };
    const code = result.statusCode;
    if (code !== null && code >= 200 && code < 300) return { delivery: { ...base, status: "succeeded" } };
    if (code === 410) {
      return {
        delivery: { ...base, status: "failed" },
        disableReason: `the receiver answered 410 Gone at ${isoNow()}`,
      };
    }
    const delay = final ? null : retryDelay(this.schedule, tries, result.retryAfterMs);
    if (delay === null) return { delivery: { ...base, status: "failed" } };
    return { delivery: { ...base, status: "pending", next_at: Date.now() + delay } };
  }
}
