// `wisp plans ...`: an account's plans (bandwidth, quotas, validity, devices) and who has which.
// There are no user, group or voucher commands in the CLI: `wisp plans assign` sets the plan of a
// user, a group or a voucher batch.
import type { Command } from "commander";
import type { Core } from "../core/index.ts";
import type { Plan, PlanInput } from "../core/plans/service.ts";
import { NotFoundError, ValidationError } from "../core/shared/errors.ts";
import { printFields } from "./networks.ts";
import { jsonOption, printList } from "./output.ts";
import { positiveInteger, type WithCore } from "./program.ts";

interface PlanOptions {
  name?: string;
  description?: string;
  download?: string;
  upload?: string;
  dataQuota?: string;
  dataPeriod?: string;
  timeQuota?: string;
  timePeriod?: string;
  validity?: string;
  devices?: string;
  role?: string;
  account?: string;
}

/** A figure option: digits, or "none" to clear it; anything else is refused by the service's rules. */
function figure(text: string | undefined, option: string): number | null | undefined {
  if (text === undefined) return undefined;
  if (text === "none" || text === "") return null;
  if (!/^\d{1,16}$/.test(text)) throw new ValidationError(`${option} must be a whole number, or none`);
  return Number(text);
}

function period(text: string | undefined): string | null | undefined {
  return text === undefined ? undefined : text === "none" || text === "" ? null : text;
}

function inputOf(options: PlanOptions): PlanInput {
  return {
    name: options.name,
    description: options.description,
    download_kbps: figure(options.download, "--download"),
    upload_kbps: figure(options.upload, "--upload"),
    data_quota: figure(options.dataQuota, "--data-quota"),
    data_period: period(options.dataPeriod),
    time_quota: figure(options.timeQuota, "--time-quota"),
    time_period: period(options.timePeriod),
    validity: figure(options.validity, "--validity"),
    devices: figure(options.devices, "--devices"),
    role: options.role,
  };
}

function fieldOptions(command: Command): Command {
  return command
    .option("--description <text>", "what the plan is for")
    .option("--download <kbit/s>", "download bandwidth in kbit/s (none: no limit)")
    .option("--upload <kbit/s>", "upload bandwidth in kbit/s (none: no limit)")
    .option("--data-quota <octets>", "octets in plus out per --data-period (none: no limit)")
    .option("--data-period <period>", "day, month or validity")
    .option("--time-quota <seconds>", "seconds online per --time-period (none: no limit)")
    .option("--time-period <period>", "day, month or validity")
    .option("--validity <seconds>", "the plan ends this long after the first session (none: never)")
    .option("--devices <n>", "sessions open at once (none: no limit)")
    .option("--role <name>", "Aruba / Meraki networks: the role or group policy carrying the bandwidth")
    .option("--account <name>", "the owning account (default: the account named default)");
}

const show = (value: number | null, unit = "") => (value === null ? "-" : `${value}${unit}`);

function printPlan(plan: Plan): void {
  printFields([
    ["id", plan.id],
    ["name", plan.name],
    ["description", plan.description],
    ["download", show(plan.download_kbps, " kbit/s")],
    ["upload", show(plan.upload_kbps, " kbit/s")],
    ["data quota", plan.data_quota === null ? "-" : `${plan.data_quota} octets per ${plan.data_period}`],
    ["time quota", plan.time_quota === null ? "-" : `${plan.time_quota} s per ${plan.time_period}`],
    ["validity", show(plan.validity, " s from first use")],
    ["devices", show(plan.devices)],
    ["role", plan.role],
    ["created", plan.created],
    ["updated", plan.updated],
  ]);
}

/** Sets the plan of one user, group or voucher batch (the one option given). */
async function assign(
  core: Core,
  accountId: number,
  planId: number | null,
  target: { user?: string; group?: string; batch?: number },
): Promise<string> {
  const given = [target.user, target.group, target.batch].filter((t) => t !== undefined).length;
  if (given !== 1) throw new ValidationError("give exactly one of --user, --group, --batch");
  if (target.user !== undefined) {
    const found = (
      await core.users.list(accountId, { search: target.user }, { page: 1, limit: 1000 })
    ).data.find((u) => u.username === target.user);
    if (!found) throw new NotFoundError(`user ${target.user} not found`);
    await core.users.update(accountId, found.id, { plan_id: planId });
    return `user ${target.user}`;
  }
  if (target.group !== undefined) {
    const found = (await core.groups.list(accountId, target.group, { page: 1, limit: 1000 })).data.find(
      (g) => g.name === target.group,
    );
    if (!found) throw new NotFoundError(`group ${target.group} not found`);
    await core.groups.update(accountId, found.id, { plan_id: planId });
    return `group ${target.group}`;
  }
  await core.vouchers.setBatchPlan(accountId, target.batch!, planId);
  return `voucher batch ${target.batch}`;
}

