// Captive-portal pages (issue 13, point 7), two figures:
// 1. Page requests per second: GET /portal/<id> with a CoovaChilli redirect's signed query, from Wisp
//    (portal lookup, checksum, CSRF cookie, template) against a bare fastify serving the same bytes
//    (bench/bare-page.ts), alternated in rounds, with the server's CPU time per request. Target 0.5x.
// 2. One complete voucher sign-in, timed end to end and one after another: the gateway's redirect,
//    the page, the sign-in POST (checked with the RADIUS rules), the hand-off to the gateway, the
//    gateway's CHAP Access-Request to Wisp's RADIUS port, its redirect back and the landing page
//    (test/support/gateways.ts, a CoovaChilli written from its documented protocol). p50 and p99.
//
//   npx tsx bench/portal.ts [--duration 5] [--rounds 3] [--connections 10] [--signins 200] [--cpu-prof DIR]
//
// Wisp runs as a child process, compiled as `npm start` runs it (npm run build, dist/main.js; SQLite in
// a temp dir, LOG_LEVEL=warn) with the portal's attempt limits raised: every request of the load
// comes from one address and one device.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { createCore } from "../src/core/index.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { freeUdpPort } from "../test/support/freeradius-lab.ts";
import { startGateway } from "../test/support/gateways.ts";
import {
  BenchError,
  buildDist,
  cpuMicroseconds,
  type HttpChild,
  installExitHandlers,
  makeTempDir,
  onCleanup,
  runBench,
  startHttpChild,
  stopChild,
  writeResults,
} from "./processes.ts";

const TARGET_RATIO = 0.5;
const RADIUS_SECRET = "bench-radius-secret";
const UAM_SECRET = "bench-uam-secret";

interface Settings {
  duration: number;
  rounds: number;
  connections: number;
  signins: number;
  /** Where Wisp's CPU profile is written (node --cpu-prof), if anywhere. */
  cpuProfDir: string | undefined;
}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      duration: { type: "string" },
      rounds: { type: "string" },
      connections: { type: "string" },
      signins: { type: "string" },
      "cpu-prof": { type: "string" },
    },
    strict: true,
  });
  const int = (name: string, raw: string | undefined, fallback: number, max: number) => {
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
      throw new BenchError(`--${name} must be a whole number from 1 to ${max}`);
    }
    return Number(raw);
  };
  return {
    duration: int("duration", values.duration, 5, 600),
    rounds: int("rounds", values.rounds, 3, 50),
    connections: int("connections", values.connections, 10, 1000),
    signins: int("signins", values.signins, 200, 5000),
    cpuProfDir: values["cpu-prof"],
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};

/** A CoovaChilli redirect's query, signed as src/redir.c signs it (&md=). */
function signedQuery(page: string, uamport: number): string {
  const query = new URLSearchParams({
    res: "notyet",
    uamip: "127.0.0.1",
    uamport: String(uamport),
    challenge: "0123456789abcdef0123456789abcdef",
    mac: "AA-BB-CC-00-00-01",
    userurl: "http://example.com/",
  }).toString();
  const md = createHash("md5").update(`${page}?${query}${UAM_SECRET}`).digest("hex").toUpperCase();
  return `${query}&md=${md}`;
}

async function load(server: HttpChild, pagePath: string, settings: Settings, duration: number) {
  const before = cpuMicroseconds(server);
  const result = await autocannon({
    url: `${server.url}${pagePath}`,
    connections: settings.connections,
    pipelining: 1,
    duration,
  });
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0 || result["2xx"] === 0) {
    throw new BenchError(
      `${server.name}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts; ` +
        "a benchmark of failures measures nothing",
    );
  }
  return {
    rps: result.requests.average,
    p99Ms: result.latency.p99,
    cpuUsPerRequest: (cpuMicroseconds(server) - before) / result["2xx"],
  };
}

