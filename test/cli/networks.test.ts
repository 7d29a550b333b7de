// `wisp networks ...` and `wisp portals ...` as operators run them: real processes on a fresh database
// per dialect. Spawns are slow, so there are few of them, independent ones run side by side, and the
// tests in one describe share the database and run in order. The service rules behind these commands
// are tested in depth, in-process, in test/http/networks.test.ts.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { HTML_AS_PNG, png } from "../console/logo-fixtures.ts";
import { cliDialects, createTestDatabase, type TestDatabase } from "../support/databases.ts";
import { databaseEnv, type Env, type ProcessResult, startServerProcess, wisp } from "../support/processes.ts";

const PUBLIC_URL = "https://guest.example.org/wisp";
const GENERATED = /^[A-Za-z2-9]{24,}$/;

/** A command line as words: "networks list --account other" (use an array for values with spaces). */
type Words = string | string[];
const argv = (words: Words) => (Array.isArray(words) ? words : words.split(" "));

function describeRun(result: ProcessResult): string {
  return `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

function assertSucceeded(result: ProcessResult): void {
  assert.equal(result.code, 0, describeRun(result));
}

/** A non-zero exit, nothing on stdout, and stderr matching the message. */
function assertFailed(result: ProcessResult, message: RegExp): void {
  assert.notEqual(result.code, 0, describeRun(result));
  assert.equal(result.stdout, "", describeRun(result));
  assert.match(result.stderr, message, describeRun(result));
}

/** The secret alone on stdout (one line), and nowhere on stderr. */
function secretOnly(result: ProcessResult): string {
  assertSucceeded(result);
  const lines = result.stdout.split("\n");
  assert.equal(lines.length, 2, `one line on stdout: ${JSON.stringify(result.stdout)}`);
  const secret = lines[0]!;
  assert.ok(secret.length >= 8, describeRun(result));
  assert.ok(!result.stderr.includes(secret), "the secret is printed on stdout only");
  return secret;
}

/** The id of the network a create reported on stderr. */
function createdId(result: ProcessResult): number {
  const id = /created network (\d+) /.exec(result.stderr)?.[1];
  assert.ok(id, describeRun(result));
  return Number(id);
}

for (const { dialect, skip } of await cliDialects()) {
  describe(`wisp networks and portals CLI on ${dialect}`, { skip }, () => {
    let database: TestDatabase;
    let env: Env;
    let opened: Database | undefined;
    let db: Database["db"];
    let lobby: number;
    let cafe: number;
    let office: number;
    let theirs: number;
    let guest: number;
    let staff: number;
    let theirPortal: number;

    const cli = (words: Words) => wisp(argv(words), env);
    /** Commands that only read (or are refused before writing) run side by side. */
    const reads = (...commands: Words[]) => Promise.all(commands.map(cli));
    /**
     * Commands that write run side by side on PostgreSQL but one after another on SQLite, where
     * concurrent read-then-write transactions of separate processes can fail with "database is
     * locked" (deferred BEGIN; a foundation issue, reported).
     */
    const writes = async (...commands: Words[]): Promise<ProcessResult[]> => {
      if (dialect === "postgres") return reads(...commands);
      const results: ProcessResult[] = [];
      for (const command of commands) results.push(await cli(command));
      return results;
    };

    const counts = async () => ({
      accounts: (await db.selectFrom("accounts").select("id").execute()).length,
      nas: (await db.selectFrom("nas").select("id").execute()).length,
      portals: (await db.selectFrom("captive_portals").select("id").execute()).length,
    });
    const nasRow = (id: number) =>
      db.selectFrom("nas").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
    const allSecrets = async () =>
      (await db.selectFrom("nas").select("secret").execute()).map((r) => r.secret);

    before(async () => {
      database = await createTestDatabase(dialect);
      env = { ...databaseEnv(database), PUBLIC_URL };
    });
    after(async () => {
      await opened?.close();
      await database?.drop();
    });

    test("bad input on a fresh installation writes nothing, not even the default account", async () => {
      assertFailed(
        await cli("networks create --name Lobby --nas-ip 192.0.2.0/33"),
        /^wisp: nas_ip "192\.0\.2\.0\/33" has an invalid prefix length/,
      );
      opened = openDatabase({ dataDir: database.dataDir, databaseUrl: database.databaseUrl, poolSize: 2 });
      db = opened.db;
      assert.deepEqual(await counts(), { accounts: 0, nas: 0, portals: 0 });
    });

    test("create prints only the secret: generated ones are long and random, given ones kept", async () => {
      const first = await cli("networks create --name Lobby --nas-ip 192.0.2.77/24");
      const generated = secretOnly(first);
      assert.match(generated, GENERATED);
      lobby = createdId(first);
      assert.match(first.stderr, /created network \d+ "Lobby" \(192\.0\.2\.0\/24\) for account default;/);
      assert.match(first.stderr, /not shown again/);
      assert.equal((await nasRow(lobby)).secret, generated);
      await db.insertInto("accounts").values({ name: "other", created: "2026-01-01T00:00:00Z" }).execute();

      const [second, given, other] = (await writes(
        "networks create --name Café --nas-ip 198.51.100.7",
        [
          ...argv("networks create --name Office --nas-ip 2001:DB8::7 --secret Given-Secret_42!"),
          ...["--nas-identifier", "ap-7", "--description", "front desk", "--require-message-authenticator"],
          ...["--eap-method", "TLS"],
        ],
        "networks create --name Theirs --nas-ip 203.0.113.0/24 --account other",
      )) as [ProcessResult, ProcessResult, ProcessResult];
      const again = secretOnly(second);
      assert.match(again, GENERATED);
      assert.notEqual(again, generated);
      cafe = createdId(second);
      assert.equal(secretOnly(given), "Given-Secret_42!");
      office = createdId(given);
      secretOnly(other);
      theirs = createdId(other);
      assert.match(other.stderr, /for account other;/);

      const row = await nasRow(office);
      assert.deepEqual(
        [row.nasname, row.shortname, row.type, row.secret, row.description, row.name, row.nas_identifier],
        ["2001:db8::7", "Office", "other", "Given-Secret_42!", "front desk", "Office", "ap-7"],
      );
      assert.equal(row.require_message_authenticator, 1);
      assert.equal(row.eap_method, "TLS");
      assert.equal((await nasRow(cafe)).eap_method, "PEAP", "PEAP unless --eap-method");
      assert.notEqual((await nasRow(theirs)).account_id, row.account_id);
    });

    test("refusals: non-zero exit, a message on stderr, nothing on stdout, nothing written", async () => {
      const before = await counts();
      const secretsBefore = await allSecrets();
      const cases: [Words, RegExp][] = [
        [
          ["networks", "create", "--name", "x", "--nas-ip", "10.9.0.1", "--secret", "50% off"],
          /secret must be/,
        ],
        [
          "networks create --name x --nas-ip 192.0.2.1/24",
          /^wisp: nas_ip 192\.0\.2\.0\/24 is already used by/,
        ],
        // Another account's address: refused, without naming that account or network.
        [
          "networks create --name x --nas-ip 192.0.2.0/24 --account other",
          /^wisp: nas_ip 192\.0\.2\.0\/24 is already used by another network\n$/,
        ],
        // Sharing addresses with another account's network, either way round: refused, naming none.
        [
          "networks create --name x --nas-ip 192.0.2.5 --account other",
          /^wisp: nas_ip 192\.0\.2\.5 overlaps another account's network\n$/,
        ],
        [
          "networks create --name x --nas-ip 203.0.0.0/16",
          /^wisp: nas_ip 203\.0\.0\.0\/16 overlaps another account's network\n$/,
        ],
        [
          `networks update ${theirs} --nas-ip 192.0.0.0/16`,
          /^wisp: nas_ip 192\.0\.0\.0\/16 overlaps another account's network\n$/,
        ],
        [`networks update ${lobby}`, /nothing to change/],
        [`networks update ${lobby} --eap-method md5`, /^wisp: eap_method must be one of peap, ttls, tls\n$/],
        ["networks create --name x --nas-ip 10.9.0.2 --eap-method leap", /eap_method must be one of/],
        ["portals create --name P --network 999999", /network_id 999999 is not a network of this account/],
        [`portals create --name P --network ${theirs}`, /network_id \d+ is not a network of this account/],
      ];
      const results = await reads(...cases.map(([words]) => words));
      for (const [i, result] of results.entries()) assertFailed(result, cases[i]![1]);
      assert.deepEqual(await counts(), before);
      assert.deepEqual(await allSecrets(), secretsBefore);
    });

    test("two accounts creating overlapping networks from separate processes: one of each pair wins", async () => {
      const before = await counts();
      const pairs = [0, 1, 2].map((i) => [
        `networks create --name A${i} --nas-ip 10.70.${i}.0/24`,
        `networks create --name B${i} --nas-ip 10.70.${i}.${9 + i} --account other`,
      ]);
      const results = await reads(...pairs.flat());
      for (const [i] of pairs.entries()) {
        const [a, b] = [results[2 * i]!, results[2 * i + 1]!];
        assert.equal([a, b].filter((r) => r.code === 0).length, 1, `${describeRun(a)}\n${describeRun(b)}`);
        for (const loser of [a, b].filter((r) => r.code !== 0)) {
          assertFailed(loser, /^wisp: nas_ip \S+ overlaps another account's network\n$/);
        }
      }
      assert.equal((await counts()).nas, before.nas + pairs.length);
      const rows = await db
        .selectFrom("nas")
        .select(["id", "nasname"])
        .where("nasname", "like", "10.70.%")
        .execute();
      for (const row of rows) await db.deleteFrom("nas").where("id", "=", row.id).execute();
    });

    test("list and show never print secrets", async () => {
      const [all, mine, show] = await reads(
        "networks list",
        "networks list --account other",
        `networks show ${lobby}`,
      );
      const secrets = await allSecrets();
      for (const result of [all, mine, show] as ProcessResult[]) {
        assertSucceeded(result);
        for (const secret of secrets) {
          assert.ok(!result.stdout.includes(secret) && !result.stderr.includes(secret), describeRun(result));
        }
      }
      const lines = all!.stdout.trimEnd().split("\n");
      assert.match(lines[0]!, /^ID +ACCOUNT +NAME +NAS-IP +NAS-IDENTIFIER +MSG-AUTH +CREATED +DESCRIPTION$/);
      assert.equal(lines.length, 5);
      assert.match(all!.stdout, /default +Lobby +192\.0\.2\.0\/24 /);
      assert.match(all!.stdout, /2001:db8::7 +ap-7 +required/);
      assert.equal(mine!.stdout.trimEnd().split("\n").length, 2);
      assert.match(mine!.stdout, /other +Theirs +203\.0\.113\.0\/24/);
      assert.match(show!.stdout, /^id +\d+\naccount +default\nname +Lobby\nnas_ip +192\.0\.2\.0\/24\n/);
    });

    test("update, --secret and rotate-secret change the stored row; secrets go to stdout alone", async () => {
      const oldCafe = (await nasRow(cafe)).secret;
      const [renamed, newSecret, rotated, off] = (await writes(
        [
          ...["networks", "update", String(lobby), "--name", "Lobby West with a rather long name indeed"],
          ...argv("--nas-ip 192.0.2.0/25 --nas-identifier lobby-1 --require-message-authenticator"),
          ...argv("--eap-method ttls"),
        ],
        `networks update ${theirs} --secret Changed-Secret-9 --account other`,
        `networks rotate-secret ${cafe}`,
        `networks update ${office} --no-require-message-authenticator`,
      )) as [ProcessResult, ProcessResult, ProcessResult, ProcessResult];
      assertSucceeded(renamed);
      assert.match(
        renamed.stdout,
        /^updated network \d+ "Lobby West with a rather long name indeed" \(192\.0\.2\.0\/25\)\n$/,
      );
      assert.equal(secretOnly(newSecret), "Changed-Secret-9");
      assert.equal((await nasRow(theirs)).secret, "Changed-Secret-9");
      const fresh = secretOnly(rotated);
      assert.match(fresh, GENERATED);
      assert.notEqual(fresh, oldCafe);
      assert.equal((await nasRow(cafe)).secret, fresh);
      const row = await nasRow(lobby);
      assert.deepEqual(
        [row.nasname, row.shortname, row.nas_identifier, row.require_message_authenticator, row.eap_method],
        ["192.0.2.0/25", "Lobby West with a rather long na", "lobby-1", 1, "TTLS"],
      );
      assertSucceeded(off);
      const officeRow = await nasRow(office);
      assert.equal(officeRow.require_message_authenticator, 0);
      assert.equal(officeRow.nas_identifier, "ap-7", "options not given stay as they were");
      assert.equal(officeRow.secret, "Given-Secret_42!");
      assert.equal(officeRow.eap_method, "TLS", "--eap-method not given: unchanged");
    });

    test("portals: create with a login URL from PUBLIC_URL, list, update, delete", async () => {
      const created = await writes(
        `portals create --name Guest --network ${lobby} --success-url https://example.com/hi`,
        `portals create --name Staff --network ${lobby}`,
        `portals create --name Theirs --network ${theirs} --account other`,
      );
      [guest, staff, theirPortal] = created.map((result) => {
        assertSucceeded(result);
        const pattern =
          /^created captive portal (\d+) "\w+" on network \d+ for account \w+; login URL (\S+)\n$/;
        const match = pattern.exec(result.stdout);
        assert.ok(match, describeRun(result));
        assert.equal(match[2], `${PUBLIC_URL}/portal/${match[1]}`);
        return Number(match[1]);
      }) as [number, number, number];

      const [list, refused] = (await reads(
        `portals list --network ${lobby}`,
        `portals delete ${theirPortal} --account default`,
      )) as [ProcessResult, ProcessResult];
      assertSucceeded(list);
      const rows = list.stdout.trimEnd().split("\n");
      assert.match(rows[0]!, /^ID +ACCOUNT +NAME +NETWORK +LOGIN URL +SUCCESS URL +CREATED$/);
      assert.equal(rows.length, 3);
      assert.match(
        list.stdout,
        new RegExp(`Guest +${lobby} +${PUBLIC_URL}/portal/${guest} +https://example.com/hi`),
      );
      assertFailed(refused, /captive portal \d+ belongs to another account/);

      const [moved, deleted] = (await writes(
        `portals update ${staff} --name Staff-only --network ${cafe} --success-url https://x.example/ok`,
        `portals delete ${theirPortal}`,
      )) as [ProcessResult, ProcessResult];
      assertSucceeded(moved);
      assert.equal(moved.stdout, `updated captive portal ${staff} "Staff-only" on network ${cafe}\n`);
      assertSucceeded(deleted);
      assert.equal(deleted.stdout, `deleted captive portal ${theirPortal} "Theirs"\n`);
      const left = await db
        .selectFrom("captive_portals")
        .select(["id", "network_id", "name", "success_url"])
        .orderBy("id")
        .execute();
      assert.deepEqual(
        left,
        [
          { id: guest, network_id: lobby, name: "Guest", success_url: "https://example.com/hi" },
          { id: staff, network_id: cafe, name: "Staff-only", success_url: "https://x.example/ok" },
        ].sort((a, b) => a.id - b.id),
      );
    });

    test("portals update: --logo sets a checked image, --no-logo removes it; the hand-off options", async () => {
      const dir = await mkdtemp(join(tmpdir(), "wisp-logo-"));
      const image = join(dir, "logo.png");
      const disguised = join(dir, "page.png");
      await writeFile(image, png(24, 16, [10, 20, 30]));
      await writeFile(disguised, HTML_AS_PNG);
      const logoRow = () =>
        db
          .selectFrom("portal_logos")
          .select(["content_type", "width", "height", "sha256"])
          .where("portal_id", "=", staff)
          .executeTakeFirst();

      const [set] = await writes(["portals", "update", String(staff), "--logo", image]);
      assertSucceeded(set!);
      assert.match(set!.stdout, /^logo set: image\/png, 24 x 16 pixels\n/);
      const stored = await logoRow();
      assert.deepEqual([stored?.content_type, stored?.width, stored?.height], ["image/png", 24, 16]);

      const [refused] = await writes([
        "portals",
        "update",
        String(staff),
        "--logo",
        disguised,
        "--name",
        "X",
      ]);
      assertFailed(refused!, /logo/);
      assert.deepEqual(await logoRow(), stored, "a refused file changes nothing");
      const name = await db
        .selectFrom("captive_portals")
        .select("name")
        .where("id", "=", staff)
        .executeTakeFirst();
      assert.notEqual(name?.name, "X", "nor anything else");

      const [removed] = await writes(["portals", "update", String(staff), "--no-logo"]);
      assertSucceeded(removed!);
      assert.match(removed!.stdout, /logo removed/);
      assert.equal(await logoRow(), undefined);

      const [options, badMode, badFields] = await writes(
        [
          "portals",
          "update",
          String(staff),
          "--vendor",
          "coovachilli",
          "--uam-secret",
          "uam-s3cret",
          "--uam-auth",
          "pap",
          "--generic-extra-fields",
          "accept=Continue&zone=$zone",
        ],
        ["portals", "update", String(staff), "--uam-auth", "mschap"],
        ["portals", "update", String(staff), "--generic-extra-fields", "zone"],
      );
      assertSucceeded(options!);
      assertFailed(badMode!, /uam_auth must be one of chap, pap/);
      assertFailed(badFields!, /generic_extra_fields must be empty or up to 8 name=value pairs/);
      const row = await db
        .selectFrom("captive_portals")
        .select(["vendor", "uam_auth", "generic_extra_fields"])
        .where("id", "=", staff)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, {
        vendor: "coovachilli",
        uam_auth: "pap",
        generic_extra_fields: "accept=Continue&zone=$zone",
      });
      await rm(dir, { recursive: true, force: true });
    });

    test("delete removes the network with its captive portals and says so", async () => {
      const [gone, alone] = (await writes(
        `networks delete ${lobby}`,
        `networks delete ${theirs} --account other`,
      )) as [ProcessResult, ProcessResult];
      assertSucceeded(gone);
      assert.match(
        gone.stdout,
        /^deleted network \d+ "Lobby West[^"]*" \(192\.0\.2\.0\/25\) and its 1 captive portal\n$/,
      );
      assertSucceeded(alone);
      assert.match(alone.stdout, /"Theirs" \(203\.0\.113\.0\/24\); it had no captive portals\n$/);
      const portals = await db.selectFrom("captive_portals").select("id").execute();
      assert.deepEqual(portals, [{ id: staff }], "the portal on another network stays");
      const networks = (await db.selectFrom("nas").select("id").orderBy("id").execute()).map((r) => r.id);
      assert.deepEqual(
        networks,
        [cafe, office].sort((a, b) => a - b),
      );
      // The address is free again.
      assert.match(
        secretOnly(await cli("networks create --name Lobby-again --nas-ip 192.0.2.0/25")),
        GENERATED,
      );
    });

    test("ranges wider than NETWORK_MIN_PREFIX_IPV4 / _IPV6 are refused; the setting moves the bound", async () => {
      const before = await counts();
      const wide: [string, string][] = [
        ["0.0.0.0/0", "IPv4 networks may be /16"],
        ["10.0.0.0/8", "IPv4 networks may be /16"],
        ["::/0", "IPv6 networks may be /48"],
        ["2001:db8::/32", "IPv6 networks may be /48"],
      ];
      const refused = await reads(
        ...wide.map(([nasIp]) => `networks create --name Wide --nas-ip ${nasIp} --account other`),
      );
      for (const [i, result] of refused.entries()) {
        const [nasIp, rule] = wide[i]!;
        assertFailed(
          result,
          new RegExp(
            `^wisp: nas_ip ${nasIp.replace(/\./g, "\\.")} is wider than this server allows: ${rule} at the widest`,
          ),
        );
      }
      assert.deepEqual(await counts(), before, "nothing written");
      for (const result of await writes(
        "networks create --name Narrow --nas-ip 10.30.0.0/16 --account other",
        "networks create --name Narrow --nas-ip 10.31.1.0/24 --account other",
        "networks create --name Narrow --nas-ip 2001:db8:30::/48 --account other",
      )) {
        secretOnly(result);
      }
      const [loose, strict] = await Promise.all([
        wisp(argv("networks create --name Campus --nas-ip 10.0.0.0/8 --account other"), {
          ...env,
          NETWORK_MIN_PREFIX_IPV4: "8",
        }),
        wisp(argv("networks create --name Strict --nas-ip 172.30.0.0/16"), {
          ...env,
          NETWORK_MIN_PREFIX_IPV4: "24",
        }),
      ]);
      secretOnly(loose);
      assertFailed(
        strict,
        /^wisp: nas_ip 172\.30\.0\.0\/16 is wider than this server allows: IPv4 networks may be \/24 /,
      );
    });

    test("a too-wide network: flagged by list and show, editable, moved only when narrowed; the server names it", async () => {
      // 10.0.0.0/8 was made under NETWORK_MIN_PREFIX_IPV4=8; these commands run with the default.
      const campus = (
        await db.selectFrom("nas").select("id").where("nasname", "=", "10.0.0.0/8").executeTakeFirstOrThrow()
      ).id;
      const [list, json, show] = await reads(
        "networks list",
        "networks list --json",
        `networks show ${campus}`,
      );
      assertSucceeded(list!);
      assert.match(list!.stdout, /other +Campus +10\.0\.0\.0\/8 \(too wide\) /);
      assert.match(list!.stdout, /other +Narrow +10\.30\.0\.0\/16 +- /);
      assert.match(
        list!.stderr,
        /too wide: wider than NETWORK_MIN_PREFIX_IPV4=16 \/ NETWORK_MIN_PREFIX_IPV6=48 allow/,
      );
      assertSucceeded(json!);
      const flagged = (JSON.parse(json!.stdout) as { nas_ip: string; too_wide: boolean }[])
        .filter((n) => n.too_wide)
        .map((n) => n.nas_ip);
      assert.deepEqual(flagged, ["10.0.0.0/8"]);
      assert.match(show!.stdout, /\nnas_ip +10\.0\.0\.0\/8 \(too wide\)\n/);
      assert.match(show!.stderr, /a change of its address must narrow it/);

      const [renamed, moved] = await writes(
        `networks update ${campus} --name Campus-North --description kept`,
        `networks update ${campus} --nas-ip 10.0.0.0/9`,
      );
      assertSucceeded(renamed!);
      assertFailed(
        moved!,
        /^wisp: nas_ip 10\.0\.0\.0\/9 is wider than this server allows: IPv4 networks may be \/16 /,
      );
      assert.equal((await nasRow(campus)).nasname, "10.0.0.0/8");

      // The server names it at start-up, once, with what to do. (Without PUBLIC_URL: see below.)
      const server = await startServerProcess({ ...env, PUBLIC_URL: undefined, WORKER: "0" });
      try {
        // PUBLIC_URL unset: login URLs are on the server's HOST and PORT, in the CLI run with the
        // server's settings and in the API, and they reach the server.
        const narrow = (await nasRow(campus)).account_id;
        const net = await db
          .selectFrom("nas")
          .select("id")
          .where("account_id", "=", narrow)
          .where("nasname", "=", "10.30.0.0/16")
          .executeTakeFirstOrThrow();
        const serverEnv = { ...env, PUBLIC_URL: undefined, HOST: "127.0.0.1", PORT: String(server.port) };
        const [created, key] = await Promise.all([
          wisp(argv(`portals create --name Port --network ${net.id} --account other`), serverEnv),
          wisp(argv("keys create --name port --account other"), serverEnv),
        ]);
        assertSucceeded(created);
        const portalId = /created captive portal (\d+) /.exec(created.stdout)?.[1];
        const loginUrl = `http://127.0.0.1:${server.port}/portal/${portalId}`;
        assert.ok(created.stdout.includes(`login URL ${loginUrl}\n`), describeRun(created));
        assert.match(created.stderr, /PUBLIC_URL is not set for this command/);
        assertSucceeded(key);
        const api = await fetch(`${server.url}/api/captiveportals/${portalId}`, {
          headers: { authorization: `Bearer ${key.stdout.trim()}` },
        });
        assert.equal(api.status, 200);
        assert.equal(((await api.json()) as { login_url: string }).login_url, loginUrl);
        // Opened without a gateway's parameters, the page answers with its friendly 400: it is ours.
        const page = await fetch(loginUrl);
        assert.equal(page.status, 400);
        assert.match(page.headers.get("content-type") ?? "", /^text\/html/);

        const warning = await server.waitForLog((line) => line.network === campus && line.level === 40);
        assert.equal(
          warning.msg,
          `network ${campus} (account other) is 10.0.0.0/8, wider than NETWORK_MIN_PREFIX_IPV4=16 allows: ` +
            "it keeps working, but no other account can add a network inside it; narrow it " +
            `(wisp networks update ${campus} --nas-ip <narrower range>) or set NETWORK_MIN_PREFIX_IPV4=8 or lower`,
        );
        assert.equal(server.log().filter((line) => line.level === 40 && "nas_ip" in line).length, 1);
      } finally {
        await server.stop();
      }
      secretOnly(await cli(`networks update ${campus} --nas-ip 10.0.0.0/16 --secret Narrowed-Secret-1`));
    });
  });
}
