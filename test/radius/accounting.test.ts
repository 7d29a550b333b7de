// Accounting through real UDP packets to the embedded server: radacct rows as FreeRADIUS's rlm_sql
// keeps them (Start, Interim-Update, Stop, Stop without Start, Accounting-On/Off), gigawords,
// duplicates, session events, and Simultaneous-Use counting these rows. Every packet carries an
// Event-Timestamp, so the stored times are known exactly.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import dgram from "node:dgram";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import type { Network } from "../../src/core/networks/service.ts";
import { ConflictError } from "../../src/core/shared/errors.ts";
import { accessRequestPap, sendRadius } from "../../src/radius/client.ts";
import { type AttributeInput, encodePacket, verifyResponse } from "../../src/radius/packet.ts";
import { dialects } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "acct-Secret-41";
const OTHER_SECRET = "acct-Other-52";
const T0 = 1_700_000_000;

const md5 = (text: string) => createHash("md5").update(text).digest("hex");

/** FreeRADIUS's acct_unique policy (policy.d/accounting), without a Class from insert_acct_class. */
function freeradiusUnique(fields: {
  user: string;
  session: string;
  nas: string;
  nasId: string;
  port: string;
}) {
  return md5([fields.user, fields.session, fields.nas, fields.nasId, "", fields.port].join(","));
}

/** A session's acctuniqueid: FreeRADIUS's hash hashed again with the account (issue 12). */
function acctUnique(
  fields: { user: string; session: string; nas: string; nasId: string; port: string },
  accountId: number,
) {
  return md5(`${freeradiusUnique(fields)},${accountId}`);
}

/** Unix seconds from a radacct time column (integer on SQLite, timestamptz on PostgreSQL). */
function seconds(value: number | Date | null): number | null {
  if (value === null) return null;
  return value instanceof Date ? value.getTime() / 1000 : Number(value);
}

/**
 * Sends datagrams from one socket bound to `from` and collects the answers: returns as soon as
 * `expected` have arrived (a loaded machine may take seconds), or after waitMs. An answer that must
 * not come (`expected` 0) is waited for waitMs.
 */
async function exchange(datagrams: Buffer[], port: number, from: string, expected: number, waitMs?: number) {
  const socket = dgram.createSocket("udp4");
  const answers: Buffer[] = [];
  let enough: () => void = () => {};
  const arrived = new Promise<void>((resolve) => {
    enough = resolve;
  });
  socket.on("message", (message) => {
    answers.push(message);
    if (expected > 0 && answers.length >= expected) enough();
  });
  await new Promise<void>((resolve) => socket.bind(0, from, () => resolve()));
  for (const datagram of datagrams) socket.send(datagram, port, "127.0.0.1");
  const limit = waitMs ?? (expected === 0 ? 500 : 15_000);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([arrived, new Promise((resolve) => (timer = setTimeout(resolve, limit)))]);
  clearTimeout(timer);
  socket.close();
  return answers;
}

