// `wisp devices ...`: the MAC addresses an account knows (printers, TVs, sensors; guests' remembered
// devices). Import and export are CSV (the columns of src/core/devices/rules.ts CSV_COLUMNS); an
// import is all or nothing and names the line and reason of every refused row.

import { once } from "node:events";
import { createReadStream, createWriteStream } from "node:fs";
import type { Command } from "commander";
import { ImportRefused } from "../core/devices/csv.ts";
import type { Device, DeviceInput } from "../core/devices/service.ts";
import { ValidationError } from "../core/shared/errors.ts";
import { printFields } from "./networks.ts";
import { jsonOption, printList } from "./output.ts";
import { positiveInteger, type WithCore } from "./program.ts";

interface DeviceOptions {
  name?: string;
  description?: string;
  user?: string;
  voucher?: string;
  group?: string;
  expires?: string;
  status?: string;
  account?: string;
}

async function inputOf(
  core: Parameters<Parameters<WithCore>[0]>[0],
  accountId: number,
  options: DeviceOptions,
): Promise<DeviceInput> {
  const ids = await core.devices.idsOf(accountId, {
    username: options.user,
    voucher: options.voucher,
    group: options.group,
  });
  return {
    name: options.name,
    description: options.description,
    status: options.status,
    expires: options.expires === undefined ? undefined : options.expires === "" ? null : options.expires,
    ...ids,
  };
}

function fieldOptions(command: Command): Command {
  return command
    .option("--name <name>", "what the device is")
    .option("--description <text>", "a note about the device")
    .option("--user <username>", "the owning user (its items, groups and quotas apply); empty: none")
    .option("--voucher <code>", "the owning voucher (its rules apply); empty: none")
    .option("--group <name>", "a group whose check and reply items apply; empty: none")
    .option(
      "--expires <when>",
      "refused from then on: ISO 8601 date or date-time, or Unix seconds; empty: never",
    )
    .option("--status <status>", "enabled or disabled (disabling disconnects its open sessions)")
    .option("--account <name>", "the owning account (default: the account named default)");
}

function describe(device: Device): string {
  return `device ${device.id} ${device.mac}${device.name ? ` "${device.name}"` : ""}`;
}

