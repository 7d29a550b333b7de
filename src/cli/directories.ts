// `wisp directory ...`: an account's LDAP / Active Directory sources (issue 30): create, update,
// list, show, delete, and sync now (what changed is printed). The bind password is write-only:
// read from --bind-password-stdin (or the option), never printed. The CA to trust comes from a file.
import { readFile } from "node:fs/promises";
import { type Command, InvalidArgumentError } from "commander";
import { NUMBER_FIELDS } from "../core/directories/rules.ts";
import type { Directory, DirectoryInput } from "../core/directories/service.ts";
import type { SyncReport } from "../core/directories/sync.ts";
import type { Core } from "../core/index.ts";
import { printFields } from "./networks.ts";
import { jsonOption, printList, secretOption } from "./output.ts";
import type { WithCore } from "./program.ts";

interface DirectoryOptions {
  server?: string[];
  startTls?: boolean;
  caFile?: string;
  bindDn?: string;
  bindPassword?: string;
  bindPasswordStdin?: boolean;
  userBase?: string;
  set?: string[];
  map?: string[];
  clearMappings?: boolean;
  enabled?: boolean;
  account?: string;
}

const repeat =
  (rule: string) =>
  (text: string, previous: string[] = []) => {
    if (text.indexOf("=") < 1) throw new InvalidArgumentError(rule);
    return [...previous, text];
  };
const collect = (text: string, previous: string[] = []) => [...previous, text];
const split = (text: string) => [text.slice(0, text.indexOf("=")).trim(), text.slice(text.indexOf("=") + 1)];

/** --set field=value for the settings without an option of their own (numbers become numbers). */
function settings(list: string[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const item of list ?? []) {
    const [field, value] = split(item) as [string, string];
    if (field === "start_tls") out[field] = value === "true" || value === "yes";
    else out[field] = field in NUMBER_FIELDS && /^-?\d+$/.test(value) ? Number(value) : value;
  }
  return out;
}

async function inputOf(options: DirectoryOptions): Promise<DirectoryInput> {
  const input: DirectoryInput = {
    ...settings(options.set),
    ...(options.server ? { servers: options.server } : {}),
    ...(options.startTls !== undefined ? { start_tls: options.startTls } : {}),
    ...(options.caFile ? { ca_pem: await readFile(options.caFile, "utf8") } : {}),
    ...(options.bindDn !== undefined ? { bind_dn: options.bindDn } : {}),
    ...(options.userBase !== undefined ? { user_base: options.userBase } : {}),
    ...(options.enabled !== undefined ? { enabled: options.enabled } : {}),
  };
  const password = await secretOption(options.bindPassword, options.bindPasswordStdin, "--bind-password");
  if (password !== undefined) input.bind_password = password;
  if (options.clearMappings) input.group_mappings = [];
  else if (options.map)
    input.group_mappings = options.map.map((m) => {
      const [directory_group, group] = split(m) as [string, string];
      return { directory_group, group: group.trim() };
    });
  return input;
}

function fieldOptions(command: Command): Command {
  return command
    .option(
      "--server <url>",
      "ldap://host[:port] or ldaps://host[:port] (repeatable: failover order)",
      collect,
    )
    .option("--start-tls", "StartTLS on ldap:// servers before any bind")
    .option("--ca-file <path>", "PEM certificates to trust for the servers")
    .option("--bind-dn <dn>", "the service account's DN")
    .option("--bind-password <password>", "its password (visible in ps: prefer --bind-password-stdin)")
    .option("--bind-password-stdin", "read the bind password from standard input")
    .option("--user-base <dn>", "where users are searched")
    .option(
      "--set <field=value>",
      "any other setting (user_filter, username_attribute, disabled_mode, nt_hash_attribute, group_base, sync_interval, ...; repeatable)",
      repeat("must be field=value"),
    )
    .option(
      "--map <directory-group=group>",
      "map a directory group to a Wisp group (repeatable; replaces the mapping)",
      repeat('must be "directory group=Wisp group"'),
    )
    .option("--clear-mappings", "remove the group mapping")
    .option("--account <name>", "the account (default: the account named default)");
}

function show(d: Directory): void {
  printFields([
    ["id", d.id],
    ["name", d.name],
    ["enabled", d.enabled ? "yes" : "no"],
    ["servers", d.servers.join(" ")],
    ["start_tls", d.start_tls ? "yes" : "no"],
    ["ca_pem", d.ca_pem ? "set" : "system"],
    ["bind_dn", d.bind_dn],
    ["bind_password", d.bind_password_set ? "set (never shown)" : "none"],
    ["user_base", d.user_base],
    ["user_filter", d.user_filter],
    ["username_attribute", d.username_attribute],
    ["disabled_mode", d.disabled_mode],
    ["nt_hash_attribute", d.nt_hash_attribute],
    ["group_base", d.group_base],
    ["group_mappings", d.group_mappings.map((m) => `${m.directory_group}=${m.group}`).join(", ")],
    ["sync_interval", `${d.sync_interval} min`],
    ["group_cache_seconds", d.group_cache_seconds],
    ["server_status", d.server_status.map((s) => `${s.url} ${s.state}`).join(", ")],
    [
      "last_sync",
      d.last_sync
        ? `${d.last_sync.finished} ${d.last_sync.ok ? "ok" : `failed: ${d.last_sync.error}`}`
        : "never",
    ],
  ]);
}

