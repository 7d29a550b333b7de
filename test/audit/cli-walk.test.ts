// The audit log through the CLI, command by command (issue 29 point 3): every `wisp` command of the
// CLI's own tree (src/cli/program.ts) is either a read (in its READ_ONLY registry: run here, it must
// leave no audit row), a long-running process (EXEMPT, with the reason), or walked below: run once
// in-process with valid arguments, it must leave exactly the rows its WALKS entry lists, each naming
// the operating-system user (actor "cli", address "local"), with no secret unmasked. A command added
// later fails here until it is listed. Real processes of the build are test/audit/cli.test.ts's part.
import assert from "node:assert/strict";
import fs from "node:fs";
import { userInfo } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, test } from "node:test";
import Sqlite from "better-sqlite3";
import { buildProgram, leafCommands, READ_ONLY } from "../../src/cli/program.ts";
import { loadConfig } from "../../src/config.ts";
import { MASK } from "../../src/core/audit/mask.ts";
import { createAuthority } from "../../src/core/certs/x509.ts";
import { type Core, createCore } from "../../src/core/index.ts";
import type { Database } from "../../src/db/database.ts";
import { openMigratedDatabase } from "../../src/startup.ts";
import { startTestDas, type TestDas } from "../support/das.ts";
import { createTestDatabase, dialects, type TestDatabase } from "../support/databases.ts";
import { RETENTION_OFF } from "../support/processes.ts";

/** Commands that run until stopped: they change nothing themselves (what they serve is walked elsewhere). */
const EXEMPT: Record<string, string> = {
  serve: "runs the HTTP and RADIUS server: its writes are the API and console walks'",
  prune:
    "deletes history past its retention period, as the worker does hourly (the audit log's own rule): no change to record",
  worker: "runs background jobs: their rows name the worker (test/audit/webhooks.test.ts, retention)",
};

/** A row the command must leave: resource/action, and its resource_id when the walk knows it. */
interface Row {
  resource: string;
  action: string;
  id?: string;
}

interface Run {
  args: string[];
  /** Standard input (passwords the command reads there). */
  stdin?: string;
  /** Exactly these rows, in order; none for a read. */
  rows: Row[];
  /** Secrets given to the command that no row may hold in clear. */
  secrets?: string[];
  /** The exit code it sets on purpose (a failure it reports and records). */
  exitCode?: number;
}

interface Context {
  core: Core;
  accountId: number;
  dir: string;
  das: TestDas;
  /** Runs a command as set-up (its rows are not counted). */
  setup(args: string[], stdin?: string): Promise<string>;
}

type Fixture = (c: Context) => Promise<Run>;

let serial = 0;
const unique = (prefix: string) => `${prefix}${++serial}`;
const mac = () => `02:00:00:00:01:${(++serial % 256).toString(16).padStart(2, "0")}`;
const DAS_SECRET = "walk-das-secret";

async function network(c: Context, extra: string[] = []): Promise<string> {
  const name = unique("site");
  await c.setup(["networks", "create", "--name", name, "--nas-ip", "", ...extra]);
  const list = await c.core.networks.list(c.accountId, {}, { page: 1, limit: 500 });
  return String(list.data.find((n) => n.name === name)!.id);
}

async function webhook(c: Context): Promise<string> {
  await c.setup(["webhooks", "create", "--url", "https://hooks.example.com/walk"]);
  const list = await c.core.webhooks.list(c.accountId);
  return String(list.at(-1)!.id);
}

async function caFile(c: Context): Promise<string> {
  const file = path.join(c.dir, `${unique("ca")}.pem`);
  fs.writeFileSync(file, (await createAuthority("Outside RadSec CA", 365)).cert);
  return file;
}

