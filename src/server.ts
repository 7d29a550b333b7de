// Assembles a running Wisp: database (migrated), core, counters, HTTP. main.ts and tests use it.
import type { FastifyInstance } from "fastify";
import type { Config } from "./config.ts";
import { consolePlugin } from "./console/plugin.ts";
import { loadViews } from "./console/views.ts";
import { loadDictionary } from "./core/aaa/dictionary.ts";
import { DeploymentRepo } from "./core/deployment/repo.ts";
import { type Core, createCore } from "./core/index.ts";
import { fileClock } from "./core/shared/clock.ts";
import { apiPlugin } from "./http/app.ts";
import { healthRoute } from "./http/health.ts";
import { type CounterStore, MemoryCounterStore, RedisCounterStore } from "./http/rate-limit.ts";
import { createHttpRoot } from "./http/root.ts";
import { scimPlugin } from "./http/scim.ts";
import { registerJobHandlers } from "./jobs/handlers.ts";
import { Worker } from "./jobs/worker.ts";
import type { MetricsListener } from "./metrics/http.ts";
import type { Metrics } from "./metrics/metrics.ts";
import { type PortalOptions, portalPlugin } from "./portal/plugin.ts";
import { DasClient } from "./radius/das-client.ts";
import type { EapOptions } from "./radius/eap/types.ts";
import { RadsecListener } from "./radius/radsec/listener.ts";
import { RadiusServer } from "./radius/server.ts";
import { listenFailure, openMigratedDatabase } from "./startup.ts";
import { VERSION } from "./version.ts";

export interface RunningServer {
  app: FastifyInstance;
  core: Core;
  /** The address the HTTP server listens on, e.g. http://127.0.0.1:8080 */
  url: string;
  radius: RadiusServer;
  /** The RadSec listener, when RADSEC_PORT is set. */
  radsec: RadsecListener | undefined;
  /** The background worker, unless WORKER=0 (then `wisp worker` runs it elsewhere). */
  worker: Worker | undefined;
  /** Present when METRICS_TOKEN or METRICS_LISTEN is set. */
  metrics: Metrics | undefined;
  /** The METRICS_LISTEN listener's address (http://host:port), when set. */
  metricsUrl: string | undefined;
  close(): Promise<void>;
}

export interface ServerOverrides {
  /** Prefix of the Redis rate-limit keys (before the deployment identity); tests set their own. */
  redisPrefix?: string;
  counters?: CounterStore;
  /** The rate-limit counters' clock (tests hold it still, so no test straddles a window's end). */
  clock?: () => number;
  /** Captive-portal attempt limits (tests use small ones). */
  portal?: Pick<PortalOptions, "attemptsPerAddress" | "attemptsPerDevice" | "windowMs">;
  /** EAP's certificates and client-certificate checks (tests give their own; see radius/eap/types.ts). */
  eap?: EapOptions;
}

