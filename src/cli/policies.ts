// `wisp policy ...`: an account's ordered policy rules (src/core/policies). Conditions and outcome
// are given as options; list values are comma-separated. Every rule is the service's.
import type { Command } from "commander";
import type { Explanation } from "../core/policies/explain.ts";
import type { PolicyConditions, PolicyOutcome } from "../core/policies/rules.ts";
import type { Policy, PolicyInput } from "../core/policies/service.ts";
import { printFields } from "./networks.ts";
import { jsonOption, printList } from "./output.ts";
import { positiveInteger, type WithCore } from "./program.ts";

interface PolicyOptions {
  name?: string;
  description?: string;
  position?: number;
  network?: string;
  ssid?: string;
  nasIdentifier?: string;
  group?: string;
  method?: string;
  portalMethod?: string;
  day?: string;
  time?: string;
  device?: string;
  reject?: string;
  vlan?: string;
  filterId?: string;
  arubaRole?: string;
  airespaceAcl?: string;
  ciscoAvpair?: string[];
  plan?: string;
  sessionTimeout?: string;
  idleTimeout?: string;
  anyConditions?: boolean;
  account?: string;
}

const list = (text: string | undefined) =>
  text === undefined
    ? undefined
    : text
        .split(",")
        .map((v) => v.trim())
        .filter((v) => v !== "");
/** Numbers stay numbers; anything else goes to the service as is, which names the field. */
const numbers = (text: string | undefined) => list(text)?.map((v) => (/^\d+$/.test(v) ? Number(v) : v));
const number = (text: string | undefined) =>
  text === undefined ? undefined : /^\d+$/.test(text) ? Number(text) : text;

function conditionsOf(o: PolicyOptions): PolicyConditions | undefined {
  const c: Record<string, unknown> = {
    networks: numbers(o.network),
    ssids: list(o.ssid),
    nas_identifiers: list(o.nasIdentifier),
    groups: numbers(o.group),
    methods: list(o.method),
    portal_methods: list(o.portalMethod),
    days: list(o.day)?.map((d) => d.toLowerCase()),
    times: list(o.time),
    device: o.device,
  };
  for (const k of Object.keys(c)) if (c[k] === undefined) delete c[k];
  return Object.keys(c).length > 0 || o.anyConditions ? (c as PolicyConditions) : undefined;
}

function outcomeOf(o: PolicyOptions): PolicyOutcome | undefined {
  if (o.reject !== undefined) return { action: "reject", reason: o.reject } as PolicyOutcome;
  const a: Record<string, unknown> = {
    action: "accept",
    vlan: number(o.vlan),
    filter_id: o.filterId,
    aruba_user_role: o.arubaRole,
    airespace_acl_name: o.airespaceAcl,
    cisco_avpairs: o.ciscoAvpair,
    plan_id: number(o.plan),
    session_timeout: number(o.sessionTimeout),
    idle_timeout: number(o.idleTimeout),
  };
  for (const k of Object.keys(a)) if (a[k] === undefined) delete a[k];
  return a as unknown as PolicyOutcome;
}