const WALKS: Record<string, Fixture> = {
  "accounts create": async () => ({
    args: ["accounts", "create", unique("tenant")],
    rows: [{ resource: "account", action: "create" }],
  }),
  "keys create": async () => ({
    args: ["keys", "create", "--name", unique("walk key"), "--permissions", "read"],
    rows: [{ resource: "api_key", action: "create" }],
  }),
  "keys revoke": async (c) => {
    await c.setup(["keys", "create", "--name", "to revoke"]);
    const id = String((await c.core.keys.list()).at(-1)!.id);
    return { args: ["keys", "revoke", id], rows: [{ resource: "api_key", action: "revoke", id }] };
  },
  "demo seed": async (c) => {
    const account = unique("demo");
    await c.setup(["accounts", "create", account]);
    return {
      args: ["demo", "seed", "--account", account, "--days", "1", "--users", "3", "--aps", "2"],
      rows: [{ resource: "demo", action: "seed" }],
    };
  },
  "admins create": async () => ({
    args: ["admins", "create", "--email", `${unique("walker")}@example.com`, "--password-stdin"],
    stdin: "an admin walk password",
    rows: [{ resource: "admin", action: "create" }],
    secrets: ["an admin walk password"],
  }),
  "admins reset-password": async (c) => {
    const email = `${unique("reset")}@example.com`;
    await c.setup(["admins", "create", "--email", email]);
    return {
      args: ["admins", "reset-password", "--email", email, "--password", "another walk password"],
      rows: [{ resource: "admin", action: "reset_password" }],
      secrets: ["another walk password"],
    };
  },
  "admins reset-second-factor": async (c) => {
    const email = `${unique("factor")}@example.com`;
    await c.setup(["admins", "create", "--email", email]);
    return {
      args: ["admins", "reset-second-factor", "--email", email],
      rows: [{ resource: "second_factors", action: "delete" }],
    };
  },
  "webhooks create": async () => ({
    args: ["webhooks", "create", "--url", "https://hooks.example.com/created", "--events", "user.created"],
    rows: [{ resource: "webhook", action: "create" }],
  }),
  "webhooks update": async (c) => {
    const id = await webhook(c);
    return {
      args: ["webhooks", "update", id, "--disable"],
      rows: [{ resource: "webhook", action: "update", id }],
    };
  },
  "webhooks rotate-secret": async (c) => {
    const id = await webhook(c);
    return {
      args: ["webhooks", "rotate-secret", id],
      rows: [{ resource: "webhook", action: "rotate_secret", id }],
    };
  },
  "webhooks delete": async (c) => {
    const id = await webhook(c);
    return { args: ["webhooks", "delete", id], rows: [{ resource: "webhook", action: "delete", id }] };
  },
  "webhooks test": async (c) => {
    const id = await webhook(c);
    return {
      args: ["webhooks", "test", id, "--no-wait"],
      rows: [{ resource: "webhook", action: "test", id }],
    };
  },
  "webhooks resend": async (c) => {
    const id = await webhook(c);
    await c.setup(["webhooks", "test", id, "--no-wait"]);
    const [delivery] = await c.core.webhooks.deliveries(c.accountId, Number(id), 1);
    return {
      args: ["webhooks", "resend", String(delivery!.id)],
      rows: [{ resource: "webhook_delivery", action: "resend", id: String(delivery!.id) }],
    };
  },
  "networks create": async () => ({
    args: [
      "networks",
      "create",
      "--name",
      unique("net"),
      "--nas-ip",
      "10.20.0.0/24",
      "--secret",
      "a-net-secret",
    ],
    rows: [{ resource: "network", action: "create" }],
    secrets: ["a-net-secret"],
  }),
  "networks update": async (c) => {
    const id = await network(c);
    return {
      args: ["networks", "update", id, "--description", "walked", "--secret", "new-net-secret"],
      rows: [{ resource: "network", action: "update", id }],
      secrets: ["new-net-secret"],
    };
  },
  "networks rotate-secret": async (c) => {
    const id = await network(c);
    return {
      args: ["networks", "rotate-secret", id],
      rows: [{ resource: "network", action: "rotate_secret", id }],
    };
  },
  "networks delete": async (c) => {
    const id = await network(c);
    return { args: ["networks", "delete", id], rows: [{ resource: "network", action: "delete", id }] };
  },
  "networks radsec issue": async (c) => {
    const id = await network(c);
    return {
      args: ["networks", "radsec", "issue", id, "--out", path.join(c.dir, `${unique("nas")}.p12`)],
      stdin: "a p12 walk password",
      rows: [{ resource: "radsec_certificate", action: "create" }],
      secrets: ["a p12 walk password"],
    };
  },
  "networks radsec revoke": async (c) => {
    const id = await network(c);
    const serialNumber = await c.setup(
      ["networks", "radsec", "issue", id, "--out", path.join(c.dir, `${unique("nas")}.p12`)],
      "a p12 walk password",
    );
    return {
      args: ["networks", "radsec", "revoke", id, serialNumber.trim()],
      rows: [{ resource: "radsec_certificate", action: "revoke" }],
    };
  },
  "networks radsec trust": async (c) => {
    const id = await network(c);
    const ca = await caFile(c);
    return {
      args: ["networks", "radsec", "trust", id, "--ca", ca, "--match", "cn", "--pattern", "ap*"],
      rows: [{ resource: "radsec_ca", action: "update", id }],
    };
  },
  "networks radsec untrust": async (c) => {
    const id = await network(c);
    const ca = await caFile(c);
    await c.setup(["networks", "radsec", "trust", id, "--ca", ca, "--match", "cn", "--pattern", "ap*"]);
    return {
      args: ["networks", "radsec", "untrust", id],
      rows: [{ resource: "radsec_ca", action: "delete", id }],
    };
  },
  "portals create": async (c) => ({
    args: [
      ...["portals", "create", "--name", unique("portal"), "--network", await network(c)],
      ...["--vendor", "coovachilli", "--uam-secret", "a-uam-walk-secret"],
    ],
    rows: [{ resource: "portal", action: "create" }],
    secrets: ["a-uam-walk-secret"],
  }),
  "portals update": async (c) => {
    const id = await portal(c);
    return {
      args: ["portals", "update", id, "--title", "Walked"],
      rows: [{ resource: "portal", action: "update", id }],
    };
  },
  "portals delete": async (c) => {
    const id = await portal(c);
    return { args: ["portals", "delete", id], rows: [{ resource: "portal", action: "delete", id }] };
  },
  "certs ca": async (c) => ({
    args: ["certs", "ca", "--out", path.join(c.dir, `${unique("ca")}.pem`)],
    rows: [],
  }),
  "certs issue": async (c) => ({
    args: ["certs", "issue", await certUser(c), "--out", path.join(c.dir, `${unique("client")}.p12`)],
    stdin: "a client p12 password",
    rows: [{ resource: "client_certificate", action: "create" }],
    secrets: ["a client p12 password"],
  }),
  "certs revoke": async (c) => {
    const out = path.join(c.dir, `${unique("client")}.p12`);
    const issue = ["certs", "issue", await certUser(c), "--out", out];
    const number = (await c.setup(issue, "a client p12 password")).trim();
    return {
      args: ["certs", "revoke", number],
      rows: [{ resource: "client_certificate", action: "revoke" }],
    };
  },
  "sessions disconnect": async (c) => {
    const id = await session(c);
    return {
      args: ["sessions", "disconnect", id],
      rows: [{ resource: "session", action: "disconnect", id }],
    };
  },
  "idp create": async () => ({
    args: [
      ...["idp", "create", unique("idp"), "--kind", "oidc", "--display-name", "Campus"],
      ...[
        "--issuer",
        "https://login.example.edu/",
        "--client-id",
        "wisp",
        "--client-secret",
        "an idp secret",
      ],
    ],
    rows: [{ resource: "identity_provider", action: "create" }],
    secrets: ["an idp secret"],
  }),
  "idp update": async (c) => {
    const name = await provider(c);
    return {
      args: ["idp", "update", name, "--display-name", "Walked", "--client-secret", "another idp secret"],
      rows: [{ resource: "identity_provider", action: "update" }],
      secrets: ["another idp secret"],
    };
  },
  "idp delete": async (c) => ({
    args: ["idp", "delete", await provider(c)],
    rows: [{ resource: "identity_provider", action: "delete" }],
  }),
  "idp password-login": async () => ({
    args: ["idp", "password-login", "on"],
    rows: [{ resource: "account", action: "update" }],
  }),
  "devices add": async () => ({
    args: ["devices", "add", mac(), "--name", "walked"],
    rows: [{ resource: "device", action: "create" }],
  }),
  "devices update": async (c) => {
    const address = mac();
    await c.setup(["devices", "add", address]);
    return {
      args: ["devices", "update", address, "--name", "renamed"],
      rows: [{ resource: "device", action: "update" }],
    };
  },
  "devices remove": async (c) => {
    const address = mac();
    await c.setup(["devices", "add", address]);
    return { args: ["devices", "remove", address], rows: [{ resource: "device", action: "delete" }] };
  },
  "devices import": async (c) => {
    const file = path.join(c.dir, `${unique("devices")}.csv`);
    fs.writeFileSync(file, `mac,name\n${mac()},one\n${mac()},two\n`);
    return { args: ["devices", "import", file], rows: [{ resource: "device_import", action: "import" }] };
  },
  "policy create": async () => ({
    args: ["policy", "create", "--name", unique("policy"), "--reject", "walked"],
    rows: [{ resource: "policy", action: "create" }],
  }),
  "policy update": async (c) => {
    const name = await policy(c);
    return {
      args: ["policy", "update", name, "--description", "walked"],
      rows: [{ resource: "policy", action: "update" }],
    };
  },
  "policy delete": async (c) => ({
    args: ["policy", "delete", await policy(c)],
    rows: [{ resource: "policy", action: "delete" }],
  }),
  "policy move": async (c) => {
    await policy(c);
    return { args: ["policy", "move", await policy(c), "1"], rows: [{ resource: "policy", action: "move" }] };
  },
  "import freeradius": async (c) => ({
    args: ["import", "freeradius", `sqlite:${freeradiusSource(c)}`],
    rows: [{ resource: "import", action: "import" }],
  }),
  "plans create": async () => ({
    args: ["plans", "create", "--name", unique("plan"), "--download", "2048"],
    rows: [{ resource: "plan", action: "create" }],
  }),
  "plans update": async (c) => ({
    args: ["plans", "update", await plan(c), "--upload", "512"],
    rows: [{ resource: "plan", action: "update" }],
  }),
  "plans delete": async (c) => ({
    args: ["plans", "delete", await plan(c)],
    rows: [{ resource: "plan", action: "delete" }],
  }),
  "plans assign": async (c) => {
    const group = unique("walkers");
    await c.core.groups.create(c.accountId, { name: group });
    return {
      args: ["plans", "assign", await plan(c), "--group", group],
      rows: [{ resource: "group", action: "update" }],
    };
  },
  "directory create": async () => ({
    args: [...directoryArgs("create", unique("corp")), "--bind-password", "a bind walk password"],
    rows: [{ resource: "directory", action: "create" }],
    secrets: ["a bind walk password"],
  }),
  "directory update": async (c) => ({
    args: ["directory", "update", await directory(c), "--bind-password", "another bind password"],
    rows: [{ resource: "directory", action: "update" }],
    secrets: ["another bind password"],
  }),
  "directory delete": async (c) => ({
    args: ["directory", "delete", await directory(c)],
    rows: [{ resource: "directory", action: "delete" }],
  }),
  "directory sync": async (c) => ({
    args: ["directory", "sync", await directory(c)],
    rows: [{ resource: "directory", action: "sync" }],
    // Nobody listens on the directory's port: the sync fails, says so (exit 1), and is recorded.
    exitCode: 1,
  }),
};