function printReport(report: SyncReport): void {
  const counts = Object.entries(report.counts)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  console.log(
    `${report.directory}: ${report.ok ? "synced" : `failed: ${report.error}`}; ${report.seen} users seen; ${counts}`,
  );
  for (const c of report.changes) console.log(`  ${c.change}\t${c.username}${c.why ? `\t(${c.why})` : ""}`);
  if (report.more > 0) console.log(`  ... and ${report.more} more`);
}

const accountId = async (core: Core, name: string | undefined) => (await core.accounts.resolve(name)).id;

/** Runs `fn` and closes the directory connections it opened (they would keep the process alive). */
const withDirectories = <T>(withCore: WithCore, fn: (core: Core) => Promise<T>) =>
  withCore(async (core) => {
    try {
      return await fn(core);
    } finally {
      await core.directories.runtime.close();
    }
  });

export function registerDirectoryCommands(program: Command, withCore: WithCore): void {
  const directory = program
    .command("directory")
    .description("manage LDAP / Active Directory sources and sync their users");

  fieldOptions(directory.command("create"))
    .description("create a directory and show it")
    .argument("<name>", "short name: 1-20 of a-z 0-9 -; fixed")
    .option("--disabled", "create it disabled")
    .action((name: string, options: DirectoryOptions & { disabled?: boolean }) =>
      withDirectories(withCore, async (core) => {
        const input = { ...(await inputOf(options)), name, enabled: !options.disabled };
        const created = await core.directories.create(await accountId(core, options.account), input);
        console.error(`created directory ${created.id} "${created.name}"`);
        show(created);
      }),
    );

  fieldOptions(directory.command("update"))
    .description("change a directory's settings (only those given)")
    .argument("<directory>", "id or name")
    .option("--enable", "enable it")
    .option("--disable", "disable it")
    .action((which: string, options: DirectoryOptions & { enable?: boolean; disable?: boolean }) =>
      withDirectories(withCore, async (core) => {
        const input = await inputOf(options);
        if (options.enable || options.disable) input.enabled = Boolean(options.enable);
        show(await core.directories.update(await accountId(core, options.account), which, input));
      }),
    );

  jsonOption(directory.command("list").description("list directories (never their bind passwords)"))
    .option("--account <name>", "the account (default: the account named default)")
    .action((options: { account?: string; json?: boolean }) =>
      withDirectories(withCore, async (core) => {
        const rows = await core.directories.list(await accountId(core, options.account));
        printList(options.json, rows, ["ID", "NAME", "ENABLED", "SERVERS", "LAST SYNC"], (d) => [
          d.id,
          d.name,
          d.enabled ? "yes" : "no",
          d.servers.join(" "),
          d.last_sync ? `${d.last_sync.finished} ${d.last_sync.ok ? "ok" : "failed"}` : "never",
        ]);
      }),
    );

  directory
    .command("show")
    .description("show a directory")
    .argument("<directory>", "id or name")
    .option("--account <name>", "the account (default: the account named default)")
    .action((which: string, options: { account?: string }) =>
      withDirectories(withCore, async (core) =>
        show(await core.directories.get(await accountId(core, options.account), which)),
      ),
    );

  directory
    .command("delete")
    .description("delete a directory (its shadow users stay, without a password)")
    .argument("<directory>", "id or name")
    .option("--account <name>", "the account (default: the account named default)")
    .action((which: string, options: { account?: string }) =>
      withDirectories(withCore, async (core) => {
        await core.directories.delete(await accountId(core, options.account), which);
        console.error(`deleted directory ${which}`);
      }),
    );

  directory
    .command("sync")
    .description("pull users and groups now: create, update and disable shadow users; print what changed")
    .argument("<directory>", "id or name")
    .option("--account <name>", "the account (default: the account named default)")
    .option("--json", "print the report as JSON")
    .action((which: string, options: { account?: string; json?: boolean }) =>
      withDirectories(withCore, async (core) => {
        const report = await core.directories.sync(await accountId(core, options.account), which);
        if (options.json) console.log(JSON.stringify(report, null, 2));
        else printReport(report);
        if (!report.ok) process.exitCode = 1;
      }),
    );
}
