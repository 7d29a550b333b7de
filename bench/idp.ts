// Identity provider sign-in (issue 26, point 6): the time from the IdP's redirect back to Wisp to
// the gateway hand-off page, p50 and p99 over N guests one after another, against the local IdPs
// of the tests: the real OpenID Provider (oidc-provider) and the test SAML IdP.
//   OIDC: GET /portal/idp/<p>/callback?code&state (Wisp checks the state, redeems the code at the
//         IdP's token endpoint with the PKCE verifier, verifies the ID token against the JWKS)
//         -> 303 -> GET /portal/<id>/idp/finish/<token> (the user made or updated, its groups, a
//         one-time password, the RADIUS rules) -> the hand-off page.
//   SAML: POST /portal/idp/<p>/acs (signature, conditions, InResponseTo, one-time assertion) -> 303
//         -> the same finish page.
// Baseline: the click-through sign-in of the same portal (its POST to the same hand-off page), the
// part of the path that involves no IdP. Each guest is new (a new user at Wisp); what happens at
// the IdP before its redirect (login and consent pages) is not timed.
//
//   npx tsx bench/idp.ts [--signins 200]
//
// Wisp runs as a child process, compiled as `npm start` runs it (npm run build, dist/main.js;
// SQLite in a temp dir, LOG_LEVEL=warn, IDP_ALLOW_HTTP=1 for the loopback IdPs) with the portal's
// attempt limits raised: every guest comes from one address.
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";
import { createCore } from "../src/core/index.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { freeTcpPort } from "../test/support/idp-lab.ts";
import { Jar, startOp, stepsToCallback } from "../test/support/oidc-op.ts";
import { startSamlIdp } from "../test/support/saml-idp.ts";
import {
  BenchError,
  buildDist,
  cleanEnv,
  installExitHandlers,
  makeTempDir,
  onCleanup,
  ROOT,
  runBench,
  stopChild,
  track,
  writeResults,
} from "./processes.ts";

const WARMUP = 10;

function readSettings(): { signins: number } {
  const { values } = parseArgs({ options: { signins: { type: "string" } }, strict: true });
  const raw = values.signins;
  if (raw !== undefined && (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 5000))
    throw new BenchError("--signins must be a whole number from 1 to 5000");
  return { signins: raw === undefined ? 200 : Number(raw) };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};
const summary = (times: number[]) => ({
  count: times.length,
  p50Ms: percentile(times, 50),
  p99Ms: percentile(times, 99),
  maxMs: Math.max(...times),
});
const line = (label: string, s: ReturnType<typeof summary>) =>
  `${label.padEnd(44)} p50 ${s.p50Ms.toFixed(1).padStart(6)} ms   p99 ${s.p99Ms.toFixed(1).padStart(6)} ms   max ${s.maxMs.toFixed(1).padStart(6)} ms`;

/** Wisp on a known port (its PUBLIC_URL is where the IdPs send browsers back). */
async function startWisp(dir: string, port: number) {
  const child = track(
    spawn(process.execPath, ["dist/main.js"], {
      cwd: ROOT,
      env: {
        ...cleanEnv(),
        DATA_DIR: dir,
        HOST: "127.0.0.1",
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        IDP_ALLOW_HTTP: "1",
        LOG_LEVEL: "warn",
        WORKER: "0",
        RADIUS_AUTH_PORT: "0",
        RADIUS_ACCT_PORT: "0",
        PORTAL_ATTEMPTS_PER_ADDRESS: "1000000",
        PORTAL_ATTEMPTS_PER_DEVICE: "1000000",
      },
      stdio: ["ignore", "inherit", "inherit"],
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 30_000; ; ) {
    if (child.exitCode !== null) throw new BenchError(`wisp exited during start-up (${child.exitCode})`);
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { url, child };
    if (Date.now() > deadline) throw new BenchError("wisp did not answer /healthz within 30 s");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A guest at the portal page; `press` posts a form of it (a provider's button or click-through). */
async function guestAt(base: string, portalId: number, n: number) {
  const jar = new Jar();
  const hex = (value: number) => (value % 256).toString(16).padStart(2, "0");
  const mac = `AA:BB:CC:${hex(n >> 8)}:${hex(n)}:26`;
  const gw = new URLSearchParams({ "link-login-only": "http://10.5.50.1/login", mac }).toString();
  const page = await (await jar.fetch(`${base}/portal/${portalId}?${gw}`)).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
  const press = (path: string, fields: Record<string, string> = {}) =>
    jar.fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf, gw, lang: "en", ...fields }),
    });
  return { jar, press };
}

const idpLink = (html: string) =>
  (/<a id="idp-link" href="([^"]+)"/.exec(html)?.[1] ?? "").replace(/&amp;/g, "&");