/** Read commands, each with arguments naming something that exists: they must leave no row. */
const READS: Record<string, (c: Context) => Promise<string[]>> = {
  "accounts list": async () => ["accounts", "list"],
  "keys list": async () => ["keys", "list"],
  "admins list": async () => ["admins", "list"],
  "networks list": async () => ["networks", "list"],
  "networks show": async (c) => ["networks", "show", await network(c)],
  "networks radsec show": async (c) => ["networks", "radsec", "show", await network(c)],
  "portals list": async () => ["portals", "list"],
  "webhooks list": async () => ["webhooks", "list"],
  "webhooks deliveries": async (c) => ["webhooks", "deliveries", await webhook(c)],
  "radius test": async () => ["radius", "test", "nobody", "x", "--port", "9", "--timeout", "200"],
  "certs list": async () => ["certs", "list"],
  "sessions list": async () => ["sessions", "list"],
  "sessions show": async (c) => ["sessions", "show", await session(c)],
  "idp list": async () => ["idp", "list"],
  "idp show": async (c) => ["idp", "show", await provider(c)],
  "devices list": async () => ["devices", "list"],
  "devices show": async (c) => {
    const address = mac();
    await c.setup(["devices", "add", address]);
    return ["devices", "show", address];
  },
  "devices export": async (c) => ["devices", "export", "--output", path.join(c.dir, `${unique("out")}.csv`)],
  "policy list": async () => ["policy", "list"],
  "policy show": async (c) => ["policy", "show", await policy(c)],
  "policy explain": async (c) => ["policy", "explain", "--network", await network(c), "--user", "nobody"],
  "plans list": async () => ["plans", "list"],
  "plans show": async (c) => ["plans", "show", await plan(c)],
  "directory list": async () => ["directory", "list"],
  "directory show": async (c) => ["directory", "show", await directory(c)],
  backup: async (c) => ["backup", path.join(c.dir, `${unique("backup")}.db`)],
};

