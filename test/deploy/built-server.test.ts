// The server as `npm start` runs it: the build (`npm run build`, made once per `npm test`), then
// dist/main.js installed as the production image holds it (no sources beside it), on SQLite in a
// temporary folder, set up with the built `wisp`. Each door gets the requests its src/ suites send
// (REST, console, portal, RADIUS with a data quota and an EAP login), so a file the build leaves
// out fails here rather than in production. Then copies of the installation with one shipped file
// removed must refuse to start, in one line.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { VIEW_NAMES } from "../../src/console/views.ts";
import { accessRequestPap, sendRadius } from "../../src/radius/client.ts";
import type { AttributeInput } from "../../src/radius/packet.ts";
import { attribute, eventually } from "../support/accounting.ts";
import { ConsoleClient } from "../support/browser.ts";
import { type InstalledBuild, installedBuild } from "../support/build.ts";
import { startTestDas, type TestDas } from "../support/das.ts";
import { tempDir } from "../support/databases.ts";
import { eapolTest, eapolTestUnavailable } from "../support/eapol.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import {
  builtWisp,
  type Env,
  type ProcessResult,
  ROOT,
  request,
  runBuiltServerToExit,
  type ServerProcess,
  startBuiltServerProcess,
} from "../support/processes.ts";
import { startSamlIdp } from "../support/saml-idp.ts";
import { PEOPLE, SERVICE_DN, SERVICE_PASSWORD, startSlapd } from "../support/slapd.ts";

const SECRET = "built-Secret-22";
const EMAIL = "ops@example.com";
const CONSOLE_PASSWORD = "built console password";
const USER_PASSWORD = "pw-built-22";

/** Answers may be slow on a busy machine: wait long rather than retransmit. */
const RADIUS_WAIT = { host: "127.0.0.1", secret: SECRET, timeoutMs: 15_000, retries: 0 };

