// What one EAP conversation held between round trips costs in memory (issue 22 point 7), to check
// the estimates the EAP memory budgets charge (CONVERSATION_BYTES in src/radius/eap/engine.ts,
// TLS_TUNNEL_BYTES in src/radius/eap/tunnel.ts). A Wisp server in this process, with EAP on a
// loopback RADIUS port and budgets too large to bind; over real UDP it opens N conversations that
// stop after the identity, then N half-open PEAP ones (identity, then a real ClientHello: the
// server holds a TLS connection and its first flight). After a gc() before and after each batch,
// prints the growth of RSS, JS heap and external memory per conversation next to what the engine
// charged for it.
//   node --expose-gc --import tsx bench/eap-memory.ts
//   BENCH_EAP_MEMORY_N (2000)  conversations per batch
//   EAP_TLS_ENGINE             openssl or node (default: the server's, auto)
import { halfOpenPeap, identity, Nas } from "../test/support/eap-nas.ts";
import { clientHello } from "../test/support/eap-packets.ts";
import { startEapServer } from "../test/support/eap-server.ts";

const N = Number(process.env.BENCH_EAP_MEMORY_N ?? 2000);
if (!global.gc) throw new Error("run with node --expose-gc");
const gc = global.gc;

const lab = await startEapServer({
  limits: { idleTimeoutSeconds: 600, perNetwork: 1_000_000, total: 1_000_000, totalBytes: 4096 * 2 ** 20 },
  env: {
    EAP_MEMORY_PER_NETWORK_MB: "4096",
    ...(process.env.EAP_TLS_ENGINE ? { EAP_TLS_ENGINE: process.env.EAP_TLS_ENGINE } : {}),
  },
});
const engine = lab.server.radius.eap!;
const nas = new Nas(lab.authPort, lab.secret);
await nas.bind("127.0.0.1");
const hello = await clientHello();

function usage() {
  gc();
  gc();
  const { rss, heapUsed, external } = process.memoryUsage();
  return { rss, heapUsed, external, charged: engine.heldBytes() };
}

async function batch(label: string, open: (i: number) => Promise<boolean>): Promise<void> {
  // A few first, so code compiled and pools filled on first use are not counted.
  for (let i = 0; i < 20; i++) await open(-i - 1);
  const before = usage();
  for (let i = 0; i < N; i++) if (!(await open(i))) throw new Error(`${label}: conversation ${i} failed`);
  const after = usage();
  const per = (key: keyof typeof after) => `${((after[key] - before[key]) / N / 1024).toFixed(1)} KiB`;
  console.log(
    `${label}: per conversation RSS ${per("rss")}, JS heap ${per("heapUsed")}, external ${per("external")}; charged ${per("charged")}`,
  );
}

try {
  let k = 0;
  await batch("identity only", async () => {
    const answer = await nas.send([["EAP-Message", identity(`m-${k++}`)]]);
    return answer?.type === "Access-Challenge";
  });
  await batch("half-open PEAP", async () => (await halfOpenPeap(nas, `m-${k++}`, hello)) !== null);
  console.log(`open conversations ${engine.openConversations}, evicted ${engine.evictedConversations}`);
} finally {
  nas.close();
  await lab.stop();
}
