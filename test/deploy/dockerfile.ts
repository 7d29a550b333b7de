// Reads the Dockerfile the way `docker build` would and replays it on this machine, where images
// cannot be built: each stage gets a folder standing for its file system, COPY copies (from the
// build context or an earlier stage), RUN runs in the stage's WORKDIR with its ENV, and the last
// stage's CMD and HEALTHCHECK are what the test starts. Only the instructions Wisp's Dockerfile
// uses are understood; any other fails the test, so the file cannot drift away from what is tested.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export interface Stage {
  name: string;
  /** The folder standing for the stage's root file system. */
  root: string;
  workdir: string;
  env: Record<string, string>;
  user: string | undefined;
  cmd: string[] | undefined;
  healthcheck: string[] | undefined;
  expose: string[];
  volumes: string[];
}

/** Instructions in order: continuation lines joined, comments and blank lines dropped. */
export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending = "";
  let start = 0;
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (pending === "" && (line === "" || line.startsWith("#"))) return;
    if (pending === "") start = index + 1;
    if (line.startsWith("#")) return;
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const whole = (pending + line).trim();
    pending = "";
    const match = /^(\S+)\s+([\s\S]*)$/.exec(whole);
    if (!match) throw new Error(`Dockerfile line ${start}: cannot read "${whole}"`);
    instructions.push({ keyword: match[1]!.toUpperCase(), args: match[2]!.trim(), line: start });
  });
  return instructions;
}

/** KEY=value pairs of ENV (values without spaces, or in double quotes). */
function parseEnv(args: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const match of args.matchAll(/(\w+)=("([^"]*)"|\S*)/g)) env[match[1]!] = match[3] ?? match[2]!;
  return env;
}

function execForm(args: string, line: number): string[] {
  const parsed = JSON.parse(args) as unknown;
  if (!Array.isArray(parsed) || !parsed.every((part) => typeof part === "string")) {
    throw new Error(`Dockerfile line ${line}: only the exec form ["program", "arg", ...] is replayed`);
  }
  return parsed as string[];
}

export interface ReplayOptions {
  context: string;
  /** Where the stages' folders are made. */
  work: string;
  /** Extra environment for RUN (on top of this process's and the stage's ENV). */
  runEnv: NodeJS.ProcessEnv;
  /** RUN commands not replayed (system set-up this machine already has), with the reason printed. */
  skip: (command: string) => string | undefined;
  log: (message: string) => void;
}

/** Replays every stage; answers the stages by name (and "last"). */
export function replay(instructions: Instruction[], options: ReplayOptions): Map<string, Stage> {
  const stages = new Map<string, Stage>();
  let stage: Stage | undefined;
  let count = 0;
  const inStage = (p: string, s: Stage) => path.join(s.root, path.posix.resolve(s.workdir, p));
  for (const { keyword, args, line } of instructions) {
    if (keyword === "FROM") {
      const [, name] = /\bAS\s+(\S+)$/i.exec(args) ?? [];
      const index = count++;
      const root = path.join(options.work, `stage-${index}`);
      fs.mkdirSync(root, { recursive: true });
      stage = {
        name: name ?? `stage-${index}`,
        root,
        workdir: "/",
        env: {},
        user: undefined,
        cmd: undefined,
        healthcheck: undefined,
        expose: [],
        volumes: [],
      };
      stages.set(stage.name, stage);
      stages.set(`#${index}`, stage);
      options.log(`FROM ${args}: stage ${stage.name} in ${root}`);
      continue;
    }
    if (!stage) throw new Error(`Dockerfile line ${line}: ${keyword} before FROM`);
    switch (keyword) {
      case "WORKDIR":
        stage.workdir = path.posix.resolve(stage.workdir, args);
        fs.mkdirSync(path.join(stage.root, stage.workdir), { recursive: true });
        break;
      case "ENV":
        Object.assign(stage.env, parseEnv(args));
        break;
      case "USER":
        stage.user = args;
        break;
      case "EXPOSE":
        stage.expose.push(...args.split(/\s+/));
        break;
      case "VOLUME":
        stage.volumes.push(...(args.startsWith("[") ? execForm(args, line) : args.split(/\s+/)));
        break;
      case "HEALTHCHECK": {
        const at = args.indexOf("CMD ");
        if (at < 0) throw new Error(`Dockerfile line ${line}: HEALTHCHECK without CMD`);
        stage.healthcheck = execForm(args.slice(at + 4).trim(), line);
        break;
      }
      case "CMD":
        stage.cmd = execForm(args, line);
        break;
      case "COPY": {
        const words = args.split(/\s+/);
        const flags = words.filter((w) => w.startsWith("--"));
        const paths = words.filter((w) => !w.startsWith("--"));
        const from = flags.find((f) => f.startsWith("--from="))?.slice("--from=".length);
        const source = from ? stages.get(from) : undefined;
        if (from && !source) throw new Error(`Dockerfile line ${line}: no stage named ${from}`);
        const target = paths.pop()!;
        const targetPath = inStage(target, stage);
        const intoFolder = target.endsWith("/") || paths.length > 1;
        for (const p of paths) {
          const sourcePath = source
            ? path.join(source.root, path.posix.resolve(source.workdir, p))
            : path.join(options.context, p);
          if (!fs.existsSync(sourcePath))
            throw new Error(`Dockerfile line ${line}: COPY source ${p} does not exist`);
          // A folder's contents go into the target; a file goes into it when it is a folder.
          const destination =
            fs.statSync(sourcePath).isDirectory() || !intoFolder
              ? targetPath
              : path.join(targetPath, path.basename(p));
          fs.mkdirSync(path.dirname(destination), { recursive: true });
          fs.cpSync(sourcePath, destination, { recursive: true, verbatimSymlinks: true });
        }
        break;
      }
      case "RUN": {
        const reason = options.skip(args);
        if (reason) {
          options.log(`RUN ${args}: not replayed (${reason})`);
          break;
        }
        const cwd = path.join(stage.root, stage.workdir);
        options.log(`RUN ${args} (in ${stage.name}:${stage.workdir})`);
        const started = performance.now();
        const result = spawnSync("sh", ["-c", args], {
          cwd,
          env: { ...process.env, ...stage.env, ...options.runEnv },
          encoding: "utf8",
          maxBuffer: 64 * 1024 * 1024,
        });
        if (result.status !== 0) {
          throw new Error(
            `Dockerfile line ${line}: RUN ${args} failed (${result.status ?? result.signal})\n${result.stdout}\n${result.stderr}`,
          );
        }
        options.log(`  done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
        break;
      }
      default:
        throw new Error(
          `Dockerfile line ${line}: ${keyword} is not replayed by test/deploy; teach dockerfile.ts first`,
        );
    }
  }
  if (!stage) throw new Error("the Dockerfile has no FROM");
  stages.set("last", stage);
  return stages;
}