async function certUser(c: Context): Promise<string> {
  const username = unique("certuser");
  await c.core.users.create(c.accountId, { username, password: "pw" });
  return username;
}

async function portal(c: Context): Promise<string> {
  const name = unique("portal");
  await c.setup(["portals", "create", "--name", name, "--network", await network(c)]);
  return String((await c.core.portals.listAll(c.accountId)).find((p) => p.name === name)!.id);
}

async function provider(c: Context): Promise<string> {
  const name = unique("idp");
  await c.setup([
    ...["idp", "create", name, "--kind", "oidc", "--display-name", "Campus"],
    ...["--issuer", "https://login.example.edu/", "--client-id", "wisp", "--client-secret", "s"],
  ]);
  return name;
}

async function policy(c: Context): Promise<string> {
  const name = unique("policy");
  await c.setup(["policy", "create", "--name", name, "--reject", "set-up"]);
  return name;
}

async function plan(c: Context): Promise<string> {
  const name = unique("plan");
  await c.setup(["plans", "create", "--name", name]);
  return name;
}

/** A directory on a port nobody listens on: its sync fails fast and still reports. */
function directoryArgs(verb: string, name: string): string[] {
  return [
    ...[
      "directory",
      verb,
      name,
      "--server",
      "ldap://127.0.0.1:9",
      "--user-base",
      "ou=people,dc=example,dc=org",
    ],
    ...["--set", "connect_timeout_ms=200", "--set", "timeout_ms=200"],
  ];
}

