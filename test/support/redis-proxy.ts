// A TCP proxy in front of the real Redis, for tests of what a client does on another Redis:
// - as Redis 6.2, it refuses what 6.2 does not know (7.x commands and subcommands, the NX/XX/GT/LT
//   options of EXPIRE and PEXPIRE, scripts that call either), the way 6.2 refuses: an error reply
//   in its place, in order;
// - as a Redis that goes away, it can drop every connection and stop listening, and come back.
// Commands it lets through go to the real Redis byte for byte; replies come back the same way.
import net from "node:net";

/** Commands Redis 7.0-7.2 added: a 6.2 server answers them with "unknown command". */
const SINCE_7 = new Set([
  "function",
  "fcall",
  "fcall_ro",
  "eval_ro",
  "evalsha_ro",
  "expiretime",
  "pexpiretime",
  "lmpop",
  "blmpop",
  "zmpop",
  "bzmpop",
  "sintercard",
  "zintercard",
  "lcs",
  "sort_ro",
  "spublish",
  "ssubscribe",
  "sunsubscribe",
  "waitaof",
]);
/** Subcommands Redis 7.0-7.2 added. */
const SUBCOMMANDS_SINCE_7 = new Set([
  "client setinfo",
  "client no-evict",
  "client no-touch",
  "command docs",
  "command list",
  "command getkeysandflags",
  "cluster shards",
  "cluster addslotsrange",
  "cluster delslotsrange",
  "latency histogram",
  "acl dryrun",
]);
const EXPIRE_FAMILY = new Set(["expire", "pexpire", "expireat", "pexpireat"]);
const EXPIRE_OPTION = /^(nx|xx|gt|lt)$/i;

/** Why Redis 6.2 would refuse the command, or null when it takes it. */
export function refusedByRedis62(args: string[]): string | null {
  const name = (args[0] ?? "").toLowerCase();
  if (SINCE_7.has(name)) return `${name} is Redis 7`;
  const sub = `${name} ${(args[1] ?? "").toLowerCase()}`;
  if (SUBCOMMANDS_SINCE_7.has(sub)) return `${sub} is Redis 7`;
  if (EXPIRE_FAMILY.has(name) && args.length > 3) return `${name} with options (${args.slice(3)}) is Redis 7`;
  if ((name === "bitcount" || name === "bitpos") && args.some((a) => /^(bit|byte)$/i.test(a))) {
    return `${name} BIT|BYTE is Redis 7`;
  }
  if (name === "eval") return scriptProblem(args[1] ?? "");
  return null;
}

/** The commands a Lua script calls, checked like commands sent on their own. */
function scriptProblem(script: string): string | null {
  for (const match of script.matchAll(/redis\.p?call\(\s*(['"])([A-Za-z_-]+)\1([^)]*)\)/g)) {
    const name = match[2]!.toLowerCase();
    const rest = match[3] ?? "";
    if (SINCE_7.has(name)) return `the script calls ${name}, which is Redis 7`;
    const literals = [...rest.matchAll(/(['"])([^'"]*)\1/g)].map((m) => m[2]!);
    if (EXPIRE_FAMILY.has(name) && literals.some((l) => EXPIRE_OPTION.test(l))) {
      return `the script calls ${name} with an option, which is Redis 7`;
    }
  }
  return null;
}

/** Reads one RESP array of bulk strings (what clients send) from `buffer` at `offset`. */
function readCommand(buffer: Buffer, offset: number): { args: string[]; end: number } | null {
  const line = (from: number) => {
    const end = buffer.indexOf("\r\n", from);
    return end < 0 ? null : { text: buffer.toString("latin1", from, end), next: end + 2 };
  };
  const head = line(offset);
  if (!head) return null;
  if (!head.text.startsWith("*")) throw new Error(`the proxy reads RESP arrays only, got ${head.text}`);
  const count = Number(head.text.slice(1));
  const args: string[] = [];
  let at = head.next;
  for (let i = 0; i < count; i++) {
    const size = line(at);
    if (!size) return null;
    const length = Number(size.text.slice(1));
    if (buffer.length < size.next + length + 2) return null;
    args.push(buffer.toString("utf8", size.next, size.next + length));
    at = size.next + length + 2;
  }
  return { args, end: at };
}

function encode(args: string[]): Buffer {
  const parts = [`*${args.length}\r\n`];
  for (const arg of args) parts.push(`$${Buffer.byteLength(arg)}\r\n${arg}\r\n`);
  return Buffer.from(parts.join(""));
}

export interface RedisProxyOptions {
  /** The real Redis, "host:port". */
  target: { host: string; port: number };
  /** Refuse what Redis 6.2 does not know. */
  asRedis62?: boolean;
}

export class RedisProxy {
  /** Every command that went through or was refused, as the client sent it. */
  readonly commands: string[][] = [];
  /** The commands refused as 6.2 would, with the reason. */
  readonly refused: { command: string[]; reason: string }[] = [];
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly options: RedisProxyOptions) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Listens (again) on the port it had, or on a free one the first time. */
  async listen(): Promise<void> {
    const server = net.createServer((client) => this.connect(client));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Goes away: drops every connection and stops listening. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  private connect(client: net.Socket): void {
    const upstream = net.connect(this.options.target.port, this.options.target.host);
    this.sockets.add(client);
    this.sockets.add(upstream);
    let pending = Buffer.alloc(0);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on("error", end);
    upstream.on("error", end);
    client.on("close", end);
    upstream.on("close", end);
    upstream.on("data", (data) => client.write(data));
    client.on("data", (data) => {
      pending = Buffer.concat([pending, data]);
      let offset = 0;
      for (;;) {
        const command = readCommand(pending, offset);
        if (!command) break;
        const raw = pending.subarray(offset, command.end);
        offset = command.end;
        this.commands.push(command.args);
        const reason = this.options.asRedis62 ? refusedByRedis62(command.args) : null;
        if (reason) {
          this.refused.push({ command: command.args, reason });
          // The real Redis refuses it in its place, so replies stay in order (MULTI included).
          upstream.write(encode([`wisp-test-redis62-refuses-${command.args[0]}`]));
        } else upstream.write(raw);
      }
      pending = pending.subarray(offset);
    });
  }
}
