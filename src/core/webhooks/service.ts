// Webhooks: endpoints an account's events are pushed to, signed per Standard Webhooks. The secret
// leaves this service only on creation and rotation. Rules for the CLI now and the console later.
import { isIP } from "node:net";
import type { Database } from "../../db/database.ts";
import { JobQueue, olderJobQueued, recurringJobQueued } from "../jobs/queue.ts";
import { NotFoundError, ValidationError } from "../shared/errors.ts";
import { isoNow } from "../shared/time.ts";
import { refusedAddress } from "./addresses.ts";
import { generateSecret, SecretBox } from "./crypto.ts";
import { DELIVER_JOB, DISPATCH_JOB, type Enqueue, sealContext, WebhookEngine } from "./delivery.ts";
import { OutboxRepo } from "./outbox.ts";
import type { AttemptRow, DeliveryListRow, DeliveryRow, EndpointListRow, EndpointRow } from "./repo.ts";
import { WebhooksRepo } from "./repo.ts";
import { ALL_KINDS, checkUrl, DEFAULT_RETRY_SCHEDULE_MS, parseKinds, TEST_EVENT } from "./rules.ts";
import { WebhookSender } from "./sender.ts";

export interface Webhook {
  id: number;
  url: string;
  /** "all", or the subscribed kinds. */
  events: "all" | string[];
  enabled: boolean;
  /** Why Wisp disabled it (a 410 from the receiver); null when enabled or disabled by a person. */
  disabled_reason: string | null;
  created: string;
  updated: string;
}

export interface WebhookListing extends Webhook {
  account_id: number;
  account: string;
}

export interface WebhookWithSecret {
  webhook: Webhook;
  /** whsec_...: shown now only. */
  secret: string;
}

export interface WebhookInput {
  url?: string | undefined;
  /** "all", or kinds as a list or a comma-separated string. */
  events?: string | readonly string[] | undefined;
  enabled?: boolean | undefined;
}

export interface Attempt {
  attempt: number;
  time: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** The first ~1 KB of the response body. */
  response: string | null;
}

export interface Delivery {
  id: number;
  webhook_endpoint_id: number;
  event_id: number;
  event: string;
  /** The webhook-id header, the same on every attempt. */
  message_id: string;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  /** When the next attempt is due (pending deliveries). */
  next_attempt: string | null;
  last_status: number | null;
  last_error: string | null;
  created: string;
  updated: string;
  attempt_log: Attempt[];
}

export interface WebhookSettings {
  publicUrl?: string;
  dataDir?: string | undefined;
  webhookSecretKey?: string | undefined;
  webhookAllowPrivate?: boolean;
  webhookRetrySchedule?: readonly number[];
}

function present(row: EndpointRow): Webhook {
  const kinds = JSON.parse(row.event_kinds) as string[];
  return {
    id: row.id,
    url: row.url,
    events: kinds.includes(ALL_KINDS) ? "all" : kinds,
    enabled: row.enabled !== 0,
    disabled_reason: row.disabled_reason,
    created: row.created,
    updated: row.updated,
  };
}

function listing(row: EndpointListRow): WebhookListing {
  return { ...present(row), account_id: row.account_id, account: row.account_name };
}

function presentDelivery(
  row: DeliveryRow & { kind?: string },
  attempts: AttemptRow[],
  kind?: string,
): Delivery {
  return {
    id: row.id,
    webhook_endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event: row.kind ?? kind ?? "",
    message_id: row.message_id,
    status: row.status as Delivery["status"],
    attempts: row.attempts,
    next_attempt: row.status === "pending" ? new Date(row.next_at).toISOString() : null,
    last_status: row.last_status,
    last_error: row.last_error,
    created: row.created,
    updated: row.updated,
    attempt_log: attempts.map((a) => ({
      attempt: a.attempt,
      time: a.started,
      status_code: a.status_code,
      error: a.error,
      duration_ms: a.duration_ms,
      response: a.response,
    })),
  };
}

/** Checks every given field; returns the stored forms. */
function check(input: WebhookInput): { url?: string; kinds?: string[] } {
  const out: { url?: string; kinds?: string[] } = {};
  if (input.url !== undefined) {
    const problem = checkUrl(input.url);
    if (problem) throw ValidationError.field("url", problem);
    out.url = input.url;
  }
  if (input.events !== undefined) {
    const parsed = parseKinds(input.events);
    if ("problem" in parsed) throw ValidationError.field("events", parsed.problem);
    out.kinds = parsed.kinds;
  }
  return out;
}

export class WebhooksService {
  constructor(
    private readonly repo: WebhooksRepo,
    private readonly box: SecretBox,
    readonly engine: WebhookEngine,
    private readonly enqueue: Enqueue,
    private readonly allowPrivate: boolean,
  ) {}

  /** Refuses bad input before anything is written (the CLI checks before resolving the account). */
  validateNew(input: WebhookInput): void {
    if (input.url === undefined) throw ValidationError.field("url", "is required");
    check(input);
  }

