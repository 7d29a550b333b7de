// `wisp webhooks ...`: endpoints that receive an account's events. Secrets go to stdout alone (so
// scripts can capture them), only at creation and rotation; notes for people go to stderr.
import type { Command } from "commander";
import type { Core } from "../core/index.ts";
import { ValidationError } from "../core/shared/errors.ts";
import type { Delivery, WebhookInput } from "../core/webhooks/service.ts";
import { namedAccount } from "./networks.ts";
import { jsonOption, printList, printTable } from "./output.ts";
import { positiveInteger, type WithCore } from "./program.ts";

const SECRET_NOTE =
  "give this secret to the receiver now (it verifies the webhook-signature header); it is not shown again";
const ACCOUNT_OPTION = "only act if the endpoint belongs to this account";

interface UpdateOptions {
  url?: string;
  events?: string;
  enable?: boolean;
  disable?: boolean;
  account?: string;
}

function eventsText(events: "all" | string[]): string {
  return events === "all" ? "all" : events.join(",");
}

/** One line of at most `max` characters, control characters shown as spaces. */
function oneLine(text: string | null, max: number): string {
  if (!text) return "";
  const flat = Array.from(text, (c) => (c < " " || c === "\u007f" ? " " : c))
    .join("")
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function resultOf(attempt: Delivery["attempt_log"][number]): string {
  return attempt.status_code !== null ? `HTTP ${attempt.status_code}` : oneLine(attempt.error, 70);
}

/** Waits for the worker to finish a delivery's first attempt; undefined when none came in time. */
async function awaitAttempt(core: Core, accountId: number, id: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // The counter sits in the delivery's row with its status; the log is read after it.
    const delivery = await core.webhooks.delivery(accountId, id);
    if (delivery.attempts > 0) return delivery;
    if (Date.now() > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export function registerWebhookCommands(program: Command, withCore: WithCore): void {
  const webhooks = program
    .command("webhooks")
    .description("manage webhook endpoints (signed HTTP POSTs of an account's events) and their deliveries");

  webhooks
    .command("create")
    .description("create an endpoint and print its secret (alone on stdout; it is not shown again)")
    .requiredOption(
      "--url <url>",
      "where events are POSTed (https://; http:// only with WEBHOOK_ALLOW_PRIVATE=1)",
    )
    .option("--events <kinds>", 'comma-separated event kinds, or "all"', "all")
    .option("--disabled", "create it disabled")
    .option("--account <name>", "the owning account (default: the account named default)")
    .action((options: { url: string; events: string; disabled?: boolean; account?: string }) =>
      withCore(async (core) => {
        const input: WebhookInput = { url: options.url, events: options.events, enabled: !options.disabled };
        // Refuse bad input before anything is written, even the default account.
        core.webhooks.validateNew(input);
        const account = await core.accounts.resolve(options.account);
        const { webhook, secret } = await core.webhooks.create(account.id, input);
        console.error(
          `created webhook endpoint ${webhook.id} for account ${account.name} ` +
            `(events: ${eventsText(webhook.events)}${webhook.enabled ? "" : ", disabled"}); ${SECRET_NOTE}`,
        );
        for (const warning of core.webhooks.urlWarnings(webhook.url)) console.error(`warning: ${warning}`);
        console.log(secret);
      }),
    );

  jsonOption(webhooks.command("list").description("list endpoints (never their secrets)"))
    .option("--account <name>", "only this account's endpoints")
    .action((options: { account?: string; json?: boolean }) =>
      withCore(async (core) => {
        const rows = await core.webhooks.listAll(await namedAccount(core, options.account));
        printList(
          options.json,
          rows,
          ["ID", "ACCOUNT", "URL", "EVENTS", "ENABLED", "CREATED", "NOTE"],
          (w) => [
            w.id,
            w.account,
            w.url,
            eventsText(w.events),
            w.enabled ? "yes" : "no",
            w.created,
            w.disabled_reason,
          ],
        );
      }),
    );

  webhooks
    .command("update")
    .description("change an endpoint's URL, events or state (--enable also clears a 410's disabling)")
    .argument("<id>", "the endpoint's id (see webhooks list)", positiveInteger)
    .option("--url <url>", "where events are POSTed")
    .option("--events <kinds>", 'comma-separated event kinds, or "all"')
    .option("--enable", "deliver again")
    .option("--disable", "stop delivering (pending deliveries fail)")
    .option("--account <name>", ACCOUNT_OPTION)
    .action((id: number, options: UpdateOptions) =>
      withCore(async (core) => {
        if (options.enable && options.disable)
          throw new ValidationError("give --enable or --disable, not both");
        const input: WebhookInput = {
          url: options.url,
          events: options.events,
          enabled: options.enable ? true : options.disable ? false : undefined,
        };
        if (Object.values(input).every((value) => value === undefined)) {
          throw new ValidationError("nothing to change: give --url, --events, --enable or --disable");
        }
        const owner = await core.webhooks.locate(id, await namedAccount(core, options.account));
        const webhook = await core.webhooks.update(owner.account_id, id, input);
        console.log(
          `updated webhook endpoint ${webhook.id}: ${webhook.url} (events: ${eventsText(webhook.events)}, ` +
            `${webhook.enabled ? "enabled" : "disabled"})`,
        );
        if (input.url !== undefined) {
          for (const warning of core.webhooks.urlWarnings(webhook.url)) console.error(`warning: ${warning}`);
        }
      }),
    );

  webhooks
    .command("rotate-secret")
    .description("replace an endpoint's secret and print the new one alone on stdout")
    .argument("<id>", "the endpoint's id (see webhooks list)", positiveInteger)
    .option("--account <name>", ACCOUNT_OPTION)
    .action((id: number, options: { account?: string }) =>
      withCore(async (core) => {
        const owner = await core.webhooks.locate(id, await namedAccount(core, options.account));
        const { webhook, secret } = await core.webhooks.rotateSecret(owner.account_id, id);
        console.error(
          `new secret for webhook endpoint ${webhook.id}; the old one no longer signs; ${SECRET_NOTE}`,
        );
        console.log(secret);
      }),
    );

  webhooks
    .command("delete")
    .description("delete an endpoint with its deliveries and attempt log")
    .argument("<id>", "the endpoint's id (see webhooks list)", positiveInteger)
    .option("--account <name>", ACCOUNT_OPTION)
    .action((id: number, options: { account?: string }) =>
      withCore(async (core) => {
        const owner = await core.webhooks.locate(id, await namedAccount(core, options.account));
        const webhook = await core.webhooks.delete(owner.account_id, id);
        console.log(`deleted webhook endpoint ${webhook.id} (${webhook.url})`);
      }),
    );

  webhooks
    .command("test")
    .description("send a webhook.test event to this endpoint now and wait for the worker's attempt")
    .argument("<id>", "the endpoint's id (see webhooks list)", positiveInteger)
    .option("--no-wait", "queue it and return")
    .option("--account <name>", ACCOUNT_OPTION)
    .action((id: number, options: { wait: boolean; account?: string }) =>
      withCore(async (core) => {
        const owner = await core.webhooks.locate(id, await namedAccount(core, options.account));
        const queued = await core.webhooks.sendTest(owner.account_id, id);
        const label = `test delivery ${queued.id} (webhook-id ${queued.message_id})`;
        if (!options.wait) return console.log(`queued ${label}`);
        const done = await awaitAttempt(core, owner.account_id, queued.id, 15_000);
        const attempt = done?.attempt_log[0];
        if (!done || !attempt) {
          console.error(
            `queued ${label}, but no worker attempted it within 15 s: ` +
              "is the server (or wisp worker) running? " +
              `See: wisp webhooks deliveries ${id}`,
          );
          process.exitCode = 1;
          return;
        }
        const line = `${label}: ${resultOf(attempt)} in ${attempt.duration_ms} ms`;
        if (done.status === "succeeded") return console.log(`${line}; delivered`);
        console.error(`${line}; ${done.status === "pending" ? "it will be retried" : "failed"}`);
        process.exitCode = 1;
      }),
    );

  webhooks
    .command("deliveries")
    .description("show an endpoint's recent deliveries with every attempt (time, result, duration, response)")
    .argument("<id>", "the endpoint's id (see webhooks list)", positiveInteger)
    .option("--limit <n>", "how many deliveries, newest first", positiveInteger, 20)
    .option("--json", "print JSON (full response excerpts)")
    .option("--account <name>", ACCOUNT_OPTION)
    .action((id: number, options: { limit: number; json?: boolean; account?: string }) =>
      withCore(async (core) => {
        const owner = await core.webhooks.locate(id, await namedAccount(core, options.account));
        const deliveries = await core.webhooks.deliveries(owner.account_id, id, options.limit);
        if (options.json) return console.log(JSON.stringify(deliveries, null, 2));
        const rows = deliveries.flatMap((d) => {
          const head = [d.id, d.message_id, d.event, d.status];
          if (d.attempt_log.length === 0) return [[...head, "-", "", d.next_attempt ? "due" : "", "", ""]];
          return d.attempt_log.map((a) => [
            ...head,
            a.attempt,
            a.time,
            resultOf(a),
            a.duration_ms,
            oneLine(a.response, 60),
          ]);
        });
        printTable(
          ["DELIVERY", "WEBHOOK-ID", "EVENT", "STATUS", "ATTEMPT", "TIME", "RESULT", "MS", "RESPONSE"],
          rows,
        );
      }),
    );

  webhooks
    .command("resend")
    .description("send a delivery again (a new attempt sequence, the same webhook-id)")
    .argument("<delivery-id>", "the delivery's id (see webhooks deliveries)", positiveInteger)
    .option("--account <name>", "only act if the delivery belongs to this account")
    .action((id: number, options: { account?: string }) =>
      withCore(async (core) => {
        const accountId = await core.webhooks.locateDelivery(id, await namedAccount(core, options.account));
        const delivery = await core.webhooks.resend(accountId, id);
        console.log(
          `queued delivery ${delivery.id} (webhook-id ${delivery.message_id}, ${delivery.event}) again`,
        );
      }),
    );
}