async function directory(c: Context): Promise<string> {
  const name = unique("corp");
  await c.setup(directoryArgs("create", name));
  return name;
}

/** An open session on a CoA network whose DAS (c.das) answers ACK. */
async function session(c: Context): Promise<string> {
  const address = "127.0.0.1";
  const existing = await c.core.networks.findClientByAddress(address);
  if (!existing) {
    await c.setup([
      ...["networks", "create", "--name", unique("coa"), "--nas-ip", address, "--secret", DAS_SECRET],
      ...["--coa", "--coa-port", String(c.das.port)],
    ]);
  }
  const client = await c.core.networks.findClientByAddress(address);
  const sessionId = unique("walk-session");
  await c.core.aaa.account(
    client!,
    [
      { attribute: "User-Name", op: "=", value: "walk-alice" },
      { attribute: "Acct-Session-Id", op: "=", value: sessionId },
      { attribute: "Acct-Status-Type", op: "=", value: "Start" },
      { attribute: "Calling-Station-Id", op: "=", value: "02-00-00-00-05-01" },
    ],
    address,
  );
  await c.core.aaa.drain();
  const row = await c.core.database.db
    .selectFrom("radacct")
    .select("radacctid")
    .where("acctsessionid", "=", sessionId)
    .executeTakeFirstOrThrow();
  return String(row.radacctid);
}

