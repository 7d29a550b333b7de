// `wisp sessions ...`: who is online (and was), and the disconnect (RFC 5176 Disconnect-Request).
import { type Command, InvalidArgumentError } from "commander";
import type { Session } from "../core/sessions/service.ts";
import { namedAccount, printFields } from "./networks.ts";
import { jsonOption, printList } from "./output.ts";
import { positiveInteger, type WithCore } from "./program.ts";

function status(text: string): string {
  if (text !== "active" && text !== "closed") throw new InvalidArgumentError("must be active or closed");
  return text;
}

function fields(s: Session): [string, string | number | null][] {
  return [
    ["id", s.id],
    ["status", s.status],
    ["username", s.username],
    ["user_id", s.user_id],
    ["network_id", s.network_id],
    ["acct_session_id", s.acct_session_id],
    ["nas_ip", s.nas_ip],
    ["ap_mac", s.ap_mac],
    ["client_mac", s.client_mac],
    ["ssid", s.ssid],
    ["framed_ip", s.framed_ip],
    ["start", s.start],
    ["update", s.update],
    ["stop", s.stop],
    ["duration", s.duration],
    ["input_bytes", s.input_bytes],
    ["output_bytes", s.output_bytes],
    ["terminate_cause", s.terminate_cause],
    [
      "disconnect",
      s.disconnect
        ? `${s.disconnect.result}${s.disconnect.cause ? ` (${s.disconnect.cause})` : ""} at ${s.disconnect.at}`
        : null,
    ],
  ];
}

export function registerSessionCommands(program: Command, withCore: WithCore): void {
  const sessions = program.command("sessions").description("live and past RADIUS sessions, and disconnects");

  jsonOption(
    sessions.command("list").description("list sessions, newest first (--status active: who is online)"),
  )
    .option("--account <name>", "the account (default: the account named default)")
    .option("--status <status>", "active or closed", status)
    .option("--user-id <id>", "only this user's sessions", positiveInteger)
    .option("--network-id <id>", "only this network's sessions", positiveInteger)
    .option("--ap-mac <mac>", "only sessions on this access point")
    .option("--client-mac <mac>", "only this device's sessions")
    .option("--since <time>", "only sessions started at or after (ISO 8601 or Unix seconds)")
    .option("--limit <n>", "at most this many (default 50, at most 1000)", positiveInteger)
    .action(
      (options: {
        account?: string;
        status?: string;
        userId?: number;
        networkId?: number;
        apMac?: string;
        clientMac?: string;
        since?: string;
        limit?: number;
        json?: boolean;
      }) =>
        withCore(async (core) => {
          const account = await core.accounts.resolve(options.account);
          const page = await core.sessions.list(
            account.id,
            {
              status: options.status,
              user_id: options.userId,
              network_id: options.networkId,
              ap_mac: options.apMac,
              client_mac: options.clientMac,
              since: options.since,
            },
            { page: 1, limit: Math.min(options.limit ?? 50, 1000) },
          );
          printList(
            options.json,
            page.data,
            ["ID", "STATUS", "USERNAME", "CLIENT-MAC", "AP-MAC", "NETWORK", "START", "STOP", "IN", "OUT"],
            (s) => [
              s.id,
              s.status,
              s.username,
              s.client_mac,
              s.ap_mac,
              s.network_id,
              s.start,
              s.stop,
              s.input_bytes,
              s.output_bytes,
            ],
          );
        }),
    );

  sessions
    .command("show")
    .description("show one session")
    .argument("<session-id>", "the session's id (see sessions list)", positiveInteger)
    .option("--account <name>", "only if the session belongs to this account")
    .action((id: number, options: { account?: string }) =>
      withCore(async (core) => {
        const accountId = await core.sessions.locate(id, await namedAccount(core, options.account));
        printFields(fields(await core.sessions.get(accountId, id)));
      }),
    );

  sessions
    .command("disconnect")
    .description("send a Disconnect-Request (RFC 5176) to the session's NAS and print its answer")
    .argument("<session-id>", "the session's id (see sessions list)", positiveInteger)
    .option("--account <name>", "only if the session belongs to this account")
    .action((id: number, options: { account?: string }) =>
      withCore(async (core) => {
        const accountId = await core.sessions.locate(id, await namedAccount(core, options.account));
        const { disconnect } = await core.sessions.disconnect(accountId, id, "cli");
        const cause = disconnect.cause ? ` (${disconnect.cause})` : "";
        const words = {
          ack: "Disconnect-ACK",
          nak: "Disconnect-NAK",
          timeout: "no answer",
          error: "not sent",
        };
        console.log(
          `session ${id}: ${words[disconnect.result as keyof typeof words] ?? disconnect.result}${cause}`,
        );
        if (disconnect.result !== "ack") process.exitCode = 1;
      }),
    );
}
