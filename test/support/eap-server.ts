// A Wisp server with EAP on a loopback RADIUS port, test certificates, one network for
// 127.0.0.1, and a checkClientCertificate that refuses the serials a test revokes.
import type { EapLimits } from "../../src/radius/eap/types.ts";
import { type EapTestCerts, makeEapCerts } from "./eap-certs.ts";
import { eapolTest } from "./eapol.ts";
import { freeUdpPort } from "./freeradius-lab.ts";
import { startTestServer, type TestServer } from "./server.ts";

export interface EapTestServer {
  server: TestServer;
  certs: EapTestCerts;
  authPort: number;
  accountId: number;
  secret: string;
  /** Serials (hex, upper case) refused by checkClientCertificate. */
  revoked: Set<string>;
  user(username: string, password?: string, check?: [string, string, string][]): Promise<number>;
  stop(): Promise<void>;
}

/** EAP_MEMORY_*_MB take whole MiB. */
function mebibytes(bytes: number): string {
  if (bytes % 2 ** 20 !== 0) throw new Error(`${bytes} bytes is not a whole number of MiB`);
  return String(bytes / 2 ** 20);
}

export async function startEapServer(
  options: {
    fragmentSize?: number;
    limits?: Partial<EapLimits>;
    certs?: EapTestCerts;
    env?: Record<string, string>;
    dialect?: "sqlite" | "postgres";
  } = {},
): Promise<EapTestServer> {
  const certs = options.certs ?? makeEapCerts();
  const authPort = await freeUdpPort();
  const revoked = new Set<string>();
  const limits = options.limits ?? {};
  const server = await startTestServer({
    ...(options.dialect ? { dialect: options.dialect } : {}),
    env: {
      RADIUS_HOST: "127.0.0.1",
      RADIUS_AUTH_PORT: String(authPort),
      RADIUS_ACCT_PORT: "0",
      ...(limits.idleTimeoutSeconds ? { EAP_IDLE_TIMEOUT: String(limits.idleTimeoutSeconds) } : {}),
      ...(limits.perNetwork ? { EAP_CONVERSATIONS_PER_NETWORK: String(limits.perNetwork) } : {}),
      ...(limits.total ? { EAP_CONVERSATIONS: String(limits.total) } : {}),
      ...(limits.perNetworkBytes ? { EAP_MEMORY_PER_NETWORK_MB: mebibytes(limits.perNetworkBytes) } : {}),
      ...(limits.totalBytes ? { EAP_MEMORY_MB: mebibytes(limits.totalBytes) } : {}),
      ...options.env,
    },
    eap: {
      credentials: async () => ({
        key: certs.serverKeyPem,
        cert: certs.serverCertPem,
        chain: [],
        ca: [certs.caPem],
      }),
      checkClientCertificate: async (_client, certificate) => {
        const serial = certificate.serialNumber.toUpperCase();
        return revoked.has(serial) ? "certificate revoked" : null;
      },
      fragmentSize: options.fragmentSize ?? 1024,
    },
  });
  const account = await server.account("default");
  const secret = "eap-Secret-14";
  await server.core.networks.create(account.id, { name: "EAP lab", nas_ip: "127.0.0.1", secret });
  return {
    server,
    certs,
    authPort,
    accountId: account.id,
    secret,
    revoked,
    async user(username, password, check = []) {
      const created = await server.core.users.create(account.id, { username, password });
      for (const [attribute, operator, value] of check) {
        await server.core.attributes.addToUser(account.id, {
          userid: created.id,
          table: "radcheck",
          attribute,
          operator,
          value,
        });
      }
      return created.id;
    },
    stop: () => server.stop(),
  };
}

/** One PEAP (inner EAP-MSCHAPv2) login through eapol_test, trusting the lab's CA. */
export function peapLogin(lab: EapTestServer, identity = "alice", password = "alice-pw") {
  return eapolTest({
    port: lab.authPort,
    secret: lab.secret,
    raw: { eap: "PEAP" },
    network: { identity, password, phase2: "autheap=MSCHAPV2", ca_cert: lab.certs.caFile },
  });
}