const describeRun = (result: ProcessResult) =>
  `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;

test("the templates loaded at start are every template in src/console/views", () => {
  const files = fs
    .readdirSync(path.join(ROOT, "src", "console", "views"))
    .map((file) => file.replace(/\.eta$/, ""))
    .sort();
  assert.deepEqual([...VIEW_NAMES].sort(), files);
});

describe("the built server (npm run build, then dist/main.js)", () => {
  let built: InstalledBuild;
  let dataDir: string;
  let env: Env;
  let server: ServerProcess | undefined;
  let das: TestDas;
  let key: string;
  let authPort: number;
  let acctPort: number;
  const cli = async (...args: string[]) => {
    const result = await builtWisp(built.dir, args, env);
    assert.equal(result.code, 0, describeRun(result));
    return result.stdout.trim();
  };
  const api = (method: string, url: string, body: unknown) =>
    request(`${server!.url}${url}`, { method, key, body });
  /** A PEAP login of the EAP test's user, checked against the CA the built CLI printed (ca.pem). */
  const peapOn = (port: number) =>
    eapolTest({
      port,
      secret: SECRET,
      raw: { eap: "PEAP" },
      network: {
        identity: "eap-built",
        anonymous_identity: "anonymous@example.org",
        password: USER_PASSWORD,
        phase2: "autheap=MSCHAPV2",
        ca_cert: path.join(dataDir, "ca.pem"),
      },
      timeoutSeconds: 30,
    });

  before(async () => {
    built = await installedBuild("built-server");
    if (built.built) console.log("dist/ is not current: built it in a copy of the checkout");
    dataDir = tempDir("built-data");
    [authPort, acctPort] = [await freeUdpPort(), await freeUdpPort()];
    env = {
      DATA_DIR: dataDir,
      RADIUS_HOST: "127.0.0.1",
      RADIUS_AUTH_PORT: String(authPort),
      RADIUS_ACCT_PORT: String(acctPort),
      // The directories' LDAP clients on their worker thread (dist/core/directories/ldap-worker.js).
      DIRECTORY_WORKER: "1",
      // EAP's TLS on the OpenSSL addon the build compiled (dist/radius/eap/native/): without that
      // file the server refuses to start.
      EAP_TLS_ENGINE: "openssl",
    };
    das = await startTestDas(SECRET);
    // Set up as an operator would, with the built CLI, before the server starts.
    await cli("admins", "create", "--email", EMAIL, "--password", CONSOLE_PASSWORD);
    key = await cli("keys", "create", "--name", "built");
    await cli(
      ...["networks", "create", "--name", "lab", "--nas-ip", "127.0.0.1", "--secret", SECRET],
      ...["--coa", "--coa-port", String(das.port), "--interim-interval", "120"],
    );
    await cli("portals", "create", "--name", "Lobby", "--network", "1", "--vendor", "mikrotik");
    server = await startBuiltServerProcess(built.dir, env, 60_000);
  });

  after(async () => {
    await server?.stop();
    await das?.close();
    built?.remove();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test("REST: a user, and Wisp's own data-quota attribute from its dictionary", async () => {
    const user = await api("POST", "/api/users", { username: "q-built", password: USER_PASSWORD });
    assert.equal(user.status, 201, user.text);
    const quota = await api("POST", "/api/attributes", {
      userid: user.body.id,
      table: "radcheck",
      attribute: "wisp-max-all-octets",
      operator: ":=",
      value: "5000",
    });
    assert.equal(quota.status, 201, quota.text);
    assert.equal(quota.body.attribute, "Wisp-Max-All-Octets", "stored with the dictionary's spelling");
    // The API's document and its viewer, whose files @fastify/swagger-ui reads from node_modules.
    const spec = await request(`${server!.url}/api/openapi.json`);
    assert.equal(spec.status, 200);
    assert.ok(spec.body.paths["/api/attributes"], "the document lists /api/attributes");
    const viewer = await fetch(`${server!.url}/docs`);
    assert.equal(viewer.status, 200);
    const files = [...(await viewer.text()).matchAll(/(?:href|src)="(\/docs\/static\/[^"]+)"/g)].map(
      (m) => m[1]!,
    );
    assert.ok(files.includes("/docs/static/swagger-ui-bundle.js"), files.join(", "));
    for (const file of files) assert.equal((await fetch(`${server!.url}${file}`)).status, 200, file);
  });

  test("RADIUS: PAP over UDP sends what remains of the data quota, and refuses it once used up", async () => {
    const account = async (status: string, extra: AttributeInput[] = []) => {
      const answer = await sendRadius({
        ...RADIUS_WAIT,
        port: acctPort,
        code: "Accounting-Request",
        attributes: [
          ["User-Name", "q-built"],
          ["Acct-Session-Id", "built-1"],
          ["Acct-Status-Type", status],
          ["NAS-IP-Address", "127.0.0.1"],
          ["Calling-Station-Id", "02-00-00-00-22-01"],
          ...extra,
        ],
      });
      assert.equal(answer.type, "Accounting-Response");
    };
    const login = (user: string, password: string) =>
      sendRadius({ ...RADIUS_WAIT, port: authPort, ...accessRequestPap(user, password) });
    await account("Start");
    await account("Interim-Update", [
      ["Acct-Input-Octets", 3000],
      ["Acct-Output-Octets", 1000],
      ["Acct-Session-Time", 30],
    ]);
    const accept = await login("q-built", USER_PASSWORD);
    assert.equal(accept.type, "Access-Accept");
    assert.equal(attribute(accept, "ChilliSpot-Max-Total-Octets"), "1000");
    assert.equal(attribute(accept, "Mikrotik-Total-Limit"), "1000");
    assert.equal(attribute(accept, "Acct-Interim-Interval"), "120");

    // The built CLI's `radius test` encodes and decodes with the build's dictionary too.
    const tested = await builtWisp(
      built.dir,
      ["radius", "test", "q-built", "--password-stdin", "--network", "1", "--timeout", "15000"],
      env,
      `${USER_PASSWORD}\n`,
    );
    assert.equal(tested.code, 0, describeRun(tested));
    assert.match(tested.stdout, /Access-Accept/);
    assert.match(tested.stdout, /ChilliSpot-Max-Total-Octets\s.*1000/);

    // The next Interim-Update uses it up: the built worker disconnects the session (RFC 5176).
    await account("Interim-Update", [
      ["Acct-Input-Octets", 4000],
      ["Acct-Output-Octets", 1000],
      ["Acct-Session-Time", 60],
    ]);
    const disconnect = await eventually(async () => das.requests[0], 60_000);
    assert.equal(disconnect.packet.code, 40, "a Disconnect-Request");
    assert.equal(disconnect.attribute("Acct-Session-Id"), "built-1");
    const reject = await login("q-built", USER_PASSWORD);
    assert.equal(reject.type, "Access-Reject");
    assert.equal(attribute(reject, "Reply-Message"), "quota exhausted: total data");
  });

  test("console: log in and load pages rendered from the templates, with their static files", async () => {
    const client = new ConsoleClient(server!.url);
    const form = await client.get("/console/login");
    assert.equal(form.status, 200);
    assert.match(form.text, /<form[^>]*action="\/console\/login"/);
    assert.equal((await client.login(EMAIL, CONSOLE_PASSWORD)).status, 303);
    const users = await client.get("/console/users");
    assert.equal(users.status, 200, users.text);
    assert.match(users.text, /q-built/);
    const user = await client.get("/console/users/1");
    assert.equal(user.status, 200, user.text);
    assert.match(user.text, /Wisp-Max-All-Octets/);
    const assets = [...users.text.matchAll(/(?:href|src)="(\/console\/static\/[^"]+)"/g)].map((m) => m[1]!);
    assert.equal(assets.length, 2, `the stylesheet and the script: ${assets.join(", ")}`);
    // The sign-in security page also loads the passkey scripts (@simplewebauthn/browser's build).
    const security = await client.get("/console/security");
    assert.equal(security.status, 200, security.text);
    const scripts = [...security.text.matchAll(/(?:href|src)="(\/console\/static\/[^"]+)"/g)].map(
      (m) => m[1]!,
    );
    for (const name of ["webauthn.js", "passkeys.js"])
      assert.ok(
        scripts.some((a) => a.startsWith(`/console/static/${name}?`)),
        `${name}: ${scripts.join(", ")}`,
      );
    for (const asset of [...assets, ...scripts]) {
      const response = await fetch(`${server!.url}${asset.replace(/&amp;/g, "&")}`);
      assert.equal(response.status, 200, asset);
      assert.ok((await response.arrayBuffer()).byteLength > 0, asset);
    }
  });

  test("portal: a guest page and a voucher's hand-off page, with their static files", async () => {
    const voucher = await api("POST", "/api/vouchers", { validity: 600 });
    assert.equal(voucher.status, 201, voucher.text);
    const guest = new ConsoleClient(server!.url);
    const query = new URLSearchParams({
      "link-login-only": "http://10.5.50.1/login",
      mac: "02:00:00:00:22:02",
      ip: "10.5.50.7",
    });
    const page = await guest.get(`/portal/1?${query}`);
    assert.equal(page.status, 200, page.text);
    assert.match(page.text, /Lobby/);
    const gw = /name="gw" value="([^"]*)"/.exec(page.text)?.[1]?.replace(/&amp;/g, "&");
    assert.ok(gw, page.text);
    const handoff = await guest.post("/portal/1", { method: "voucher", code: voucher.body.code, gw });
    assert.equal(handoff.status, 200, handoff.text);
    assert.match(handoff.text, /<form id="handoff" method="post" action="http:\/\/10\.5\.50\.1\/login">/);
    const assets = [page.text, handoff.text].flatMap((html) =>
      [...html.matchAll(/(?:href|src)="(\/portal\/static\/[^"]+)"/g)].map((m) =>
        m[1]!.replace(/&amp;/g, "&"),
      ),
    );
    for (const file of ["portal.css", "handoff.js"]) {
      assert.ok(
        assets.some((a) => a.startsWith(`/portal/static/${file}?`)),
        `${file} in ${assets.join(", ")}`,
      );
    }
    for (const asset of assets) {
      const response = await fetch(`${server!.url}${asset}`);
      assert.equal(response.status, 200, asset);
      assert.ok((await response.arrayBuffer()).byteLength > 0, asset);
    }
  });

  test("SAML: a provider from its IdP metadata, and Wisp's SP metadata (libraries loaded on first use)", async () => {
    // metadata.ts (xmldom) and saml-library.ts (node-saml) are chunks of their own, imported when
    // first needed: this is where a chunk the build left out, or a CommonJS wrapper, would fail.
    const idp = await startSamlIdp();
    try {
      const created = await api("POST", "/api/identityproviders", {
        name: "built-saml",
        kind: "saml",
        display_name: "City SSO",
        // https: as a production provider's (the test IdP is never reached here).
        metadata: idp.metadata.replaceAll('Location="http://', 'Location="https://'),
      });
      assert.equal(created.status, 201, created.text);
      const sp = await fetch(`${server!.url}/portal/idp/${created.body.id}/metadata`);
      assert.equal(sp.status, 200);
      const xml = await sp.text();
      assert.match(xml, /EntityDescriptor/);
      assert.match(xml, /AssertionConsumerService/);
    } finally {
      await idp.close();
    }
  });

  test("EAP: PEAP logins checked against the CA the built CLI prints, TLS in the main thread and on the built TLS worker", {
    skip: eapolTestUnavailable() ?? false,
  }, async () => {
    const user = await api("POST", "/api/users", { username: "eap-built", password: USER_PASSWORD });
    assert.equal(user.status, 201, user.text);
    fs.writeFileSync(path.join(dataDir, "ca.pem"), await cli("certs", "ca"));
    const peap = await peapOn(authPort);
    assert.ok(peap.success && peap.mppeOk, peap.output.slice(-2000));
    // A second server on the same database with its TLS on a worker thread, the default on more
    // than 2 cores: dist/radius/eap/tls-worker.js loads the addon from dist too.
    const workerPort = await freeUdpPort();
    const withWorker = await startBuiltServerProcess(
      built.dir,
      { ...env, EAP_TLS_WORKERS: "1", RADIUS_AUTH_PORT: String(workerPort), RADIUS_ACCT_PORT: "0" },
      60_000,
    );
    try {
      const onWorker = await peapOn(workerPort);
      assert.ok(onWorker.success && onWorker.mppeOk, onWorker.output.slice(-2000));
    } finally {
      await withWorker.stop();
    }
  });

  test("LDAP: a directory user's PAP login, the directory's client on the built worker thread", async () => {
    const slapd = await startSlapd({ users: [{ uid: "ldap-built", password: "Ldap-built-1" }] });
    try {
      const created = await api("POST", "/api/directories", {
        name: "built-corp",
        servers: [slapd.url],
        bind_dn: SERVICE_DN,
        bind_password: SERVICE_PASSWORD,
        user_base: PEOPLE,
        user_filter: "(objectClass=inetOrgPerson)",
      });
      assert.equal(created.status, 201, created.text);
      const pap = (password: string) =>
        sendRadius({ ...RADIUS_WAIT, port: authPort, ...accessRequestPap("ldap-built", password) });
      assert.equal((await pap("Ldap-built-1")).code, 2, "Access-Accept");
      assert.equal((await pap("wrong")).code, 3, "Access-Reject");
      // The server's state as the worker thread told it.
      const shown = await api("GET", `/api/directories/${created.body.id}`, undefined);
      assert.equal(shown.body.server_status[0].state, "closed", shown.text);
      const health = await request(`${server!.url}/healthz`);
      assert.equal(health.body.directories?.[0]?.state, "ok", health.text);
    } finally {
      await slapd.stop();
    }
  });

  describe("a build with a shipped file missing refuses to start, in one line", () => {
    let broken: string;
    before(() => {
      broken = tempDir("built-broken");
      // node_modules stays a link (cpSync copies links as links).
      fs.cpSync(built.dir, broken, { recursive: true });
    });
    after(() => fs.rmSync(broken, { recursive: true, force: true }));

    for (const [file, what] of [
      ["core/aaa/dictionary.wisp", "the RADIUS dictionary file"],
      ["console/views/login.eta", "the console template"],
      ["console/views/field.eta", "the console template"],
      ["portal/static/portal.css", "the portal's static file"],
    ] as const) {
      test(`without dist/${file}`, async () => {
        const target = path.join(broken, "dist", file);
        const saved = fs.readFileSync(target);
        fs.rmSync(target);
        const data = tempDir("built-broken-data");
        try {
          const result = await runBuiltServerToExit(broken, {
            DATA_DIR: data,
            PORT: "0",
            HOST: "127.0.0.1",
            RADIUS_AUTH_PORT: "0",
          });
          assert.equal(result.code, 1, describeRun(result));
          assert.equal(
            result.stderr,
            `wisp: cannot read ${what} ${target}: it is missing; the installation is incomplete ` +
              "(run npm run build, or reinstall)\n",
          );
        } finally {
          fs.writeFileSync(target, saved);
          fs.rmSync(data, { recursive: true, force: true });
        }
      });
    }

    test("without dist/radius/eap/native/openssl-tunnel.node: auto falls back to node's TLS, with a warning; openssl refuses", {
      skip: eapolTestUnavailable() ?? false,
    }, async () => {
      const target = path.join(broken, "dist", "radius", "eap", "native", "openssl-tunnel.node");
      const saved = fs.readFileSync(target);
      fs.rmSync(target);
      try {
        const refused = await runBuiltServerToExit(broken, { ...env, EAP_TLS_ENGINE: "openssl", PORT: "0" });
        assert.equal(refused.code, 1, describeRun(refused));
        assert.match(
          refused.stderr,
          /^wisp: configuration error: EAP_TLS_ENGINE is openssl, but its addon does not load/,
        );
        const port = await freeUdpPort();
        const fallback = await startBuiltServerProcess(
          broken,
          { ...env, EAP_TLS_ENGINE: "auto", RADIUS_AUTH_PORT: String(port), RADIUS_ACCT_PORT: "0" },
          60_000,
        );
        try {
          const warned = fallback.log().find((line) => /EAP TLS on node's TLS sockets/.test(line.msg ?? ""));
          assert.ok(warned, "the start says why EAP runs on node's TLS sockets");
          const peap = await peapOn(port);
          assert.ok(peap.success && peap.mppeOk, peap.output.slice(-2000));
        } finally {
          await fallback.stop();
        }
      } finally {
        fs.writeFileSync(target, saved);
      }
    });

    test("the built CLI and worker say so too, when they need the dictionary", async () => {
      const target = path.join(broken, "dist", "core", "aaa", "dictionary.wisp");
      const saved = fs.readFileSync(target);
      fs.rmSync(target);
      const data = tempDir("built-broken-data");
      try {
        // radius test on the server's database (it has the network); the worker on one of its own.
        for (const [args, database] of [
          [
            ["radius", "test", "q-built", USER_PASSWORD, "--port", String(authPort), "--timeout", "1000"],
            env,
          ],
          [["worker"], { DATA_DIR: data }],
        ] as const) {
          const result = await builtWisp(broken, [...args], database);
          assert.equal(result.code, 1, `${args[0]}: ${describeRun(result)}`);
          assert.equal(
            result.stderr,
            `wisp: cannot read the RADIUS dictionary file ${target}: it is missing; the installation is ` +
              "incomplete (run npm run build, or reinstall)\n",
            args[0],
          );
        }
      } finally {
        fs.writeFileSync(target, saved);
        fs.rmSync(data, { recursive: true, force: true });
      }
    });
  });
});
