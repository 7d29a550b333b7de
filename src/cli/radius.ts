// `wisp radius test`: a credential check through the running server's real RADIUS door, printed the
// way radtest prints it. It signs with the shared secret of the network the server will take the
// request to come from, and never prints that secret or the password.

import { timingSafeEqual } from "node:crypto";
import { type Command, InvalidArgumentError } from "commander";
import { loadConfig } from "../config.ts";
import type { Core } from "../core/index.ts";
import { AppError } from "../core/shared/errors.ts";
import {
  accessRequestChap,
  accessRequestMschapv2,
  accessRequestPap,
  RadiusResponseError,
  RadiusTimeoutError,
  sendRadius,
} from "../radius/client.ts";
import type { AttributeInput } from "../radius/packet.ts";
import { secretOption } from "./output.ts";
import { positiveInteger, type WithCore } from "./program.ts";

interface TestOptions {
  chap?: boolean;
  mschapv2?: boolean;
  network?: number;
  host?: string;
  port?: number;
  timeout?: number;
  passwordStdin?: boolean;
}

/** Exit codes: 0 Access-Accept, 1 Access-Reject, 2 no verdict (timeout, bad usage, no network). */
const REJECTED = 1;
const NO_VERDICT = 2;
const DEFAULT_TIMEOUT_MS = 3000;
/**
 * Attributes whose values are never echoed: passwords, the MS-CHAP response (a dictionary attack
 * on it finds the password) and the MPPE session keys made from the password hash.
 */
const HIDDEN = new Set([
  "User-Password",
  "CHAP-Password",
  "MS-CHAP2-Response",
  "MS-MPPE-Send-Key",
  "MS-MPPE-Recv-Key",
]);

class NoVerdict extends Error {}

function port(text: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535)
    throw new InvalidArgumentError("must be a port number from 1 to 65535");
  return Number(text);
}

/** Where the server listens: --host/--port, else RADIUS_HOST (wildcard: loopback) and RADIUS_AUTH_PORT. */
function target(options: TestOptions): { host: string; port: number } {
  const config = loadConfig();
  const configured = ["0.0.0.0", "::", ""].includes(config.radiusHost) ? "127.0.0.1" : config.radiusHost;
  const host = options.host ?? configured;
  const chosen = options.port ?? config.radiusAuthPort;
  if (chosen === 0) throw new NoVerdict("RADIUS_AUTH_PORT is 0 (the RADIUS server is off); give --port");
  return { host, port: chosen };
}

interface Signer {
  id: number;
  name: string;
  secret: string;
}

/** The network whose secret signs the request: --network, or the one covering our source address. */
async function signer(core: Core, source: string, networkId: number | undefined): Promise<Signer> {
  const covering = await core.networks.findClientByAddress(source);
  if (networkId === undefined) {
    if (!covering) {
      throw new NoVerdict(
        `no network covers ${source}, where this request comes from; ` +
          `create one with: wisp networks create --nas-ip ${source} --name <name>`,
      );
    }
    return covering;
  }
  let network: Awaited<ReturnType<Core["networks"]["locate"]>>;
  try {
    network = await core.networks.locate(networkId);
  } catch (error) {
    if (error instanceof AppError) throw new NoVerdict(error.message);
    throw error;
  }
  if (covering?.id !== network.id) {
    console.error(
      `warning: the server checks requests from ${source} with the secret of ` +
        `${covering ? `network ${covering.id}` : "no network"}, not network ${network.id}`,
    );
  }
  // This command is a RADIUS client of the server: it signs with the network's secret.
  const { secret } = await core.networks.client(network.account_id, network.id);
  return { id: network.id, name: network.name, secret };
}

function printAttributes(attributes: readonly { name: string; value: unknown }[]): void {
  for (const { name, value } of attributes) {
    console.log(`\t${name} = ${HIDDEN.has(name) ? "<hidden>" : String(value)}`);
  }
}

