// The servers and certificates of the RadSec benchmark (bench/radsec.ts): the EAP server
// certificate and a RadSec client certificate for the seeded network written as files, FreeRADIUS
// 3.2's RadSec listener for its `wisp` virtual server, and `openssl s_server` with the same identity.
import { spawn } from "node:child_process";
import { createPrivateKey } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { createCore } from "../src/core/index.ts";
import { openDatabase } from "../src/db/database.ts";
import { freePort } from "../test/support/processes.ts";
import { BenchError, stopChild, track } from "./radius-servers.ts";

export type TlsVersion = "TLSv1.3" | "TLSv1.2";

export interface Material {
  /** Files: the server's certificate (Wisp's EAP server certificate) and key, the CAs, the NAS's. */
  serverCert: string;
  serverKey: string;
  serverCa: string;
  clientCa: string;
  nas: { cert: string; key: string };
}

/** The EAP server certificate and a RadSec client certificate for the bench network, as files. */
export async function prepare(dataDir: string, dir: string): Promise<Material> {
  const database = openDatabase({ dataDir });
  try {
    const core = createCore(database, { publicUrl: "http://localhost", dataDir });
    const account = await core.accounts.resolve(undefined);
    const [network] = await core.networks.listAll(account.id);
    if (!network) throw new BenchError("the seeded network is missing");
    const issued = await core.radsec.issue(account.id, network.id, { password: "bench-password" });
    const nasKey = createPrivateKey({ key: issued.key, passphrase: "bench-password" }).export({
      type: "pkcs8",
      format: "pem",
    }) as string;
    const credentials = await core.certs.serverCredentials();
    const authority = await core.certs.authorityCertificate();
    if (!authority) throw new BenchError("Wisp's CA is missing");
    const write = (name: string, text: string) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, text, { mode: 0o600 });
      return file;
    };
    return {
      serverCert: write("server.pem", [credentials.cert, ...credentials.chain].join("\n")),
      serverKey: write("server.key", credentials.key),
      serverCa: write("server-ca.pem", authority.pem),
      clientCa: write("client-ca.pem", issued.ca),
      nas: { cert: write("nas.pem", issued.cert), key: write("nas.key", nasKey) },
    };
  } finally {
    await database.close();
  }
}

/** FreeRADIUS's RadSec listener (Debian's sites-available/tls, trimmed) for the `wisp` server. */
export function freeradiusListener(port: number, m: Material, tls: TlsVersion): string {
  const version = tls === "TLSv1.3" ? "1.3" : "1.2";
  return `listen {
	ipaddr = 127.0.0.1
	port = ${port}
	type = auth
	proto = tcp
	virtual_server = wisp
	clients = radsec
	limit {
		max_connections = 1000
		lifetime = 0
		idle_timeout = 300
	}
	tls {
		private_key_file = ${m.serverKey}
		certificate_file = ${m.serverCert}
		ca_file = ${m.clientCa}
		fragment_size = 8192
		cipher_list = "DEFAULT"
		tls_min_version = "1.2"
		tls_max_version = "${version}"
		require_client_cert = yes
		cache {
			enable = no
		}
		verify {
		}
	}
}
clients radsec {
	client localhost {
		ipaddr = 127.0.0.1
		proto = tls
		secret = radsec
		# The default (16 per client) also counts connections closed a moment ago.
		limit {
			max_connections = 1000
			lifetime = 0
			idle_timeout = 300
		}
	}
}
`;
}

/** `openssl s_server` with the same identity and client CA, answering the handshakes one by one. */
export async function startOpensslServer(m: Material, tls: TlsVersion) {
  const port = await freePort();
  const child = track(
    spawn(
      "openssl",
      [
        "s_server",
        ...["-accept", `127.0.0.1:${port}`, "-cert", m.serverCert, "-key", m.serverKey],
        ...["-CAfile", m.clientCa, "-Verify", "1", tls === "TLSv1.3" ? "-tls1_3" : "-tls1_2"],
        "-www",
        "-quiet",
      ],
      { stdio: ["ignore", "ignore", "ignore"] },
    ),
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (open) break;
    if (child.exitCode !== null || Date.now() > deadline)
      throw new BenchError("openssl s_server did not start");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { port, pid: child.pid ?? 0, stop: () => stopChild(child) };
}