/** A FreeRADIUS SQLite database (its own schema) with one user, for `wisp import freeradius`. */
function freeradiusSource(c: Context): string {
  const file = path.join(c.dir, `${unique("radius")}.db`);
  const db = new Sqlite(file);
  db.exec(fs.readFileSync("/etc/freeradius/3.0/mods-config/sql/main/sqlite/schema.sql", "utf8"));
  const user = unique("imported");
  db.exec(
    `insert into radcheck (username, attribute, op, value) values ('${user}', 'Cleartext-Password', ':=', 'an imported password')`,
  );
  db.close();
  return file;
}

interface Outcome {
  error: unknown;
  output: string;
  exitCode: number | undefined;
}

/** Runs `wisp <args>` in this process, on a fresh command tree, with its output kept (not printed). */
async function runWisp(args: string[], stdin?: string): Promise<Outcome> {
  const output: string[] = [];
  const saved = { log: console.log, error: console.error };
  const stdinDescriptor = Object.getOwnPropertyDescriptor(process, "stdin")!;
  const keep = (...parts: unknown[]) => {
    output.push(parts.map(String).join(" "));
  };
  console.log = keep;
  console.error = keep;
  if (stdin !== undefined) {
    Object.defineProperty(process, "stdin", {
      value: Readable.from([Buffer.from(stdin)]),
      configurable: true,
    });
  }
  let error: unknown;
  const runnerExitCode = process.exitCode;
  process.exitCode = undefined;
  try {
    await buildProgram({ writeOut: keep, writeErr: keep }).parseAsync(["node", "wisp", ...args]);
  } catch (caught) {
    error = caught;
  } finally {
    console.log = saved.log;
    console.error = saved.error;
    if (stdin !== undefined) Object.defineProperty(process, "stdin", stdinDescriptor);
  }
  // The test runner's own exit code (1 once a test failed) is put back: only the command's is ours.
  const exitCode = process.exitCode === undefined ? undefined : Number(process.exitCode);
  process.exitCode = runnerExitCode;
  return { error, output: output.join("\n"), exitCode };
}

function describeOutcome(args: string[], outcome: Outcome): string {
  return `wisp ${args.join(" ")}: ${outcome.error ?? `exit code ${outcome.exitCode}`}\n${outcome.output}`;
}