export function registerPlanCommands(program: Command, withCore: WithCore): void {
  const plans = program.command("plans").description("manage plans: bandwidth, quotas, validity and devices");

  jsonOption(plans.command("list").description("list an account's plans"))
    .option("--account <name>", "the account (default: the account named default)")
    .action((options: { account?: string; json?: boolean }) =>
      withCore(async (core) => {
        const account = await core.accounts.resolve(options.account);
        const rows = (await core.plans.list(account.id, { page: 1, limit: 1000 })).data;
        printList(
          options.json,
          rows,
          ["ID", "NAME", "DOWN", "UP", "DATA", "TIME", "VALIDITY", "DEVICES"],
          (p) => [
            p.id,
            p.name,
            show(p.download_kbps),
            show(p.upload_kbps),
            p.data_quota === null ? "-" : `${p.data_quota}/${p.data_period}`,
            p.time_quota === null ? "-" : `${p.time_quota}/${p.time_period}`,
            show(p.validity),
            show(p.devices),
          ],
        );
      }),
    );

  jsonOption(
    plans.command("show").description("show a plan and who uses it").argument("<plan>", "id or name"),
  )
    .option("--account <name>", "the account (default: the account named default)")
    .action((ref: string, options: { account?: string; json?: boolean }) =>
      withCore(async (core) => {
        const account = await core.accounts.resolve(options.account);
        const plan = await core.plans.find(account.id, ref);
        const uses = await core.plans.uses(account.id, plan.id);
        if (options.json) return console.log(JSON.stringify({ ...plan, uses }, null, 2));
        printPlan(plan);
        printFields([
          ["used by", `${uses.users} user(s), ${uses.groups} group(s), ${uses.batches} batch(es)`],
        ]);
      }),
    );

  fieldOptions(
    plans.command("create").description("create a plan").requiredOption("--name <name>", "the plan's name"),
  ).action((options: PlanOptions) =>
    withCore(async (core) => {
      const account = await core.accounts.resolve(options.account);
      const plan = await core.plans.create(account.id, inputOf(options));
      console.log(`created plan ${plan.id} "${plan.name}"`);
    }),
  );

  fieldOptions(plans.command("update").description("change a plan's fields").argument("<plan>", "id or name"))
    .option("--name <name>", "a new name")
    .action((ref: string, options: PlanOptions) =>
      withCore(async (core) => {
        const account = await core.accounts.resolve(options.account);
        const plan = await core.plans.update(
          account.id,
          (await core.plans.find(account.id, ref)).id,
          inputOf(options),
        );
        console.log(`updated plan ${plan.id} "${plan.name}"`);
      }),
    );

  plans
    .command("delete")
    .description("delete a plan no user, group or voucher batch uses")
    .argument("<plan>", "id or name")
    .option("--account <name>", "the account (default: the account named default)")
    .action((ref: string, options: { account?: string }) =>
      withCore(async (core) => {
        const account = await core.accounts.resolve(options.account);
        const plan = await core.plans.delete(account.id, (await core.plans.find(account.id, ref)).id);
        console.log(`deleted plan ${plan.id} "${plan.name}"`);
      }),
    );

  plans
    .command("assign")
    .description("set the plan of a user, a group or a voucher batch (none: clear it)")
    .argument("<plan>", "id or name, or none")
    .option("--user <username>", "a user (its own plan wins over its groups')")
    .option("--group <name>", "a group (for members without a plan of their own)")
    .option("--batch <id>", "a voucher batch", positiveInteger)
    .option("--account <name>", "the account (default: the account named default)")
    .action((ref: string, options: { user?: string; group?: string; batch?: number; account?: string }) =>
      withCore(async (core) => {
        const account = await core.accounts.resolve(options.account);
        const planId = ref === "none" ? null : (await core.plans.find(account.id, ref)).id;
        const target = await assign(core, account.id, planId, options);
        console.log(`${target}: plan ${planId === null ? "none" : ref}`);
      }),
    );
}
