// The `wisp` command line: operators' and scripts' door to the same core the API uses. The command
// tree is built in program.ts; this entry point only runs it on process.argv.
import { CommanderError } from "commander";
import { describeFailure } from "../startup.ts";
import { buildProgram } from "./program.ts";

try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
  console.error(`wisp: ${describeFailure(error)}`);
  process.exit(1);
}