  /**
   * What would keep deliveries to this URL from leaving under the current settings, known without
   * resolving it (names are checked at each delivery).
   */
  urlWarnings(url: string): string[] {
    if (this.allowPrivate || checkUrl(url)) return [];
    const parsed = new URL(url);
    const warnings: string[] = [];
    if (parsed.protocol === "http:") warnings.push("plain http:// is refused unless WEBHOOK_ALLOW_PRIVATE=1");
    const host = parsed.hostname.replace(/^\[|\]$/g, "");
    const refused = isIP(host) ? refusedAddress(host) : null;
    if (refused) warnings.push(`${refused}: refused unless WEBHOOK_ALLOW_PRIVATE=1`);
    return warnings;
  }

  async create(accountId: number, input: WebhookInput): Promise<WebhookWithSecret> {
    this.validateNew(input);
    const { url, kinds } = check(input);
    const secret = generateSecret();
    const now = isoNow();
    const row = await this.repo.transaction(async (repo) => {
      const inserted = await repo.insertEndpoint({
        account_id: accountId,
        url: url!,
        event_kinds: JSON.stringify(kinds ?? [ALL_KINDS]),
        enabled: input.enabled === false ? 0 : 1,
        disabled_reason: null,
        secret: "",
        lock_by: null,
        lock_until: null,
        driver_job: null,
        created: now,
        updated: now,
      });
      const sealed = this.box.seal(secret, sealContext(accountId, inserted.id));
      const stored = await repo.updateEndpoint(accountId, inserted.id, { secret: sealed });
      await repo.ensureCursor(accountId);
      await this.ensureDispatcherIn(repo);
      await repo.audit({
        accountId,
        resource: "webhook",
        id: inserted.id,
        action: "create",
        after: present(stored!),
      });
      return stored!;
    });
    return { webhook: present(row), secret };
  }

  async list(accountId: number): Promise<Webhook[]> {
    return (await this.repo.list(accountId)).map(present);
  }

  /** Operators' listing: every account's endpoints, or one account's. */
  async listAll(accountId?: number): Promise<WebhookListing[]> {
    return (await this.repo.listWithAccounts({ accountId })).map(listing);
  }

  async get(accountId: number, id: number): Promise<Webhook> {
    const row = await this.repo.endpoint(accountId, id);
    if (!row) throw new NotFoundError(`webhook endpoint ${id} not found`);
    return present(row);
  }

  /** An endpoint by id for operators; with accountId, only if it belongs to that account. */
  async locate(id: number, accountId?: number): Promise<WebhookListing> {
    const [row] = await this.repo.listWithAccounts({ id, accountId });
    if (!row) throw new NotFoundError(`webhook endpoint ${id} not found`);
    return listing(row);
  }

  async update(accountId: number, id: number, input: WebhookInput): Promise<Webhook> {
    const { url, kinds } = check(input);
    const changes: Parameters<WebhooksRepo["updateEndpoint"]>[2] = { updated: isoNow() };
    if (url !== undefined) changes.url = url;
    if (kinds !== undefined) changes.event_kinds = JSON.stringify(kinds);
    if (input.enabled !== undefined) {
      changes.enabled = input.enabled ? 1 : 0;
      changes.disabled_reason = null;
    }
    const row = await this.repo.transaction(async (repo) => {
      const before = await repo.endpoint(accountId, id);
      const updated = before && (await repo.updateEndpoint(accountId, id, changes));
      if (!updated) throw new NotFoundError(`webhook endpoint ${id} not found`);
      await repo.audit({
        accountId,
        resource: "webhook",
        id,
        action: "update",
        before: present(before),
        after: present(updated),
      });
      return updated;
    });
    return present(row);
  }

  /** A new secret, in use from the next attempt on; the old one stops working at once. */
  async rotateSecret(accountId: number, id: number): Promise<WebhookWithSecret> {
    const secret = generateSecret();
    const row = await this.repo.transaction(async (repo) => {
      const updated = await repo.updateEndpoint(accountId, id, {
        secret: this.box.seal(secret, sealContext(accountId, id)),
        updated: isoNow(),
      });
      if (!updated) throw new NotFoundError(`webhook endpoint ${id} not found`);
      await repo.audit({ accountId, resource: "webhook", id, action: "rotate_secret", after: { secret } });
      return updated;
    });
    return { webhook: present(row), secret };
  }

  /** Deletes the endpoint with its deliveries and attempt log. */
  async delete(accountId: number, id: number): Promise<Webhook> {
    return this.repo.transaction(async (repo) => {
      const row = await repo.endpoint(accountId, id);
      if (!row) throw new NotFoundError(`webhook endpoint ${id} not found`);
      await repo.deleteEndpoint(accountId, id);
      // No endpoints left: the dispatcher stops reading this account's events.
      if ((await repo.countEndpoints(accountId)) === 0) await repo.deleteCursor(accountId);
      await repo.audit({ accountId, resource: "webhook", id, action: "delete", before: present(row) });
      return present(row);
    });
  }