export function registerDeviceCommands(program: Command, withCore: WithCore): void {
  const devices = program
    .command("devices")
    .description("manage devices (MAC addresses for MAC authentication and remembered guests)");

  jsonOption(devices.command("list").description("list an account's devices"))
    .option("--search <text>", "a MAC (any notation), or part of one, a name or a description")
    .option("--account <name>", "the account (default: the account named default)")
    .action((options: { search?: string; account?: string; json?: boolean }) =>
      withCore(async (core) => {
        const account = await core.accounts.resolve(options.account);
        const rows: Device[] = [];
        for (let page = 1; ; page++) {
          const result = await core.devices.list(
            account.id,
            { search: options.search },
            { page, limit: 1000 },
          );
          rows.push(...result.data);
          if (result.data.length < 1000) break;
        }
        printList(
          options.json,
          rows,
          ["ID", "MAC", "NAME", "STATUS", "KIND", "OWNER", "EXPIRES", "LAST-SEEN"],
          (d) => [
            d.id,
            d.mac,
            d.name,
            d.status,
            d.kind,
            d.user_id ? `user ${d.user_id}` : d.voucher_id ? `voucher ${d.voucher_id}` : "",
            d.expires,
            d.last_seen,
          ],
        );
      }),
    );

  fieldOptions(devices.command("add"))
    .description("register a device by its MAC (any common notation)")
    .argument("<mac>", "aa:bb:cc:dd:ee:ff, AA-BB-CC-DD-EE-FF, aabbccddeeff or aabb.ccdd.eeff")
    .action((mac: string, options: DeviceOptions) =>
      withCore(async (core) => {
        const account = await core.accounts.resolve(options.account);
        const device = await core.devices.create(account.id, {
          mac,
          ...(await inputOf(core, account.id, options)),
        });
        console.log(`added ${describe(device)} to account ${account.name}`);
      }),
    );

  fieldOptions(devices.command("update"))
    .description("change a device (by its MAC or id)")
    .argument("<mac-or-id>", "the device's MAC, or its id")
    .option("--mac <mac>", "a new MAC address")
    .action((which: string, options: DeviceOptions & { mac?: string }) =>
      withCore(async (core) => {
        const accountId = (await core.accounts.resolve(options.account)).id;
        const current = await find(core, accountId, which);
        const input = { mac: options.mac, ...(await inputOf(core, accountId, options)) };
        if (Object.values(input).every((v) => v === undefined))
          throw new ValidationError("nothing to change");
        console.log(`updated ${describe(await core.devices.update(accountId, current.id, input))}`);
      }),
    );

  devices
    .command("show")
    .description("show a device with its latest sessions and authentications")
    .argument("<mac-or-id>", "the device's MAC, or its id")
    .option("--account <name>", "the account (default: the account named default)")
    .action((which: string, options: { account?: string }) =>
      withCore(async (core) => {
        const accountId = (await core.accounts.resolve(options.account)).id;
        const device = await find(core, accountId, which);
        const { authentications } = await core.devices.activity(accountId, device.id, 5);
        printFields([
          ...Object.entries(device).map(([k, v]) => [k, v] as [string, string | number | null]),
          [
            "latest authentications",
            authentications.map((a) => `${a.time} ${a.reply} ${a.reason ?? ""}`.trim()).join("; "),
          ],
        ]);
      }),
    );

  devices
    .command("remove")
    .description("forget a device (by its MAC or id); its open sessions are disconnected")
    .argument("<mac-or-id>", "the device's MAC, or its id")
    .option("--account <name>", "the account (default: the account named default)")
    .action((which: string, options: { account?: string }) =>
      withCore(async (core) => {
        const accountId = (await core.accounts.resolve(options.account)).id;
        const device = await find(core, accountId, which);
        console.log(`removed ${describe(await core.devices.delete(accountId, device.id))}`);
      }),
    );

  devices
    .command("import")
    .description(
      "import devices from CSV, all or nothing (header: mac,name,description,status,username,voucher,group,expires)",
    )
    .argument("<file>", "the CSV file, or - for standard input")
    .option("--account <name>", "the account (default: the account named default)")
    .action((file: string, options: { account?: string }) =>
      withCore(async (core) => {
        const account = await core.accounts.resolve(options.account);
        const source = file === "-" ? process.stdin : createReadStream(file);
        try {
          const { created } = await core.devices.importCsv(account.id, source, (rows) => {
            if (rows % 10_000 === 0) console.error(`read ${rows} rows`);
          });
          console.log(`imported ${created} devices into account ${account.name}`);
        } catch (error) {
          if (!(error instanceof ImportRefused)) throw error;
          for (const p of error.problems) console.error(`line ${p.line}: ${p.message}`);
          if (error.count > error.problems.length) {
            console.error(`... and ${error.count - error.problems.length} more`);
          }
          throw new ValidationError(`import refused: ${error.count} problem(s); nothing was imported`);
        }
      }),
    );

  devices
    .command("export")
    .description("write an account's devices as CSV (to standard output, or --output)")
    .option("--output <file>", "write to this file instead of standard output")
    .option("--account <name>", "the account (default: the account named default)")
    .action((options: { output?: string; account?: string }) =>
      withCore(async (core) => {
        const account = await core.accounts.resolve(options.account);
        const out = options.output ? createWriteStream(options.output) : process.stdout;
        for await (const chunk of core.devices.exportCsv(account.id)) {
          if (!out.write(chunk)) await once(out, "drain");
        }
        if (options.output) await new Promise<void>((resolve) => out.end(resolve));
      }),
    );
}

/** A device by MAC (any notation) or by id. */
async function find(core: Parameters<Parameters<WithCore>[0]>[0], accountId: number, which: string) {
  if (/^\d{1,9}$/.test(which)) return core.devices.get(accountId, positiveInteger(which));
  return core.devices.getByMac(accountId, which);
}
