// The `wisp` command line: operators' and scripts' door to the same core the API uses.
import os from "node:os";
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { loadConfig } from "../config.ts";
import { type Actor, runAs } from "../core/audit/context.ts";
import { type Core, createCore } from "../core/index.ts";
import { databaseLocation } from "../db/database.ts";
import { DasClient } from "../radius/das-client.ts";
import { describeFailure, openMigratedDatabase } from "../startup.ts";
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
 * Commands that only read. Every other command says on stderr which database it changes: a `wisp`
 * run from another folder would otherwise quietly write to a new, empty ./data.
 */
const READ_ONLY = new Set([
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
  "radsec show",
  "policy list",
  "policy show",
  "policy explain",
  "plans list",
  "plans show",
  "directory list",
  "directory show",
]);
let announceDatabase = false;

/** Opens the configured database for one command and closes it afterwards. */
const withCore: WithCore = async (fn) => {
  const config = loadConfig();
  const options = { dataDir: config.dataDir, databaseUrl: config.databaseUrl, poolSize: 2 };
  if (announceDatabase) console.error(`wisp: database ${databaseLocation(options)}`);
  const database = await openMigratedDatabase(options);
  try {
    // Every change the command makes is audited as the operating-system user's (core/audit).
    return await runAs(cliActor(), () => fn(createCore(database, { ...config, das: new DasClient() })));
  } finally {
    await database.close();
  }
};

/** The audit log's actor of a command: the operating-system user running it, on this machine. */
function cliActor(): Actor {
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

const program = new Command("wisp")
  .description("Wisp: wireless network access management")
  .version(VERSION, "-V, --version", "print the version")
  .showHelpAfterError()
  .exitOverride()
  .hook("preAction", (_program, command) => {
    announceDatabase = !READ_ONLY.has(`${command.parent?.name()} ${command.name()}`);
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

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
  console.error(`wisp: ${describeFailure(error)}`);
  process.exit(1);
}