/** Follows our redirect to the finish page; fails unless it is the hand-off. */
async function toHandoff(jar: Jar, base: string, response: Response): Promise<void> {
  const location = response.headers.get("location");
  await response.arrayBuffer();
  if (response.status !== 303 || !location)
    throw new BenchError(`the IdP's return answered ${response.status}`);
  const finish = await jar.fetch(new URL(location, base).href);
  const html = await finish.text();
  if (finish.status !== 200 || !html.includes('<form id="handoff"'))
    throw new BenchError(`the finish page answered ${finish.status}: ${html.slice(0, 200)}`);
}

async function main(): Promise<void> {
  const { signins } = readSettings();
  buildDist();
  const dir = makeTempDir("idp");
  const port = await freeTcpPort();
  const base = `http://127.0.0.1:${port}`;
  const op = await startOp([`${base}/portal/idp/1/callback`]);
  onCleanup(() => void op.close());
  const saml = await startSamlIdp();
  onCleanup(() => void saml.close());

  const database = openDatabase({ dataDir: dir, databaseUrl: undefined });
  await migrate(database);
  const core = createCore(database, { publicUrl: base, dataDir: dir, idpAllowHttp: true });
  const account = await core.accounts.resolve(undefined);
  const network = await core.networks.create(account.id, { name: "bench campus", nas_ip: "127.0.0.1" });
  await core.groups.create(account.id, { name: "staff" });
  const mappings = [{ idp_group: "staff-all", group: "staff" }];
  const oidc = await core.idp.create(account.id, {
    name: "op",
    kind: "oidc",
    issuer: op.issuer,
    client_id: op.clientId,
    client_secret: op.clientSecret,
    scopes: "openid email profile groups",
    group_claim: "groups",
    group_mappings: mappings,
  });
  if (oidc.id !== 1) throw new BenchError("the OpenID Provider knows the redirect URI of provider 1 only");
  const samlProvider = await core.idp.create(account.id, {
    name: "saml",
    kind: "saml",
    metadata: saml.metadata,
    group_attribute: "groups",
    group_mappings: mappings,
  });
  const portal = await core.portals.create(account.id, {
    name: "bench idp",
    network_id: network.network.id,
    vendor: "mikrotik",
    methods: ["idp", "clickthrough"],
    identity_providers: [oidc.id, samlProvider.id],
  });
  await database.close();
  const wisp = await startWisp(dir, port);
  onCleanup(() => void stopChild(wisp.child));

  let n = 0;
  async function oidcSignIn(): Promise<number> {
    const guest = await guestAt(base, portal.id, ++n);
    const login = `guest-${n}`;
    op.accounts.set(login, { email: `${login}@uni.example`, email_verified: true, groups: ["staff-all"] });
    const start = idpLink(await (await guest.press(`/portal/${portal.id}/idp/${oidc.id}`)).text());
    const callback = await stepsToCallback(guest.jar, start, login, `${base}/portal/idp/${oidc.id}/callback`);
    const t0 = performance.now();
    await toHandoff(guest.jar, base, await guest.jar.fetch(callback));
    return performance.now() - t0;
  }
  async function samlSignIn(): Promise<number> {
    const guest = await guestAt(base, portal.id, ++n);
    const start = idpLink(await (await guest.press(`/portal/${portal.id}/idp/${samlProvider.id}`)).text());
    const request = saml.parseRedirect(start);
    const body = new URLSearchParams({
      SAMLResponse: saml.response({
        request,
        nameId: `saml-guest-${n}`,
        attributes: { groups: ["staff-all"] },
      }),
      RelayState: request.relayState,
    });
    const t0 = performance.now();
    const acs = await guest.jar.fetch(`${base}/portal/idp/${samlProvider.id}/acs`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
    });
    await toHandoff(guest.jar, base, acs);
    return performance.now() - t0;
  }
  async function clickthrough(): Promise<number> {
    const guest = await guestAt(base, portal.id, ++n);
    const t0 = performance.now();
    const answer = await guest.press(`/portal/${portal.id}`, { method: "clickthrough", terms: "yes" });
    const html = await answer.text();
    if (answer.status !== 200 || !html.includes('<form id="handoff"'))
      throw new BenchError(`click-through answered ${answer.status}: ${html.slice(0, 200)}`);
    return performance.now() - t0;
  }

  const runs: Record<string, () => Promise<number>> = {
    oidc: oidcSignIn,
    saml: samlSignIn,
    clickthrough,
  };
  const results: Record<string, ReturnType<typeof summary>> = {};
  for (const [name, run] of Object.entries(runs)) {
    for (let i = 0; i < WARMUP; i++) await run();
    const times: number[] = [];
    for (let i = 0; i < signins; i++) times.push(await run());
    results[name] = summary(times);
  }
  const r = results as Record<"oidc" | "saml" | "clickthrough", ReturnType<typeof summary>>;
  console.log(`identity provider sign-in, ${signins} guests one after another (each a new user):`);
  console.log(line("OIDC: IdP redirect back -> hand-off", r.oidc));
  console.log(line("SAML: IdP POST to the ACS -> hand-off", r.saml));
  console.log(line("baseline: click-through POST -> hand-off", r.clickthrough));
  writeResults("idp", { date: new Date().toISOString(), settings: { signins }, ...results });
}

installExitHandlers();
runBench(main);