for (const { dialect, skip } of await dialects()) {
  describe(`audit log: every CLI command on ${dialect}`, { skip }, () => {
    let testDb: TestDatabase;
    let database: Database;
    let context: Context;
    const savedEnv = { ...process.env };
    const os = userInfo().username;

    before(async () => {
      testDb = await createTestDatabase(dialect);
      const env = {
        DATA_DIR: testDb.dataDir,
        LOG_LEVEL: "silent",
        WEBHOOK_ALLOW_PRIVATE: "0",
        ...RETENTION_OFF,
      };
      Object.assign(process.env, env);
      if (testDb.databaseUrl) process.env.DATABASE_URL = testDb.databaseUrl;
      else delete process.env.DATABASE_URL;
      database = await openMigratedDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl });
      const core = createCore(database, loadConfig());
      const account = await core.accounts.resolve(undefined);
      const dir = fs.mkdtempSync(path.join(testDb.dataDir, "files-"));
      const das = await startTestDas(DAS_SECRET);
      context = {
        core,
        accountId: account.id,
        dir,
        das,
        async setup(args, stdin) {
          const outcome = await runWisp(args, stdin);
          assert.ok(!outcome.error && !outcome.exitCode, `set-up ${describeOutcome(args, outcome)}`);
          return outcome.output.split("\n").at(-1) ?? "";
        },
      };
    });
    after(async () => {
      await context?.das.close();
      await database?.close();
      await testDb?.drop();
      for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
      Object.assign(process.env, savedEnv);
    });

    const maxId = async () => {
      const row = await database.db
        .selectFrom("audit_log")
        .select((eb) => eb.fn.max("id").as("id"))
        .executeTakeFirst();
      return Number(row?.id ?? 0);
    };
    const rowsAfter = (id: number) =>
      database.db.selectFrom("audit_log").selectAll().where("id", ">", id).orderBy("id").execute();

    test("the walk's tables name exactly the CLI's commands", () => {
      const commands = leafCommands(buildProgram());
      assert.ok(commands.length > 60, `only ${commands.length} commands found`);
      const unlisted = commands.filter((c) => !(c in WALKS) && !(c in READS) && !(c in EXEMPT));
      assert.deepEqual(unlisted, [], "commands neither walked, read nor exempt: add them to this file");
      const listed = [...Object.keys(WALKS), ...Object.keys(READS), ...Object.keys(EXEMPT)];
      assert.deepEqual(
        listed.filter((c) => !commands.includes(c)),
        [],
        "commands in this file's tables that the CLI no longer has",
      );
      assert.deepEqual(
        Object.keys(READS).filter((c) => !READ_ONLY.has(c)),
        [],
        "reads missing from READ_ONLY in src/cli/program.ts",
      );
      assert.deepEqual(
        [...READ_ONLY].filter((c) => !(c in READS)),
        [],
        "READ_ONLY commands this walk does not run",
      );
      assert.deepEqual(
        Object.keys(WALKS).filter((c) => READ_ONLY.has(c)),
        [],
        "walked commands READ_ONLY calls reads",
      );
    });

    test("each changing command leaves exactly its audit rows, naming the OS user", async () => {
      const wrong: string[] = [];
      for (const [command, fixture] of Object.entries(WALKS)) {
        let run: Run;
        try {
          run = await fixture(context);
        } catch (error) {
          wrong.push(`${command}: ${(error as Error).message}`);
          continue;
        }
        const start = await maxId();
        const outcome = await runWisp(run.args, run.stdin);
        if (outcome.error || outcome.exitCode !== run.exitCode) {
          wrong.push(`${command}: ${describeOutcome(run.args, outcome)}`);
          continue;
        }
        const rows = await rowsAfter(start);
        const got = rows.map((r) => `${r.resource}/${r.action}`);
        const want = run.rows.map((r) => `${r.resource}/${r.action}`);
        if (got.join() !== want.join()) {
          wrong.push(`${command}: rows ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
          continue;
        }
        run.rows.forEach((expected, i) => {
          const row = rows[i]!;
          if (expected.id !== undefined) assert.equal(row.resource_id, expected.id, command);
          assert.deepEqual(
            [row.actor_type, row.actor_id, row.actor_name, row.actor_role, row.address],
            ["cli", os, os, "", "local"],
            command,
          );
        });
        const text = rows.map((r) => `${r.before} ${r.after}`).join(" ");
        for (const secret of run.secrets ?? []) {
          if (text.includes(secret)) wrong.push(`${command}: the secret "${secret}" is in the row`);
        }
      }
      assert.deepEqual(wrong, [], `commands whose audit rows are wrong:\n${wrong.join("\n")}`);
    });

    test("each read command leaves no audit row", async () => {
      const wrong: string[] = [];
      for (const [command, argsOf] of Object.entries(READS)) {
        let args: string[];
        try {
          args = await argsOf(context);
        } catch (error) {
          wrong.push(`${command}: ${(error as Error).message}`);
          continue;
        }
        const start = await maxId();
        const outcome = await runWisp(args);
        // `radius test` against a port nobody answers fails on purpose (no verdict): it still reads.
        if (outcome.error && command !== "radius test") {
          wrong.push(`${command}: ${describeOutcome(args, outcome)}`);
          continue;
        }
        const rows = await rowsAfter(start);
        if (rows.length > 0)
          wrong.push(`${command}: ${rows.length} rows (${rows.map((r) => `${r.resource}/${r.action}`)})`);
      }
      assert.deepEqual(wrong, [], `read commands that wrote audit rows:\n${wrong.join("\n")}`);
    });

    test("masked secrets are masked with the one mask", async () => {
      const start = await maxId();
      await context.setup([
        "networks",
        "create",
        "--name",
        unique("masked"),
        "--nas-ip",
        "",
        "--secret",
        "masked-s3cret",
      ]);
      const [row] = await rowsAfter(start);
      assert.equal(JSON.parse(row!.after!).secret, MASK);
    });
  });
}