function fieldOptions(command: Command): Command {
  return command
    .option("--name <name>", "the policy's name (unique in the account)")
    .option("--description <text>", "a note")
    .option(
      "--position <n>",
      "1-based place in the list (default: last, before the default rule)",
      positiveInteger,
    )
    .option("--network <ids>", "condition: network ids")
    .option("--ssid <ssids>", "condition: SSIDs from Called-Station-Id, exact or globs (* ?)")
    .option("--nas-identifier <ids>", "condition: NAS-Identifiers, exact or globs")
    .option("--group <ids>", "condition: group ids (the user is in one)")
    .option("--method <methods>", "condition: PAP, CHAP, MSCHAPv2, PEAP, TTLS, TLS, MAB")
    .option("--portal-method <methods>", "condition: voucher, password, clickthrough, registration, idp")
    .option("--day <days>", "condition: mon,tue,wed,thu,fri,sat,sun (local)")
    .option("--time <ranges>", "condition: HH:MM-HH:MM local ranges (22:00-06:00 runs over midnight)")
    .option("--device <state>", "condition: registered or unregistered")
    .option("--any-conditions", "update: remove every condition (the rule matches every request)")
    .option("--reject <reason>", "outcome: reject with this Reply-Message (else accept)")
    .option("--vlan <id>", "outcome: VLAN 1-4094 (RFC 3580 Tunnel attributes)")
    .option("--filter-id <name>", "outcome: Filter-Id")
    .option("--aruba-role <role>", "outcome: Aruba-User-Role")
    .option("--airespace-acl <name>", "outcome: Airespace-ACL-Name")
    .option(
      "--cisco-avpair <pair>",
      "outcome: a Cisco-AVPair (repeat for more)",
      (v: string, all: string[] = []) => [...all, v],
    )
    .option("--plan <id>", "outcome: a plan's id")
    .option("--session-timeout <seconds>", "outcome: Session-Timeout (never lengthens a cap)")
    .option("--idle-timeout <seconds>", "outcome: Idle-Timeout")
    .option("--account <name>", "the account (default: the account named default)");
}

/** One line per condition and outcome field, as `show` and `create` print them. */
function printPolicy(p: Policy): void {
  printFields([
    ["id", p.id],
    ["name", p.name],
    ["position", p.position],
    ["description", p.description],
    ...Object.entries(p.conditions).map(([k, v]): [string, string] => [`if ${k}`, [v].flat().join(", ")]),
    ...Object.entries(p.outcome).map(([k, v]): [string, string] => [`then ${k}`, [v].flat().join(", ")]),
  ]);
  for (const w of p.warnings) console.log(`warning: ${w.message}`);
}

function printExplanation(e: Explanation): void {
  console.log(
    `facts: ${Object.entries(e.facts)
      .filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0))
      .map(([k, v]) => `${k}=${[v].flat().join(",")}`)
      .join(" ")}`,
  );
  for (const s of e.skipped) console.log(`  ${s.position}. ${s.name}: no, ${s.message}`);
  const m = e.matched;
  console.log(`  ${m.position}. ${m.name}: MATCHED${m.default ? " (the default rule)" : ""}`);
  console.log(e.decision === "accept" ? "decision: accept" : `decision: reject (${e.reason})`);
  for (const r of e.reply) console.log(`  ${r.attribute} = ${r.value}`);
}

