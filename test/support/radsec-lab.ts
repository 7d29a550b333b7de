// A Wisp server with its RadSec listener on a loopback port, an account, a key, a user and a
// network with a client certificate Wisp issued: what the RadSec suites start from.
import { createPrivateKey } from "node:crypto";
import net from "node:net";
import type { Network } from "../../src/core/networks/service.ts";
import { freeUdpPort } from "./freeradius-lab.ts";
import { RadsecTestClient } from "./radsec-client.ts";
import { startTestServer, type TestServer, type TestServerOptions } from "./server.ts";

export async function freeTcpPort(host = "127.0.0.1"): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface NasCertificate {
  cert: string;
  /** The private key, unencrypted PEM. */
  key: string;
  serial: string;
}

export interface RadsecLab {
  server: TestServer;
  port: number;
  udpPort: number;
  accountId: number;
  key: string;
  network: Network;
  /** The network's UDP shared secret. */
  secret: string;
  nas: NasCertificate;
  /** The CA that signed the server's certificate (the EAP CA). */
  serverCa: string;
  connect(options?: Partial<Parameters<typeof RadsecTestClient.connect>[0]>): Promise<RadsecTestClient>;
  issue(networkId: number, accountId?: number): Promise<NasCertificate>;
  /** Gives alice a reply item (`:=`) through the API. */
  reply(attribute: string, value: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startRadsecLab(options: TestServerOptions = {}): Promise<RadsecLab> {
  const [port, udpPort] = [await freeTcpPort(), await freeUdpPort()];
  const server = await startTestServer({
    ...options,
    env: {
      RADSEC_PORT: String(port),
      RADSEC_HOST: "127.0.0.1",
      RADIUS_HOST: "127.0.0.1",
      RADIUS_AUTH_PORT: String(udpPort),
      RADIUS_ACCT_PORT: "0",
      ...options.env,
    },
  });
  const account = await server.account("default");
  const key = await server.key(account);
  const created = await server.call("POST", "/api/users", {
    key,
    body: { username: "alice", password: "alice-pw" },
  });
  if (created.status !== 201) throw new Error(`user not created: ${created.text}`);
  const { network, secret } = await server.core.networks.create(account.id, {
    name: "Site A",
    nas_ip: "127.0.0.1",
    coa_enabled: true,
  });
  const issue = async (networkId: number, accountId = account.id): Promise<NasCertificate> => {
    const issued = await server.core.radsec.issue(accountId, networkId, { password: "nas-password" });
    const key = createPrivateKey({ key: issued.key, passphrase: "nas-password" }).export({
      type: "pkcs8",
      format: "pem",
    }) as string;
    return { cert: issued.cert, key, serial: issued.certificate.serial };
  };
  const nas = await issue(network.id);
  const serverCa = (await server.core.certs.authorityCertificate())!.pem;
  return {
    server,
    port,
    udpPort,
    accountId: account.id,
    key,
    network,
    secret,
    nas,
    serverCa,
    issue,
    async reply(attribute, value) {
      const added = await server.call("POST", "/api/attributes", {
        key,
        body: { userid: created.body.id, attribute, operator: ":=", value, table: "radreply" },
      });
      if (added.status !== 201) throw new Error(`reply item not added: ${added.text}`);
    },
    connect: (overrides = {}) =>
      RadsecTestClient.connect({
        host: "127.0.0.1",
        port,
        ca: serverCa,
        cert: nas.cert,
        key: nas.key,
        ...overrides,
      }),
    stop: () => server.stop(),
  };
}