export async function startServer(config: Config, overrides: ServerOverrides = {}): Promise<RunningServer> {
  // The files Wisp ships, read before the database is touched: one that cannot be read stops the
  // start in one line, rather than refusing Wisp's own (quota) attributes as unknown or failing a
  // console page later. (The static files are read as their modules load: see main.ts.)
  loadDictionary();
  loadViews();
  const database = await openMigratedDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  let counters: CounterStore | undefined;
  let app: FastifyInstance | undefined;
  let radius: RadiusServer | undefined;
  let radsec: RadsecListener | undefined;
  let metricsListener: MetricsListener | undefined;
  try {
    const core = createCore(database, config);
    // The EAP server identity is made (once per deployment) or read before anything listens, so a
    // key that cannot be opened stops the start with one line rather than failing the first
    // 802.1X login, and the start-up line follows the HTTP port's opening at once.
    if (config.radiusAuthPort > 0) await core.certs.serverCredentials();
    // The API and the console side by side on one HTTP server, with /healthz beside them.
    app = createHttpRoot({ logLevel: config.logLevel, trustedProxies: config.trustedProxies });
    // prom-client and the metrics code load only when metrics are on (idle RSS, start-up time).
    const metricsCode =
      config.metricsToken || config.metricsListen
        ? await Promise.all([import("./metrics/metrics.ts"), import("./metrics/http.ts")])
        : undefined;
    const metrics = metricsCode
      ? new metricsCode[0].Metrics({
          database,
          jobs: core.jobs,
          webhooks: config.runWorker ? core.webhooks.engine : undefined,
          directories: () => core.directories.runtime.health(),
        })
      : undefined;
    // Before any route is added: each route's timing hook is attached as the route is made.
    if (metrics) metricsCode?.[1].instrumentHttp(app, metrics);
    if (metrics && config.metricsToken) metricsCode?.[1].metricsRoute(app, metrics, config.metricsToken);
    counters =
      overrides.counters ??
      (config.redisUrl
        ? new RedisCounterStore(config.redisUrl, {
            identity: await new DeploymentRepo(database.db).identity(),
            prefix: overrides.redisPrefix,
            log: app.log,
            now: overrides.clock,
          })
        : new MemoryCounterStore({ now: overrides.clock }));
    if (config.testClockFile) {
      core.aaa.clock = fileClock(config.testClockFile);
      app.log.warn(
        "WISP_TEST_CLOCK_FILE is set: logins are decided at the time that file holds (tests only)",
      );
    }
    core.sessions.das = new DasClient({ log: app.log });
    core.sessions.log = app.log;
    healthRoute(app, { database, counters, directories: () => core.directories.runtime.health() });
    await app.register(apiPlugin, {
      core,
      counters,
      defaultRateLimit: config.defaultRateLimit,
      authFailureLimit: config.authFailureLimit,
      publicUrl: config.publicUrl,
    });
    await app.register(scimPlugin, {
      prefix: "/scim/v2",
      core,
      counters,
      defaultRateLimit: config.defaultRateLimit,
      authFailureLimit: config.authFailureLimit,
      publicUrl: config.publicUrl,
    });
    await app.register(consolePlugin, { prefix: "/console", core, counters, publicUrl: config.publicUrl });
    await app.register(portalPlugin, {
      prefix: "/portal",
      core,
      counters,
      attemptsPerAddress: config.portalAttemptsPerAddress,
      attemptsPerDevice: config.portalAttemptsPerDevice,
      ...overrides.portal,
    });
    await app.listen({ host: config.host, port: config.port }).catch((error) => {
      throw listenFailure(error, "HTTP", config.host, config.port);
    });
    radius = new RadiusServer({
      host: config.radiusHost,
      authPort: config.radiusAuthPort,
      acctPort: config.radiusAcctPort,
      aaa: core.aaa,
      findClient: (address) => core.networks.findClientByAddress(address),
      log: app.log,
      // Certificates from EAP_* files or Wisp's own CA in the database (core/certs).
      eap: overrides.eap ?? {
        credentials: () => core.certs.serverCredentials(),
        checkClientCertificate: (client, certificate, identity) =>
          core.certs.checkClientCertificate(client, certificate, identity),
        fragmentSize: config.eapFragmentSize,
      },
      eapLimits: config.eapLimits,
      observer: metrics?.radius,
    });
    await radius.start().catch((error: NodeJS.ErrnoException & { port?: number }) => {
      throw listenFailure(error, "RADIUS", config.radiusHost, error.port ?? config.radiusAuthPort);
    });
    radsec = await startRadsec(config, core, radius, app.log, metrics);
    if (metrics && config.metricsListen)
      metricsListener = await metricsCode?.[1].startMetricsListener(metrics, config.metricsListen);
    const worker = config.runWorker ? new Worker(core.jobs, { log: app.log }) : undefined;
    if (worker) {
      registerJobHandlers(worker, core);
      worker.start();
    }
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : config.port;
    const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
    const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
    logStarted(app, {
      config,
      database,
      worker: Boolean(worker),
      radiusPorts: radius.ports,
      radsecPort: radsec?.port,
      url,
      metricsUrl: metricsListener?.url,
    });
    await warnTooWideNetworks(app, core, config);
    const [http, udp, tls, store, scrapes] = [app, radius, radsec, counters, metricsListener];
    return {
      app: http,
      core,
      radius: udp,
      radsec: tls,
      worker,
      url,
      metrics,
      metricsUrl: scrapes?.url,
      async close() {
        // Stop accepting, let in-flight requests finish, then release the database and Redis.
        await tls?.close();
        await udp.close();
        await http.close();
        await scrapes?.close();
        await worker?.stop();
        metrics?.close();
        await core.aaa.drain();
        await core.directories.runtime.close();
        await store.close();
        await database.close();
      },
    };
  } catch (error) {
    await metricsListener?.close();
    await radsec?.close();
    await radius?.close();
    await app?.close();
    await counters?.close();
    await database.close();
    throw error;
  }
}

