// The `wisp` command tree, built apart from main.ts (which parses process.argv with it), so that a
// test can build the same tree, run a command in-process and read the registry of what each
// command does to the data: READ_ONLY below is the list of commands that change nothing.
import os from "node:os";
import { Command, InvalidArgumentError, type OutputConfiguration } from "commander";
import { loadConfig } from "../config.ts";
import { type Actor, runAs } from "../core/audit/context.ts";
import { type Core, createCore } from "../core/index.ts";
import { databaseLocation } from "../db/database.ts";
import { DasClient } from "../radius/das-client.ts";
import { openMigratedDatabase } from "../startup.ts";
import { VERSION } from "../version.ts";
import { registerAccountCommands } from "./accounts.ts";
import { registerAdminCommands } from "./admins.ts";
import { registerBackupCommand } from "./backup.ts";
import { registerCertCommands } from "./certs.ts";
import { registerDemoCommands } from "./demo.ts";
import { registerDeviceCommands } from "./devices.ts";
import { registerDirectoryCommands } from "./directories.ts";
import { registerIdpCommands } from "./idp.ts";
import { registerImportCommands } from "./import.ts";
import { registerKeyCommands } from "./keys.ts";
import { registerNetworkCommands } from "./networks.ts";
import { registerPlanCommands } from "./plans.ts";
import { registerPolicyCommands } from "./policies.ts";
import { registerPortalCommands } from "./portals.ts";
import { registerPruneCommand } from "./prune.ts";
import { registerRadiusCommands } from "./radius.ts";
import { registerSessionCommands } from "./sessions.ts";
import { registerWebhookCommands } from "./webhooks.ts";
import { registerWorkerCommand } from "./worker.ts";

export type WithCore = <T>(fn: (core: Core) => Promise<T>) => Promise<T>;

/**
 * Commands that only read (test/audit/cli-walk.test.ts checks that each leaves no audit row). Every
 * other command says on stderr which database it changes: a `wisp` run from another folder would
 * otherwise quietly write to a new, empty ./data.
 */
export const READ_ONLY: ReadonlySet<string> = new Set([
  "accounts list",
  "keys list",
  "admins list",
  "networks list",
  "networks show",
  "portals list",
  "webhooks list",
  "webhooks deliveries",
  "radius test",
  "certs list",
  "sessions list",
  "sessions show",
  "idp list",
  "idp show",
  "devices list",
  "devices show",
  "devices export",
  "networks radsec show",
  "policy list",
  "policy show",
  "policy explain",
  "plans list",
  "plans show",
  "directory list",
  "directory show",
  // Copies the database file: reads every row, changes none.
  "backup",
]);

/** A command's name as READ_ONLY and the tests write it: "plans create", "serve". */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) names.unshift(at.name());
  return names.join(" ");
}

/** Every command that runs something (the leaves of the tree), by commandPath. */
export function leafCommands(program: Command): string[] {
  const walk = (command: Command): string[] =>
    command.commands.length === 0 ? [commandPath(command)] : command.commands.flatMap(walk);
  return program.commands.flatMap(walk);
}

/** The audit log's actor of a command: the operating-system user running it, on this machine. */
export function cliActor(): Actor {
  let user = process.env.USER ?? "";
  try {
    user = os.userInfo().username;
  } catch {
    // No passwd entry for this uid (some containers): the environment's name, else the uid.
    user ||= String(process.getuid?.() ?? "");
  }
  return { type: "cli", id: user, name: user, role: "", address: "local" };
}

export function positiveInteger(text: string): number {
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1)
    throw new InvalidArgumentError("must be a positive whole number");
  return Number(text);
}

/**
 * Opens the configured database for one command and closes it afterwards; `announce` says whether
 * the command changes data (then the database is named on stderr).
 */
function coreOpener(announce: () => boolean): WithCore {
  return async (fn) => {
    const config = loadConfig();
    const options = { dataDir: config.dataDir, databaseUrl: config.databaseUrl, poolSize: 2 };
    if (announce()) console.error(`wisp: database ${databaseLocation(options)}`);
    const database = await openMigratedDatabase(options);
    try {
      // Every change the command makes is audited as the operating-system user's (core/audit).
      return await runAs(cliActor(), () => fn(createCore(database, { ...config, das: new DasClient() })));
    } finally {
      await database.close();
    }
  };
}

/**
 * A fresh command tree (commander keeps parsed options on it: one tree per parse). `output` replaces
 * commander's own writes (usage, help) for in-process runs; subcommands inherit it.
 */
export function buildProgram(output?: OutputConfiguration): Command {
  let changesData = false;
  const withCore = coreOpener(() => changesData);
  const program = new Command("wisp");
  if (output) program.configureOutput(output);
  program
    .description("Wisp: wireless network access management")
    .version(VERSION, "-V, --version", "print the version")
    .showHelpAfterError()
    .exitOverride()
    .hook("preAction", (_program, command) => {
      changesData = !READ_ONLY.has(commandPath(command));
    });

  program
    .command("serve")
    .description("run the API and RADIUS server (same as npm start)")
    .option("--no-worker", "leave background jobs to a separate `wisp worker`")
    .action(async (options: { worker: boolean }) => {
      if (!options.worker) process.env.WORKER = "0";
      await import("../main.ts");
    });

  registerAccountCommands(program, withCore);
  registerKeyCommands(program, withCore);
  // (command groups of further areas are registered below, one line each)
  registerDemoCommands(program, withCore);
  registerAdminCommands(program, withCore);
  registerWebhookCommands(program, withCore);
  registerWorkerCommand(program);
  registerNetworkCommands(program, withCore);
  registerPortalCommands(program, withCore);
  registerRadiusCommands(program, withCore);
  registerBackupCommand(program);
  registerCertCommands(program, withCore);
  registerSessionCommands(program, withCore);
  registerPruneCommand(program, withCore);
  registerIdpCommands(program, withCore);
  registerDeviceCommands(program, withCore);
  registerPolicyCommands(program, withCore);
  registerImportCommands(program, withCore);
  registerPlanCommands(program, withCore);
  registerDirectoryCommands(program, withCore);
  return program;
}