export function registerPolicyCommands(program: Command, withCore: WithCore): void {
  const policy = program
    .command("policy")
    .description("manage policies: ordered rules applied after the credential check");
  const accountOption = (c: Command) =>
    c.option("--account <name>", "the account (default: the account named default)");

  jsonOption(
    accountOption(policy.command("list").description("list the policies in evaluation order, with warnings")),
  ).action((options: { account?: string; json?: boolean }) =>
    withCore(async (core) => {
      const account = await core.accounts.resolve(options.account);
      const l = await core.policies.list(account.id);
      if (options.json) return console.log(JSON.stringify(l, null, 2));
      printList(false, [...l.data, { ...l.default, id: "-" }], ["POS", "ID", "NAME", "IF", "THEN"], (p) => [
        p.position,
        p.id,
        p.name,
        "conditions" in p ? Object.keys(p.conditions).join(",") || "any" : "any",
        p.outcome.action === "reject"
          ? `reject: ${p.outcome.reason}`
          : Object.keys(p.outcome)
              .filter((k) => k !== "action")
              .join(",") || "accept",
      ]);
      for (const w of l.warnings) console.log(`warning: ${w.policy_id ?? "default"}: ${w.message}`);
    }),
  );

  accountOption(policy.command("show").description("show a policy").argument("<id-or-name>")).action(
    (idOrName: string, options: { account?: string }) =>
      withCore(async (core) => {
        const account = await core.accounts.resolve(options.account);
        printPolicy(await core.policies.get(account.id, await core.policies.resolve(account.id, idOrName)));
      }),
  );

  fieldOptions(policy.command("create"))
    .description("add a policy (accepts unless --reject)")
    .action((options: PolicyOptions) =>
      withCore(async (core) => {
        const account = await core.accounts.resolve(options.account);
        const input: PolicyInput = {
          name: options.name,
          description: options.description,
          position: options.position,
          conditions: conditionsOf(options) ?? {},
          outcome: outcomeOf(options),
        };
        const p = await core.policies.create(account.id, input);
        console.log(`created policy ${p.id} "${p.name}" at position ${p.position}`);
        for (const w of p.warnings) console.log(`warning: ${w.message}`);
      }),
    );

  fieldOptions(policy.command("update").argument("<id-or-name>"))
    .description(
      "change a policy: given conditions replace all conditions, a given outcome replaces the outcome",
    )
    .action((idOrName: string, options: PolicyOptions) =>
      withCore(async (core) => {
        const account = await core.accounts.resolve(options.account);
        const id = await core.policies.resolve(account.id, idOrName);
        const outcome = outcomeOf(options)!;
        const p = await core.policies.update(account.id, id, {
          name: options.name,
          description: options.description,
          position: options.position,
          conditions: conditionsOf(options),
          outcome: Object.keys(outcome).length > 1 || options.reject !== undefined ? outcome : undefined,
        });
        console.log(`updated policy ${p.id} "${p.name}"`);
        for (const w of p.warnings) console.log(`warning: ${w.message}`);
      }),
    );

  accountOption(policy.command("delete").description("delete a policy").argument("<id-or-name>")).action(
    (idOrName: string, options: { account?: string }) =>
      withCore(async (core) => {
        const account = await core.accounts.resolve(options.account);
        const id = await core.policies.resolve(account.id, idOrName);
        await core.policies.delete(account.id, id);
        console.log(`deleted policy ${id}`);
      }),
  );

  accountOption(
    policy
      .command("move")
      .description("move a policy to a position (the default rule stays last)")
      .argument("<id-or-name>")
      .argument("<position>", "1-based", positiveInteger),
  ).action((idOrName: string, position: number, options: { account?: string }) =>
    withCore(async (core) => {
      const account = await core.accounts.resolve(options.account);
      const id = await core.policies.resolve(account.id, idOrName);
      const l = await core.policies.move(account.id, id, position);
      console.log(l.data.map((p) => `${p.position}. ${p.name}`).join("\n"));
    }),
  );

  jsonOption(
    accountOption(
      policy
        .command("explain")
        .description("which rule a request with these facts meets, and why; nothing is sent or recorded")
        .requiredOption("--network <id>", "the network the request comes from", positiveInteger)
        .option("--user <username>", "the user (their groups and reply items)")
        .option("--ssid <ssid>", "the SSID")
        .option("--nas-identifier <id>", "the NAS-Identifier")
        .option("--method <method>", "PAP, CHAP, MSCHAPv2, PEAP, TTLS, TLS or MAB")
        .option("--portal-method <method>", "how a portal guest signed in")
        .option("--time <when>", "ISO 8601 date-time or Unix seconds (default: now)")
        .option("--mac <mac>", "the device's MAC"),
    ),
  ).action(
    (options: {
      network: number;
      user?: string;
      ssid?: string;
      nasIdentifier?: string;
      method?: string;
      portalMethod?: string;
      time?: string;
      mac?: string;
      account?: string;
      json?: boolean;
    }) =>
      withCore(async (core) => {
        const account = await core.accounts.resolve(options.account);
        const e = await core.policies.explain(account.id, {
          network_id: options.network,
          username: options.user,
          ssid: options.ssid,
          nas_identifier: options.nasIdentifier,
          method: options.method,
          portal_method: options.portalMethod,
          time: options.time,
          mac: options.mac,
        });
        if (options.json) console.log(JSON.stringify(e, null, 2));
        else printExplanation(e);
      }),
  );
}