/** Fetch without following redirects; the Location, resolved. */
async function redirected(url: string, init: RequestInit = {}): Promise<string> {
  const response = await fetch(url, { ...init, redirect: "manual" });
  await response.arrayBuffer();
  const location = response.headers.get("location");
  if (response.status < 300 || response.status > 399 || !location) {
    throw new BenchError(`${url}: expected a redirect, got ${response.status}`);
  }
  return new URL(location, url).href;
}

const htmlText = (text: string) => text.replace(/&amp;/g, "&").replace(/&quot;/g, '"');

/** One guest, start to finish; the milliseconds it took. */
async function signIn(gatewayStart: string, code: string): Promise<number> {
  const started = performance.now();
  const pageUrl = await redirected(gatewayStart);
  const page = await fetch(pageUrl);
  const html = await page.text();
  const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const field = (name: string) =>
    htmlText(new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? "");
  const form = new URLSearchParams({
    _csrf: field("_csrf"),
    gw: field("gw"),
    lang: field("lang"),
    method: "voucher",
    code,
  });
  const handoff = await fetch(pageUrl.split("?")[0] ?? "", {
    method: "POST",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
    body: form,
  });
  const handoffHtml = await handoff.text();
  const logon = /http-equiv="refresh" content="0;url=([^"]+)"/.exec(handoffHtml)?.[1];
  if (handoff.status !== 200 || !logon) throw new BenchError(`sign-in refused: ${handoff.status}`);
  const back = await redirected(htmlText(logon)); // the gateway asks RADIUS, then sends the guest back
  const landing = await redirected(back);
  const landed = await fetch(landing);
  await landed.arrayBuffer();
  if (!landing.endsWith("/original") || landed.status !== 200) {
    throw new BenchError(`the guest did not land: ${landing} ${landed.status}`);
  }
  return performance.now() - started;
}

