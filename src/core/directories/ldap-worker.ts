// The directory worker thread (./worker-client.ts): it holds the directories' LDAP clients (ldapts,
// with their connections, pools and breakers, ./ldap.ts) and runs their searches, binds and paged
// searches, so that encoding and decoding LDAP messages and their socket work leave the thread that
// answers RADIUS: a directory login costs that thread about what a local one does, and the two
// threads use two cores. Messages are arrays (cheaper to clone than objects), and each direction
// sends a turn's messages as one array of them (TurnBatch).
import { parentPort } from "node:worker_threads";
import type { Entry } from "ldapts";
import { TurnBatch } from "../shared/worker-thread.ts";
import {
  type DirectoryBind,
  DirectoryClient,
  DirectoryUnavailable,
  type SearchSpec,
  type ServerSettings,
  type ServerStatus,
} from "./ldap.ts";

/** Requests from ./worker-client.ts; `call` numbers the answer, `client` one directory's client. */
export type ToDirectoryWorker =
  | ["open", client: number, urls: string[], settings: ServerSettings, bind: DirectoryBind]
  | ["close", client: number]
  | ["search", call: number, client: number, spec: SearchSpec]
  | ["bind", call: number, client: number, dn: string, password: string]
  /** The first page of a paged search; "next" asks for each further one, "stop" ends it early. */
  | ["pages", call: number, client: number, spec: SearchSpec, pageSize: number]
  | ["next" | "stop", call: number]
  /**
   * Tests only (test/directories/ldap-client.test.ts): the worker dies of an uncaught error, as a
   * bug in it would end it. Only the main thread posts to this worker; no request reaches this.
   */
  | ["crash"];

/** The requests answered by call number (message[1]). */
export type CallRequest = Exclude<ToDirectoryWorker, ["open" | "close" | "crash", ...unknown[]]>;

/**
 * Answers: a result (a search's [entries, references], a bind's verdict, a page or null after the
 * last), a DirectoryUnavailable (message, summary) or another error (message); and a client's
 * servers' states whenever they change, posted before the answer that changed them.
 */
export type FromDirectoryWorker =
  | [call: number, "ok", result: unknown]
  | [call: number, "unavailable", message: string, summary: string]
  | [call: number, "error", message: string]
  | [client: number, "status", servers: ServerStatus[], reopenTimes: number[]];

const port = parentPort;
if (!port) throw new Error("ldap-worker.ts runs as a worker thread");
const clients = new Map<number, { client: DirectoryClient; version: number }>();
const paged = new Map<number, { client: number; pages: AsyncGenerator<Entry[]> }>();

const replies = new TurnBatch<FromDirectoryWorker>((batch) => port!.postMessage(batch));

/** The client's servers' states, when a call changed them since last told. */
function tellStatus(id: number): void {
  const held = clients.get(id);
  if (!held) return;
  const version = held.client.statusVersion();
  if (version === held.version) return;
  held.version = version;
  replies.push([id, "status", held.client.status(), held.client.reopenTimes()]);
}

function clientOf(id: number): DirectoryClient {
  const held = clients.get(id);
  if (!held) throw new Error(`no directory client ${id}`);
  return held.client;
}

async function nextPage(call: number): Promise<Entry[] | null> {
  const held = paged.get(call);
  if (!held) throw new Error(`no paged search ${call}`);
  try {
    const page = await held.pages.next();
    if (page.done) paged.delete(call);
    return page.done ? null : page.value;
  } catch (error) {
    paged.delete(call);
    throw error;
  }
}

/** Runs one request; its answer is posted by the caller. The client's id, for its status. */
async function run(message: CallRequest) {
  switch (message[0]) {
    case "search":
      return clientOf(message[2]).search(message[3]);
    case "bind":
      return clientOf(message[2]).checkPassword(message[3], message[4]);
    case "pages":
      paged.set(message[1], {
        client: message[2],
        pages: clientOf(message[2]).pages(message[3], message[4]),
      });
      return nextPage(message[1]);
    case "next":
      return nextPage(message[1]);
    case "stop": {
      const held = paged.get(message[1]);
      paged.delete(message[1]);
      await held?.pages.return(undefined);
      return null;
    }
  }
}

/** The client a request concerns (for its status after the request). */
function clientOfRequest(message: ToDirectoryWorker): number | undefined {
  if (message[0] === "search" || message[0] === "bind" || message[0] === "pages") return message[2];
  if (message[0] === "next" || message[0] === "stop") return paged.get(message[1])?.client;
  return undefined;
}

port.on("message", (batch: ToDirectoryWorker[]) => {
  for (const message of batch) receive(message);
});

function receive(message: ToDirectoryWorker): void {
  switch (message[0]) {
    case "open":
      clients.set(message[1], {
        client: new DirectoryClient(message[2], message[3], message[4]),
        version: 0,
      });
      return;
    case "close": {
      const held = clients.get(message[1]);
      clients.delete(message[1]);
      void held?.client.close().catch(() => {});
      return;
    }
    case "crash":
      // Thrown outside any promise: nothing catches it.
      setImmediate(() => {
        throw new Error("directory worker crash asked by a test");
      });
      return;
  }
  const call = message[1];
  const client = clientOfRequest(message);
  run(message).then(
    (result) => {
      if (client !== undefined) tellStatus(client);
      replies.push([call, "ok", result]);
    },
    (error: unknown) => {
      if (client !== undefined) tellStatus(client);
      if (error instanceof DirectoryUnavailable)
        replies.push([call, "unavailable", error.message, error.summary]);
      else replies.push([call, "error", (error as Error)?.message ?? String(error)]);
    },
  );
}