for (const { dialect, skip } of await dialects()) {
  describe(`RADIUS accounting on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let authPort: number;
    let acctPort: number;
    let lobby: Network;
    let other: Network;
    let mine: AccountRow;
    let theirs: AccountRow;
    let carolId: number;

    const db = () => server.core.database.db;
    /** The session of one account (this suite's own by default): another may have the same id. */
    const session = (acctuniqueid: string, accountId = mine.id) =>
      db()
        .selectFrom("radacct")
        .selectAll()
        .where("acctuniqueid", "=", acctuniqueid)
        .where("account_id", "=", accountId)
        .executeTakeFirstOrThrow();
    const sessionsOf = (username: string) =>
      db().selectFrom("radacct").selectAll().where("username", "=", username).orderBy("radacctid").execute();
    const eventsOf = async (kind: string, sessionId: number) =>
      (await db().selectFrom("events").selectAll().where("kind", "=", kind).orderBy("id").execute())
        .map((e) => ({ ...e, data: JSON.parse(e.data) as Record<string, unknown> }))
        .filter((e) => e.data.session_id === sessionId);

    /** One Accounting-Request of `user`'s session `id` from the lobby AP (NAS-Port 20). */
    const packet = (
      user: string,
      id: string,
      status: string,
      at: number,
      extra: AttributeInput[] = [],
      nas = "127.0.0.1",
    ): AttributeInput[] => [
      ["User-Name", user] as const,
      ["Acct-Session-Id", id] as const,
      ["Acct-Status-Type", status] as const,
      ["NAS-IP-Address", nas] as const,
      ["NAS-Identifier", "lobby-ap"] as const,
      ["NAS-Port", 20] as const,
      ["Called-Station-Id", "AA-BB-CC-DD-EE-FF:Guest WiFi"] as const,
      ["Calling-Station-Id", "11-22-33-44-55-66"] as const,
      ["Event-Timestamp", at] as const,
      ...extra,
    ];
    const account = async (attributes: AttributeInput[]) => {
      const answer = await sendRadius({
        code: "Accounting-Request",
        attributes,
        host: "127.0.0.1",
        port: acctPort,
        secret: SECRET,
        timeoutMs: 2000,
        retries: 0,
      });
      assert.equal(answer.type, "Accounting-Response");
    };
    const unique = (user: string, id: string, accountId = mine.id) =>
      acctUnique({ user, session: id, nas: "127.0.0.1", nasId: "lobby-ap", port: "20" }, accountId);
    const login = (user: string) =>
      sendRadius({
        ...accessRequestPap(user, "pw-acct-7"),
        host: "127.0.0.1",
        port: authPort,
        secret: SECRET,
        timeoutMs: 2000,
        retries: 0,
      });

    before(async () => {
      [authPort, acctPort] = [await freeUdpPort(), await freeUdpPort()];
      server = await startTestServer({
        dialect,
        env: {
          RADIUS_HOST: "127.0.0.1",
          RADIUS_AUTH_PORT: String(authPort),
          RADIUS_ACCT_PORT: String(acctPort),
        },
      });
      mine = await server.account("default");
      theirs = await server.account("second");
      lobby = (
        await server.core.networks.create(mine.id, { name: "Lobby", nas_ip: "127.0.0.1", secret: SECRET })
      ).network;
      other = (
        await server.core.networks.create(theirs.id, {
          name: "Other",
          nas_ip: "127.0.0.2",
          secret: OTHER_SECRET,
        })
      ).network;
      carolId = (await server.core.users.create(mine.id, { username: "carol", password: "pw-acct-7" })).id;
      for (const account of [mine, theirs]) {
        const sim = await server.core.users.create(account.id, { username: "sim", password: "pw-acct-7" });
        await server.core.attributes.addToUser(account.id, {
          userid: sim.id,
          table: "radcheck",
          attribute: "Simultaneous-Use",
          operator: ":=",
          value: "1",
        });
      }
    });
    after(() => server?.stop());

    test("Start, Interim-Update (with gigawords) and Stop keep one radacct row", async () => {
      await account(packet("carol", "c-1", "Start", T0, [["Framed-IP-Address", "10.0.0.7"]]));
      const id = unique("carol", "c-1");
      let row = await session(id);
      assert.equal(row.acctsessionid, "c-1");
      assert.equal(row.username, "carol");
      assert.equal(row.nasipaddress, "127.0.0.1");
      assert.equal(seconds(row.acctstarttime), T0);
      assert.equal(row.acctstoptime, null);
      assert.equal(row.framedipaddress, "10.0.0.7");
      assert.equal(row.calledstationid, "AA-BB-CC-DD-EE-FF:Guest WiFi");
      assert.deepEqual(
        [row.account_id, row.network_id, row.user_id, row.client_mac, row.ap_mac, row.ssid],
        [mine.id, lobby.id, carolId, "11:22:33:44:55:66", "aa:bb:cc:dd:ee:ff", "Guest WiFi"],
      );
      const [started] = await eventsOf("session.started", row.radacctid);
      assert.equal(started?.account_id, mine.id);
      assert.deepEqual(started?.data, {
        session_id: row.radacctid,
        username: "carol",
        user_id: carolId,
        network_id: lobby.id,
        ap_mac: "aa:bb:cc:dd:ee:ff",
        client_mac: "11:22:33:44:55:66",
        ssid: "Guest WiFi",
        start: new Date(T0 * 1000).toISOString().replace(".000Z", "Z"),
      });

      await account(
        packet("carol", "c-1", "Interim-Update", T0 + 300, [
          ["Acct-Session-Time", 300],
          ["Acct-Input-Octets", 1000],
          ["Acct-Input-Gigawords", 2],
          ["Acct-Output-Octets", 500],
          ["Acct-Output-Gigawords", 1],
        ]),
      );
      row = await session(id);
      assert.equal(Number(row.acctinputoctets), 2 * 2 ** 32 + 1000);
      assert.equal(Number(row.acctoutputoctets), 2 ** 32 + 500);
      assert.equal(row.acctsessiontime, 300);
      assert.equal(seconds(row.acctupdatetime), T0 + 300);
      assert.equal(row.acctinterval, 300);
      assert.equal(row.acctstoptime, null);

      await account(
        packet("carol", "c-1", "Stop", T0 + 600, [
          ["Acct-Session-Time", 600],
          ["Acct-Input-Octets", 7000],
          ["Acct-Input-Gigawords", 2],
          ["Acct-Output-Octets", 900],
          ["Acct-Terminate-Cause", "User-Request"],
        ]),
      );
      row = await session(id);
      assert.equal(seconds(row.acctstoptime), T0 + 600);
      assert.equal(seconds(row.acctstarttime), T0);
      assert.equal(row.acctsessiontime, 600);
      assert.equal(row.acctterminatecause, "User-Request");
      assert.equal(Number(row.acctinputoctets), 2 * 2 ** 32 + 7000);
      assert.equal(Number(row.acctoutputoctets), 900);
      assert.equal((await sessionsOf("carol")).length, 1);
      const stopped = await eventsOf("session.stopped", row.radacctid);
      assert.equal(stopped.length, 1);
      assert.deepEqual(stopped[0]?.data, {
        ...started?.data,
        stop: new Date((T0 + 600) * 1000).toISOString().replace(".000Z", "Z"),
        duration: 600,
        input_bytes: 2 * 2 ** 32 + 7000,
        output_bytes: 900,
        terminate_cause: "User-Request",
      });
    });

    test("a Stop without a Start inserts a closed row", async () => {
      await account(
        packet("carol", "c-lost", "Stop", T0 + 1000, [
          ["Acct-Session-Time", 90],
          ["Acct-Input-Octets", 42],
          ["Acct-Terminate-Cause", "Idle-Timeout"],
        ]),
      );
      const row = await session(unique("carol", "c-lost"));
      assert.equal(seconds(row.acctstarttime), T0 + 1000 - 90);
      assert.equal(seconds(row.acctstoptime), T0 + 1000);
      assert.equal(row.acctsessiontime, 90);
      assert.equal(Number(row.acctinputoctets), 42);
      assert.equal(row.acctterminatecause, "Idle-Timeout");
      assert.equal((await eventsOf("session.stopped", row.radacctid)).length, 1);
    });

    test("retransmitted accounting packets are applied once", async () => {
      const start = encodePacket(
        { code: 4, identifier: 7, attributes: packet("carol", "c-dup", "Start", T0) },
        SECRET,
      );
      const startAnswers = await exchange([start, start], acctPort, "127.0.0.1", 2, 2000);
      assert.ok(startAnswers.length >= 1);
      for (const answer of startAnswers) assert.ok(verifyResponse(answer, SECRET, start.subarray(4, 20)));
      const row = await session(unique("carol", "c-dup"));
      assert.equal((await eventsOf("session.started", row.radacctid)).length, 1);

      // A NAS resending after a while changes Acct-Delay-Time, hence the authenticator: a new packet
      // that must still not add a row or a second event.
      const stop = packet("carol", "c-dup", "Stop", T0 + 60, [["Acct-Session-Time", 60]]);
      await account(stop);
      await account([...stop, ["Acct-Delay-Time", 5]]);
      const stopAgain = encodePacket({ code: 4, identifier: 9, attributes: stop }, SECRET);
      assert.equal(
        (await exchange([stopAgain, stopAgain, stopAgain], acctPort, "127.0.0.1", 3, 2000)).length >= 1,
        true,
      );
      const rows = await db()
        .selectFrom("radacct")
        .selectAll()
        .where("acctsessionid", "=", "c-dup")
        .execute();
      assert.equal(rows.length, 1);
      assert.equal(seconds(rows[0]!.acctstoptime), T0 + 60);
      assert.equal((await eventsOf("session.started", row.radacctid)).length, 1);
      assert.equal((await eventsOf("session.stopped", row.radacctid)).length, 1);
    });

    test("Accounting-On and Accounting-Off close the NAS's open sessions", async () => {
      await account(packet("carol", "on-1", "Start", T0 + 2000));
      await account(packet("carol", "on-2", "Start", T0 + 2010));
      // A session of another NAS behind the same network (another NAS-IP-Address).
      const elsewhere = packet("carol", "off-1", "Start", T0 + 2020, [], "10.9.9.9");
      await account(elsewhere);
      await account([
        ["Acct-Status-Type", "Accounting-On"],
        ["NAS-IP-Address", "127.0.0.1"],
        ["Acct-Session-Id", "0"],
        ["Event-Timestamp", T0 + 2100],
      ]);
      for (const [id, start] of [
        ["on-1", T0 + 2000],
        ["on-2", T0 + 2010],
      ] as const) {
        const row = await session(unique("carol", id));
        assert.equal(seconds(row.acctstoptime), T0 + 2100, id);
        assert.equal(row.acctsessiontime, T0 + 2100 - start, id);
        assert.equal(row.acctterminatecause, "NAS-Reboot", id);
        assert.equal((await eventsOf("session.stopped", row.radacctid)).length, 1, id);
      }
      const offId = acctUnique(
        { user: "carol", session: "off-1", nas: "10.9.9.9", nasId: "lobby-ap", port: "20" },
        mine.id,
      );
      assert.equal((await session(offId)).acctstoptime, null, "another NAS's session stays open");

      await account([
        ["Acct-Status-Type", "Accounting-Off"],
        ["NAS-IP-Address", "10.9.9.9"],
        ["Acct-Session-Id", "0"],
        ["Event-Timestamp", T0 + 2200],
        ["Acct-Terminate-Cause", "Admin-Reboot"],
      ]);
      const off = await session(offId);
      assert.equal(seconds(off.acctstoptime), T0 + 2200);
      assert.equal(off.acctterminatecause, "Admin-Reboot");
      const [event] = await eventsOf("session.stopped", off.radacctid);
      assert.equal(event?.data.duration, 180);
      assert.equal(event?.data.terminate_cause, "Admin-Reboot");
    });

    test("Simultaneous-Use counts open sessions, in the user's own account", async () => {
      assert.equal((await login("sim")).type, "Access-Accept");
      const now = Math.floor(Date.now() / 1000);
      await account(packet("sim", "s-1", "Start", now));
      const second = await login("sim");
      assert.equal(second.type, "Access-Reject");
      assert.equal(second.attributes.find((a) => a.name === "Reply-Message")?.value, "already logged in");

      // The other account's "sim" has no open session: its network lets it in.
      const request = encodePacket(
        {
          code: 1,
          identifier: 3,
          attributes: [
            ["User-Name", "sim"],
            ["User-Password", "pw-acct-7"],
          ],
        },
        OTHER_SECRET,
        { messageAuthenticator: true },
      );
      const [answer] = await exchange([request], authPort, "127.0.0.2", 1);
      assert.ok(answer && verifyResponse(answer, OTHER_SECRET, request.subarray(4, 20)));
      assert.equal(answer[0], 2, "Access-Accept");
      const theirRow = await db()
        .selectFrom("radpostauth")
        .select(["network_id", "reply"])
        .where("account_id", "=", theirs.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(theirRow, { network_id: other.id, reply: "Access-Accept" });

      await account(packet("sim", "s-1", "Stop", now + 5, [["Acct-Session-Time", 5]]));
      assert.equal((await login("sim")).type, "Access-Accept");
    });

    test("another account's network cannot touch this account's sessions", async () => {
      await account(packet("carol", "iso-1", "Start", T0 + 3000));
      const id = unique("carol", "iso-1");
      // The other account's NAS claims to be ours (NAS-IP-Address 127.0.0.1) and replays our ids.
      const forged = [
        packet("carol", "iso-1", "Interim-Update", T0 + 3100, [["Acct-Session-Time", 9999]]),
        [
          ["Acct-Status-Type", "Accounting-On"],
          ["NAS-IP-Address", "127.0.0.1"],
          ["Event-Timestamp", T0 + 3200],
        ] as AttributeInput[],
      ].map((attributes, i) => encodePacket({ code: 4, identifier: 100 + i, attributes }, OTHER_SECRET));
      for (const datagram of forged) await exchange([datagram], acctPort, "127.0.0.2", 0, 300);
      const row = await session(id);
      assert.equal(row.acctstoptime, null, "still open");
      assert.equal(row.acctsessiontime, 0, "not updated by the other account's packet");
      assert.equal(row.account_id, mine.id);
    });

    test("two accounts whose APs send identical session attributes each keep their own session", async () => {
      // Both accounts' access points sit behind the same private addressing: the packets differ only
      // in the address they come from (127.0.0.1: this account's network, 127.0.0.2: the other's).
      const fromThem = async (attributes: AttributeInput[], identifier: number) => {
        const request = encodePacket({ code: 4, identifier, attributes }, OTHER_SECRET);
        const answers = await exchange([request], acctPort, "127.0.0.2", 1);
        assert.equal(answers.length, 1, "the other account's packet is answered");
        assert.ok(verifyResponse(answers[0]!, OTHER_SECRET, request.subarray(4, 20)));
      };
      await account(packet("carol", "twin-1", "Start", T0 + 4000));
      await fromThem(packet("carol", "twin-1", "Start", T0 + 4010), 200);
      // The same attributes, the same FreeRADIUS hash: the key includes the account.
      const [id, theirId] = [unique("carol", "twin-1"), unique("carol", "twin-1", theirs.id)];
      assert.notEqual(id, theirId);
      const ours = await session(id);
      const theirsRow = await session(theirId, theirs.id);
      assert.deepEqual(
        [
          ours.network_id,
          seconds(ours.acctstarttime),
          theirsRow.network_id,
          seconds(theirsRow.acctstarttime),
        ],
        [lobby.id, T0 + 4000, other.id, T0 + 4010],
      );
      const started = await db()
        .selectFrom("events")
        .select(["account_id", "data"])
        .where("kind", "=", "session.started")
        .execute();
      const startedFor = (row: { radacctid: number }) =>
        started.filter((e) => JSON.parse(e.data).session_id === row.radacctid).map((e) => e.account_id);
      assert.deepEqual(startedFor(ours), [mine.id]);
      assert.deepEqual(startedFor(theirsRow), [theirs.id]);

      // Their Interim-Update and Stop change their session only; ours keeps its own counters.
      await fromThem(
        packet("carol", "twin-1", "Interim-Update", T0 + 4100, [
          ["Acct-Session-Time", 90],
          ["Acct-Input-Octets", 12345],
        ]),
        201,
      );
      assert.equal(Number((await session(theirId, theirs.id)).acctinputoctets), 12345);
      assert.equal(Number((await session(id)).acctinputoctets), 0);
      await account(packet("carol", "twin-1", "Stop", T0 + 4200, [["Acct-Session-Time", 200]]));
      assert.equal(seconds((await session(id)).acctstoptime), T0 + 4200);
      assert.equal((await session(theirId, theirs.id)).acctstoptime, null, "their session stays open");
      await fromThem(packet("carol", "twin-1", "Stop", T0 + 4300, [["Acct-Session-Time", 290]]), 202);
      assert.equal((await session(id)).acctsessiontime, 200, "ours is not touched by their Stop");
      assert.equal((await session(theirId, theirs.id)).acctsessiontime, 290);
      const rows = await db()
        .selectFrom("radacct")
        .select("account_id")
        .where("acctsessionid", "=", "twin-1")
        .orderBy("radacctid")
        .execute();
      assert.deepEqual(
        rows.map((r) => r.account_id),
        [mine.id, theirs.id],
      );
    });

    test("another account cannot claim addresses of this account's network: its APs stay ours", async () => {
      const RANGE_SECRET = "acct-Range-63";
      const range = (
        await server.core.networks.create(mine.id, {
          name: "Lobby range",
          nas_ip: "127.0.1.0/24",
          secret: RANGE_SECRET,
        })
      ).network;
      for (const nasIp of ["127.0.1.5", "127.0.1.0/25", "127.0.0.0/16", "127.0.0.0/20"]) {
        await assert.rejects(
          server.core.networks.create(theirs.id, { name: "claim", nas_ip: nasIp, secret: OTHER_SECRET }),
          (error: unknown) =>
            error instanceof ConflictError &&
            error.message === `nas_ip ${nasIp} overlaps another account's network`,
        );
      }
      // A packet from an access point in our range is judged with our secret and is ours.
      const login = (secret: string, identifier: number) =>
        encodePacket(
          {
            code: 1,
            identifier,
            attributes: [
              ["User-Name", "carol"],
              ["User-Password", "pw-acct-7"],
            ],
          },
          secret,
          { messageAuthenticator: true },
        );
      const ours = login(RANGE_SECRET, 41);
      const [answer] = await exchange([ours], authPort, "127.0.1.5", 1);
      assert.ok(answer && verifyResponse(answer, RANGE_SECRET, ours.subarray(4, 20)));
      assert.equal(answer[0], 2, "Access-Accept");
      assert.deepEqual(await exchange([login(OTHER_SECRET, 42)], authPort, "127.0.1.5", 0), []);
      const rows = await db()
        .selectFrom("radpostauth")
        .select(["account_id", "network_id", "reply"])
        .where("network_id", "=", range.id)
        .execute();
      assert.deepEqual(rows, [{ account_id: mine.id, network_id: range.id, reply: "Access-Accept" }]);
    });

    test("sessions open across the upgrade (keyed by FreeRADIUS's hash alone) are still found", async () => {
      // Before issue 12 a session's key was FreeRADIUS's hash of its attributes alone.
      const fields = { user: "carol", session: "old-1", nas: "127.0.0.1", nasId: "lobby-ap", port: "20" };
      const insertOld = (accountId: number, networkId: number) =>
        db()
          .insertInto("radacct")
          .values({
            acctsessionid: fields.session,
            acctuniqueid: freeradiusUnique(fields),
            username: "carol",
            nasipaddress: "127.0.0.1",
            acctstarttime: dialect === "sqlite" ? T0 + 5000 : new Date((T0 + 5000) * 1000),
            account_id: accountId,
            network_id: networkId,
          })
          .returning("radacctid")
          .executeTakeFirstOrThrow();
      // The old key is unique across accounts: only one account can have such a row; theirs here.
      const old = await insertOld(theirs.id, other.id);
      // Our packets with the same attributes are ours: a new session of ours, theirs untouched.
      await account(packet("carol", "old-1", "Interim-Update", T0 + 5100, [["Acct-Session-Time", 100]]));
      const ours = await session(unique("carol", "old-1"));
      assert.equal(ours.acctsessiontime, 100);
      const untouched = await db()
        .selectFrom("radacct")
        .selectAll()
        .where("radacctid", "=", old.radacctid)
        .executeTakeFirstOrThrow();
      assert.deepEqual([untouched.acctsessiontime, untouched.acctupdatetime], [null, null]);
      // Their own Stop finds their old row and closes it, without a new one.
      const stop = encodePacket(
        {
          code: 4,
          identifier: 210,
          attributes: packet("carol", "old-1", "Stop", T0 + 5200, [["Acct-Session-Time", 200]]),
        },
        OTHER_SECRET,
      );
      assert.equal((await exchange([stop], acctPort, "127.0.0.2", 1)).length, 1);
      const closed = await db()
        .selectFrom("radacct")
        .selectAll()
        .where("radacctid", "=", old.radacctid)
        .executeTakeFirstOrThrow();
      assert.deepEqual([closed.acctsessiontime, seconds(closed.acctstoptime)], [200, T0 + 5200]);
      const all = await db()
        .selectFrom("radacct")
        .select("account_id")
        .where("acctsessionid", "=", "old-1")
        .execute();
      assert.equal(all.length, 2, "one session per account");
    });
  });
}
