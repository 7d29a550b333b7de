// Wisp for the EAP benchmark, in a process of its own: `src/main.ts` with the EAP engine given
// the benchmark's certificate files (BENCH_EAP_CERT_FILE, BENCH_EAP_KEY_FILE, BENCH_EAP_CA_FILE),
// so Wisp and FreeRADIUS present the same certificate whatever certificate source main has.
// Stops cleanly on SIGTERM (the --cpu-prof profile is written then).
import fs from "node:fs";
import { loadConfig } from "../src/config.ts";
import { startServer } from "../src/server.ts";

const read = (name: string) => {
  const file = process.env[name];
  if (!file) throw new Error(`${name} is not set`);
  return fs.readFileSync(file, "utf8");
};
const config = loadConfig();
const server = await startServer(config, {
  eap: {
    credentials: async () => ({
      key: read("BENCH_EAP_KEY_FILE"),
      cert: read("BENCH_EAP_CERT_FILE"),
      chain: [],
      ca: [read("BENCH_EAP_CA_FILE")],
    }),
    checkClientCertificate: async () => null,
    fragmentSize: config.eapFragmentSize,
  },
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    server.close().then(() => process.exit(0));
  });
}