  /** Queues a webhook.test event for this endpoint alone; the worker sends it at once. */
  async sendTest(accountId: number, id: number): Promise<Delivery> {
    const now = isoNow();
    return this.repo.transaction(async (repo) => {
      const endpoint = await repo.endpoint(accountId, id);
      if (!endpoint) throw new NotFoundError(`webhook endpoint ${id} not found`);
      if (!endpoint.enabled) throw new ValidationError(`webhook endpoint ${id} is disabled; enable it first`);
      const data = {
        webhook_endpoint_id: id,
        message: "A test event from Wisp: this endpoint receives events.",
      };
      const eventId = await repo.insertEvent(accountId, TEST_EVENT, data, now);
      const row = this.engine.newDelivery(accountId, id, eventId, Date.now(), now);
      const [deliveryId] = await this.engine.createWithJobs(repo, [row]);
      await repo.audit({
        accountId,
        resource: "webhook",
        id,
        action: "test",
        after: { delivery_id: deliveryId },
      });
      return presentDelivery({ ...row, id: deliveryId! }, [], TEST_EVENT);
    });
  }

  /** The endpoint's deliveries, newest first, each with its attempt log. */
  async deliveries(accountId: number, endpointId: number, limit = 50): Promise<Delivery[]> {
    await this.get(accountId, endpointId);
    const rows: DeliveryListRow[] = await this.repo.listDeliveries(accountId, endpointId, limit);
    const attempts = await this.repo.attemptsOf(
      accountId,
      rows.map((r) => r.id),
    );
    return rows.map((r) =>
      presentDelivery(
        r,
        attempts.filter((a) => a.delivery_id === r.id),
      ),
    );
  }

  async delivery(accountId: number, id: number): Promise<Delivery> {
    const row = await this.repo.delivery(accountId, id);
    if (!row) throw new NotFoundError(`webhook delivery ${id} not found`);
    const event = await this.repo.event(accountId, row.event_id);
    return presentDelivery(row, await this.repo.attemptsOf(accountId, [id]), event?.kind);
  }

  /** The account of a delivery named by id alone (operators); with accountId, it must match. */
  async locateDelivery(id: number, accountId?: number): Promise<number> {
    const owner = await this.repo.deliveryAccount(id);
    if (owner === undefined || (accountId !== undefined && owner !== accountId)) {
      throw new NotFoundError(`webhook delivery ${id} not found`);
    }
    return owner;
  }

  /** Sends a delivery again: a new attempt sequence (full retry schedule), the same webhook-id. */
  async resend(accountId: number, id: number): Promise<Delivery> {
    await this.repo.transaction(async (repo) => {
      const row = await repo.delivery(accountId, id);
      if (!row) throw new NotFoundError(`webhook delivery ${id} not found`);
      const endpoint = await repo.endpoint(accountId, row.endpoint_id);
      if (!endpoint?.enabled) {
        throw new ValidationError(`webhook endpoint ${row.endpoint_id} is disabled; enable it first`);
      }
      await repo.restartDelivery(accountId, id, Date.now(), isoNow());
      await this.enqueue(repo.db, [{ kind: DELIVER_JOB, accountId, payload: { endpoint: row.endpoint_id } }]);
      await repo.audit({ accountId, resource: "webhook_delivery", id, action: "resend" });
    });
    return this.delivery(accountId, id);
  }

  /** Makes sure a dispatch job runs while any account has endpoints (at worker start, on create). */
  async ensureDispatcher(): Promise<void> {
    if (!(await this.repo.anyCursor())) return;
    await this.repo.transaction((repo) => this.ensureDispatcherIn(repo));
  }

  private async ensureDispatcherIn(repo: WebhooksRepo): Promise<void> {
    if (await recurringJobQueued(repo.db, DISPATCH_JOB)) return;
    await this.enqueue(repo.db, [{ kind: DISPATCH_JOB, accountId: null, payload: {} }]);
  }

  /** Whether this dispatch job should stand down for an older one (two were started at once). */
  isDuplicateDispatcher(jobId: number): Promise<boolean> {
    return olderJobQueued(this.repo.db, DISPATCH_JOB, jobId);
  }

  hasEndpoints(): Promise<boolean> {
    return this.repo.anyCursor();
  }
}

/** The webhooks area on one database; settings come from the Config (createCore's options). */
export function createWebhooksService(database: Database, settings: WebhookSettings): WebhooksService {
  const repo = new WebhooksRepo(database.db, database.dialect);
  const queue = new JobQueue(database.db, database.dialect);
  const enqueue: Enqueue = (db, jobs) => queue.enqueue(db, jobs);
  const box = new SecretBox({ secretKey: settings.webhookSecretKey, dataDir: settings.dataDir });
  const allowPrivate = settings.webhookAllowPrivate ?? false;
  const sender = new WebhookSender({ allowPrivate });
  const schedule = settings.webhookRetrySchedule ?? DEFAULT_RETRY_SCHEDULE_MS;
  const engine = new WebhookEngine(
    repo,
    new OutboxRepo(database.db, database.dialect),
    enqueue,
    box,
    sender,
    schedule,
  );
  return new WebhooksService(repo, box, engine, enqueue, allowPrivate);
}