async function radiusTest(core: Core, username: string, password: string, options: TestOptions) {
  const { host, port } = target(options);
  // A loopback request comes from the same loopback address.
  const source = host.includes(":") ? "::1" : "127.0.0.1";
  const network = await signer(core, source, options.network);
  const extra: AttributeInput[] = [
    ["NAS-IP-Address", "127.0.0.1"],
    ["NAS-Port", 0],
  ];
  if (options.chap && options.mschapv2) throw new NoVerdict("give --chap or --mschapv2, not both");
  const mschapv2 = options.mschapv2 ? accessRequestMschapv2(username, password, extra) : undefined;
  const request =
    mschapv2 ??
    (options.chap
      ? accessRequestChap(username, password, extra)
      : accessRequestPap(username, password, extra));
  const method = mschapv2 ? "MS-CHAPv2" : options.chap ? "CHAP" : "PAP";
  console.log(
    `Sent Access-Request to ${host}:${port} (${method}, ` +
      `secret of network ${network.id} "${network.name}")`,
  );
  const sent = request.attributes ?? [];
  printAttributes(sent.map((a) => ("name" in a ? a : { name: a[0], value: a[1] })));
  const timeoutMs = options.timeout ?? DEFAULT_TIMEOUT_MS;
  try {
    const answer = await sendRadius({
      ...request,
      host,
      port,
      secret: network.secret,
      messageAuthenticator: true,
      // Three attempts within the timeout, as radtest retransmits.
      timeoutMs: Math.max(1, Math.ceil(timeoutMs / 3)),
      retries: 2,
    });
    console.log(`Received ${answer.type} Id ${answer.identifier} from ${host}:${port}`);
    printAttributes(answer.attributes);
    if (answer.type !== "Access-Accept") process.exitCode = REJECTED;
    else if (mschapv2) {
      // RFC 2759 section 9.1.2: a peer whose check of the authenticator response fails hangs up.
      const success = answer.attributes.find((a) => a.name === "MS-CHAP2-Success")?.raw;
      const expected = mschapv2.expectedSuccess;
      if (success?.length === expected.length && timingSafeEqual(success, expected)) {
        console.log("MS-CHAP2-Success checked: the server knows the password");
      } else {
        console.log("MS-CHAP2-Success missing or wrong: the server did not prove it knows the password");
        process.exitCode = REJECTED;
      }
    }
  } catch (error) {
    if (error instanceof RadiusTimeoutError) {
      throw new NoVerdict(
        `no answer from ${host}:${port} in ${timeoutMs} ms: is Wisp running with RADIUS on that port, ` +
          `and is network ${network.id} the one covering ${source}? (the server drops what it cannot verify)`,
      );
    }
    if (error instanceof RadiusResponseError) throw new NoVerdict(error.message);
    throw error;
  }
}

export function registerRadiusCommands(program: Command, withCore: WithCore): void {
  const radius = program.command("radius").description("the embedded RADIUS server");

  radius
    .command("test")
    .description(
      "send a real Access-Request to the running server and print the verdict and reply attributes " +
        "(like radtest); exits 0 on Access-Accept, 1 on Access-Reject, 2 without an answer",
    )
    .argument("<username>", "the username to log in as")
    .argument("[password]", "the password (never printed); or give it on standard input")
    .option("--password-stdin", "read the password from standard input (keeps it out of ps and history)")
    .option("--chap", "use CHAP instead of PAP")
    .option("--mschapv2", "use MS-CHAPv2 instead of PAP, and check the server's MS-CHAP2-Success")
    .option("--network <network-id>", "sign with this network's shared secret", positiveInteger)
    .option("--host <addr>", "the server's address (default: RADIUS_HOST, or 127.0.0.1)")
    .option("--port <n>", "the authentication port (default: RADIUS_AUTH_PORT)", port)
    .option(
      "--timeout <ms>",
      `how long to wait for the answer (default ${DEFAULT_TIMEOUT_MS})`,
      positiveInteger,
    )
    .action(async (username: string, argument: string | undefined, options: TestOptions) => {
      try {
        const password = await secretOption(argument, options.passwordStdin, "--password");
        if (password === undefined) throw new NoVerdict("give the password, or --password-stdin");
        await withCore((core) => radiusTest(core, username, password, options));
      } catch (error) {
        if (!(error instanceof NoVerdict)) throw error;
        console.error(`wisp: ${error.message}`);
        process.exitCode = NO_VERDICT;
      }
    });
}