async function main(): Promise<void> {
  const settings = readSettings();
  buildDist();
  const dir = makeTempDir("portal");
  const radiusPort = await freeUdpPort();

  // The data, written before Wisp starts: an account, a network for the gateway, a portal, vouchers.
  const database = openDatabase({ dataDir: dir, databaseUrl: undefined });
  await migrate(database);
  // The same DATA_DIR as the child: the UAM secret is sealed with its secret.key.
  const core = createCore(database, { publicUrl: "http://127.0.0.1", dataDir: dir });
  const account = await core.accounts.resolve(undefined).catch(() => core.accounts.create("default"));
  const network = await core.networks.create(account.id, {
    name: "bench venue",
    nas_ip: "127.0.0.1",
    secret: RADIUS_SECRET,
  });
  const portal = await core.portals.create(account.id, {
    name: "Bench lobby",
    network_id: network.network.id,
    vendor: "coovachilli",
    uam_secret: UAM_SECRET,
    // The bench's gateway listens on loopback, which no real gateway is (not allowed by default).
    allowed_gateways: ["127.0.0.1"],
    title: "Welcome to the bench café",
    welcome_text: "Free Wi-Fi for guests.\n\nAsk at the bar for a code.",
    terms: "Be nice. See https://example.com/terms for the rest.",
  });
  const warmupSignins = 10;
  const batch = await core.vouchers.createBatch(account.id, {
    quantity: settings.signins + warmupSignins,
    validity: 86_400,
    usage_limit: 1,
  });
  const codes = batch.data.map((v) => v.code);
  await database.close();

  const wisp = await startHttpChild(
    "wisp",
    "dist/main.js",
    {
      DATA_DIR: dir,
      LOG_LEVEL: "warn",
      WORKER: "0",
      RADIUS_AUTH_PORT: String(radiusPort),
      RADIUS_ACCT_PORT: "0",
      PORTAL_ATTEMPTS_PER_ADDRESS: "1000000",
      PORTAL_ATTEMPTS_PER_DEVICE: "1000000",
    },
    settings.cpuProfDir ? ["--cpu-prof", "--cpu-prof-dir", settings.cpuProfDir] : [],
  );
  onCleanup(() => void stopChild(wisp.child));
  const pagePath = `/portal/${portal.id}?${signedQuery(`${wisp.url}/portal/${portal.id}`, 3990)}`;
  const first = await fetch(`${wisp.url}${pagePath}`);
  const body = Buffer.from(await first.arrayBuffer());
  if (first.status !== 200 || !body.includes("Welcome to the bench")) {
    throw new BenchError(`the portal page answered ${first.status}`);
  }
  const bodyFile = path.join(dir, "page.html");
  fs.writeFileSync(bodyFile, body);
  const bare = await startHttpChild("bare page", "bench/bare-page.ts", { BODY_FILE: bodyFile });
  onCleanup(() => void stopChild(bare.child));

  console.log(
    `portal page: ${body.length} bytes; ${settings.connections} connections, ` +
      `${settings.rounds} rounds x ${settings.duration} s (median), alternating`,
  );
  await load(wisp, pagePath, settings, 2);
  await load(bare, pagePath, settings, 2);
  const rounds: { wisp: Awaited<ReturnType<typeof load>>; bare: Awaited<ReturnType<typeof load>> }[] = [];
  for (let round = 0; round < settings.rounds; round++) {
    const bareFirst = round % 2 === 1;
    const a = await load(bareFirst ? bare : wisp, pagePath, settings, settings.duration);
    const b = await load(bareFirst ? wisp : bare, pagePath, settings, settings.duration);
    rounds.push(bareFirst ? { wisp: b, bare: a } : { wisp: a, bare: b });
  }
  const page = {
    bytes: body.length,
    wispRps: median(rounds.map((r) => r.wisp.rps)),
    bareRps: median(rounds.map((r) => r.bare.rps)),
    wispCpuUsPerRequest: median(rounds.map((r) => r.wisp.cpuUsPerRequest)),
    bareCpuUsPerRequest: median(rounds.map((r) => r.bare.cpuUsPerRequest)),
    wispP99Ms: median(rounds.map((r) => r.wisp.p99Ms)),
    ratio: 0,
    target: TARGET_RATIO,
    pass: false,
  };
  page.ratio = page.wispRps / page.bareRps;
  page.pass = page.ratio >= TARGET_RATIO;
  console.log(
    `  Wisp ${page.wispRps.toFixed(0)} req/s (${page.wispCpuUsPerRequest.toFixed(0)} µs CPU/req, p99 ` +
      `${page.wispP99Ms} ms) vs bare ${page.bareRps.toFixed(0)} req/s (${page.bareCpuUsPerRequest.toFixed(0)} µs): ` +
      `${page.ratio.toFixed(2)}x (target ≥ ${TARGET_RATIO}x) ${page.pass ? "PASS" : "FAIL"}`,
  );

  const gateway = await startGateway({
    vendor: "coovachilli",
    radiusPort,
    secret: RADIUS_SECRET,
    uamSecret: UAM_SECRET,
  });
  onCleanup(() => void gateway.close());
  const start = gateway.startUrl(`${wisp.url}/portal/${portal.id}`);
  for (const code of codes.slice(0, warmupSignins)) await signIn(start, code);
  const times: number[] = [];
  for (const code of codes.slice(warmupSignins)) times.push(await signIn(start, code));
  const refused = gateway.handoffs.filter((h) => h.radius.type !== "Access-Accept").length;
  const signin = {
    count: times.length,
    p50Ms: percentile(times, 50),
    p99Ms: percentile(times, 99),
    maxMs: Math.max(...times),
    radiusRefused: refused,
  };
  console.log(
    `voucher sign-in end to end (redirect, page, POST, hand-off, RADIUS CHAP, landing), ${signin.count} ` +
      `one after another: p50 ${signin.p50Ms.toFixed(1)} ms, p99 ${signin.p99Ms.toFixed(1)} ms, ` +
      `max ${signin.maxMs.toFixed(1)} ms; ${refused} refused by RADIUS`,
  );
  if (refused > 0) throw new BenchError(`${refused} sign-ins were refused by RADIUS`);
  writeResults("portal", {
    date: new Date().toISOString(),
    settings,
    page,
    signin,
  });
}

installExitHandlers();
runBench(main);
