// The metrics of one running Wisp process (server or worker), in a Registry of its own: tests
// start several servers in one process, and each must count only its own traffic. Made only when
// METRICS_TOKEN or METRICS_LISTEN is set; otherwise nothing is counted at all.
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { DirectoryHealth } from "../core/directories/runtime.ts";
import type { JobQueue, JobStats } from "../core/jobs/queue.ts";
import type { AttemptResult, WebhookEngine } from "../core/webhooks/delivery.ts";
import type { Database } from "../db/database.ts";
import { type CounterCell, CounterCells, HistogramCells } from "./cells.ts";
import { RadiusMetrics } from "./radius.ts";
import { RadsecMetrics } from "./radsec.ts";

/** Seconds: from 0.1 ms (an indexed SQLite read) to 2.5 s. */
const QUERY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];
const STATES = ["due", "scheduled", "running"];

export interface MetricsSources {
  database: Database;
  jobs: JobQueue;
  /** Present in a process that runs the worker. */
  webhooks?: WebhookEngine | undefined;
  /** The directories (LDAP sources) this process talks to, with their servers' breaker states. */
  directories?: (() => Promise<DirectoryHealth[]>) | undefined;
}

export class Metrics {
  readonly registry = new Registry();
  readonly radius: RadiusMetrics;
  readonly radsec: RadsecMetrics;
  private readonly webhookResults: Record<AttemptResult, CounterCell>;
  private stats: Promise<JobStats[]> | undefined;
  /** Kinds seen once are shown at 0 afterwards, so a drained queue reads 0 rather than nothing. */
  private readonly kinds = new Set<string>();

  constructor(private readonly sources: MetricsSources) {
    // Event-loop lag (nodejs_eventloop_lag_*), CPU, memory, GC, handles: prom-client's defaults.
    collectDefaultMetrics({ register: this.registry });
    this.radsec = new RadsecMetrics(this.registry);
    this.radius = new RadiusMetrics(this.registry, this.radsec.transports);

    const queries = new HistogramCells(
      this.registry,
      "wisp_db_query_duration_seconds",
      "Time of each database statement (Kysely queries and prepared reads)",
      QUERY_BUCKETS,
    ).cell({});
    sources.database.observeQueries((ms) => queries.observe(ms / 1000));

    const webhooks = new CounterCells(
      this.registry,
      "wisp_webhook_deliveries_total",
      "Webhook delivery attempts by result: succeeded (2xx), retrying (queued again), failed (given up), gone (410: endpoint disabled)",
      ["outcome"],
    );
    this.webhookResults = {
      succeeded: webhooks.cell({ outcome: "succeeded" }),
      retrying: webhooks.cell({ outcome: "retrying" }),
      failed: webhooks.cell({ outcome: "failed" }),
      gone: webhooks.cell({ outcome: "gone" }),
    };
    if (sources.webhooks) {
      const results = this.webhookResults;
      sources.webhooks.onAttempt = (result) => {
        results[result].value++;
      };
    }
    this.jobGauges();
    if (sources.directories) this.directoryGauge(sources.directories);
  }

  /** 1 while a directory server's circuit is closed (answering), 0 while open or half-open. */
  private directoryGauge(directories: () => Promise<DirectoryHealth[]>): void {
    new Gauge({
      name: "wisp_directory_server_up",
      help: "LDAP directory servers: 1 while answering (circuit closed), 0 while failing (circuit open or half-open)",
      labelNames: ["account_id", "directory", "server"],
      registers: [this.registry],
      async collect() {
        const list = await directories().catch(() => []);
        this.reset();
        for (const d of list)
          for (const s of d.servers)
            this.set(
              { account_id: String(d.account_id), directory: d.directory, server: s.url },
              s.state === "closed" ? 1 : 0,
            );
      },
    });
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** Stops counting (the database and engine outlive nothing, but a closed server should not count). */
  close(): void {
    this.sources.database.observeQueries(undefined);
    if (this.sources.webhooks) this.sources.webhooks.onAttempt = undefined;
  }

  /** The two queue gauges are collected side by side: they share one read while it runs. */
  private jobStats(): Promise<JobStats[]> {
    if (!this.stats) {
      // A database that cannot be read leaves the gauges empty (alert on absent()), not /metrics down.
      const promise = this.sources.jobs.stats().catch(() => []);
      this.stats = promise;
      void promise.finally(() => {
        if (this.stats === promise) this.stats = undefined;
      });
    }
    return this.stats;
  }

  private jobGauges(): void {
    const metrics = this;
    new Gauge({
      name: "wisp_job_queue_depth",
      help: "Jobs by kind and state: due (queued, waiting for a worker), scheduled (queued for later: retries, recurring), running",
      labelNames: ["kind", "state"],
      registers: [this.registry],
      async collect() {
        const stats = await metrics.jobStats();
        this.reset();
        for (const s of stats) metrics.kinds.add(s.kind);
        for (const kind of metrics.kinds) for (const state of STATES) this.set({ kind, state }, 0);
        for (const s of stats) {
          if (s.status === "running") this.set({ kind: s.kind, state: "running" }, s.total);
          else {
            this.set({ kind: s.kind, state: "due" }, s.due);
            this.set({ kind: s.kind, state: "scheduled" }, s.total - s.due);
          }
        }
      },
    });
    new Gauge({
      name: "wisp_job_oldest_due_age_seconds",
      help: "How long the oldest due queued job of each kind has waited for a worker (0: none due)",
      labelNames: ["kind"],
      registers: [this.registry],
      async collect() {
        const stats = await metrics.jobStats();
        const now = Date.now();
        this.reset();
        for (const s of stats) metrics.kinds.add(s.kind);
        for (const kind of metrics.kinds) this.set({ kind }, 0);
        for (const s of stats) {
          if (s.status === "queued" && s.due > 0) this.set({ kind: s.kind }, (now - s.earliestRunAt) / 1000);
        }
      },
    });
  }
}