/** The RadSec listener (RADSEC_PORT), answering with the UDP server's code and EAP engine. */
async function startRadsec(
  config: Config,
  core: Core,
  radius: RadiusServer,
  log: FastifyInstance["log"],
  metrics: Metrics | undefined,
): Promise<RadsecListener | undefined> {
  const settings = config.radsec;
  if (settings.port === 0) return undefined;
  const own = settings.identity;
  const listener = new RadsecListener({
    host: settings.host,
    port: settings.port,
    // RADSEC_CERT_FILE/KEY_FILE, else the EAP server certificate (Wisp's own CA or EAP_* files).
    identity: async () => (own ? { ...own, chain: [] } : core.certs.serverCredentials()),
    trust: core.radsec,
    answer: radius.deps,
    log,
    limits: settings,
    // A packet left half-sent is closed within 10 s, sooner when the idle timeout is shorter.
    settings: {
      idleTimeoutMs: settings.idleTimeoutMs,
      partialTimeoutMs: Math.min(10_000, settings.idleTimeoutMs),
    },
    handshakeTimeoutMs: settings.handshakeTimeoutMs,
    radius11: settings.radius11,
    observer: metrics?.radsec,
  });
  await listener.start().catch((error: NodeJS.ErrnoException) => {
    throw listenFailure(error, "RadSec", settings.host, settings.port);
  });
  core.radsecConnections = listener;
  core.sessions.connected = {
    send: (accountId, networkId, kind, attributes) =>
      listener.sendDas(accountId, networkId, kind, attributes),
  };
  return listener;
}

interface StartedFacts {
  config: Config;
  database: { dialect: string; location: string };
  worker: boolean;
  radiusPorts: { auth?: number; acct?: number };
  radsecPort: number | undefined;
  url: string;
  metricsUrl: string | undefined;
}

/**
 * One warning per network wider than NETWORK_MIN_PREFIX_IPV4 / _IPV6 allow (made before the limits,
 * or under lower ones): each keeps working, but keeps other accounts from adding networks inside it.
 */
async function warnTooWideNetworks(app: FastifyInstance, core: Core, config: Config): Promise<void> {
  for (const network of await core.networks.tooWide()) {
    const ipv6 = network.nas_ip.includes(":");
    const setting = ipv6 ? "NETWORK_MIN_PREFIX_IPV6" : "NETWORK_MIN_PREFIX_IPV4";
    const limit = ipv6 ? config.networkMinPrefix.ipv6 : config.networkMinPrefix.ipv4;
    app.log.warn(
      { network: network.id, account: network.account, nas_ip: network.nas_ip },
      `network ${network.id} (account ${network.account}) is ${network.nas_ip}, wider than ` +
        `${setting}=${limit} allows: it keeps working, but no other account can add a network inside it; ` +
        `narrow it (wisp networks update ${network.id} --nas-ip <narrower range>) or set ` +
        `${setting}=${network.nas_ip.split("/")[1]} or lower`,
    );
  }
}

/** One line that tells an operator what started, where its data is and where to go next. */
function logStarted(app: FastifyInstance, facts: StartedFacts): void {
  const { config, database, radiusPorts, url } = facts;
  const base = process.env.PUBLIC_URL ? config.publicUrl : url;
  const radius = [
    radiusPorts.auth ? `auth ${config.radiusHost}:${radiusPorts.auth}/udp` : "auth off",
    radiusPorts.acct ? `acct ${config.radiusHost}:${radiusPorts.acct}/udp` : "acct off",
    facts.radsecPort ? `RadSec ${config.radsec.host}:${facts.radsecPort}/tls` : "RadSec off",
  ].join(", ");
  const fields = {
    version: VERSION,
    database: `${database.dialect} ${database.location}`,
    redis: Boolean(config.redisUrl),
    worker: facts.worker,
    radius: radiusPorts,
    radsec: facts.radsecPort,
    http: url,
    console: `${base}/console`,
    docs: `${base}/docs`,
    metrics: [
      config.metricsToken ? `${url}/metrics (token)` : undefined,
      facts.metricsUrl ? `${facts.metricsUrl}/metrics` : undefined,
    ]
      .filter(Boolean)
      .join(", "),
  };
  app.log.info(
    fields,
    `wisp ${VERSION} started: database ${fields.database}; worker ${facts.worker ? "on" : "off (run wisp worker)"}; ` +
      `RADIUS ${radius}; console ${fields.console}; API docs ${fields.docs}` +
      (fields.metrics ? `; metrics ${fields.metrics}` : ""),
  );
}
