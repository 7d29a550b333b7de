// `wisp networks radsec ...`: a network's RadSec settings. Certificates Wisp issues for the network's
// NAS (written to a new 0600 file, the password read from standard input; the key is never kept),
// and an outside CA with the rule that matches its certificates to the network.
import fs from "node:fs";
import type { Command } from "commander";
import type { Core } from "../core/index.ts";
import { MATCH_FIELDS, MAX_RADSEC_CERT_DAYS, RADSEC_CERT_DAYS } from "../core/radsec/rules.ts";
import type { IssuedRadsecCertificate } from "../core/radsec/service.ts";
import { ValidationError } from "../core/shared/errors.ts";
import { publish, refuseExisting, temporaryBeside } from "./certs.ts";
import { namedAccount, printFields } from "./networks.ts";
import { jsonOption, printTable, readStdin } from "./output.ts";
import { positiveInteger, type WithCore } from "./program.ts";

const ACCOUNT = "only act if the network belongs to this account";
const FORMATS = ["p12", "pem"] as const;

/** The account that owns the network (and must be the one --account names, when given). */
async function ownerOf(core: Core, id: number, account: string | undefined): Promise<number> {
  return (await core.networks.locate(id, await namedAccount(core, account))).account_id;
}

/** pem: the certificate, its encrypted key and the CA in one file (radsecproxy and FreeRADIUS read it). */
function fileOf(issued: IssuedRadsecCertificate, format: string): string | Buffer {
  if (format === "p12") return issued.pkcs12;
  const end = (pem: string) => (pem.endsWith("\n") ? pem : `${pem}\n`);
  return `${end(issued.cert)}${end(issued.key)}${end(issued.ca)}`;
}

async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) {
    console.error("wisp: type the password, then Enter and Ctrl-D (it is echoed: a pipe is better)");
  }
  const password = await readStdin();
  if (password === "") throw new ValidationError("the password is read from standard input, which was empty");
  return password;
}

function registerIssue(radsec: Command, withCore: WithCore): void {
  radsec
    .command("issue")
    .description("issue a client certificate for the network's NAS; the password (stdin) protects its key")
    .argument("<network-id>", "the network's id (see networks list)", positiveInteger)
    .requiredOption("--out <file>", "the new file to write (mode 0600; never replaces a file)")
    .option("--format <p12|pem>", "p12: PKCS#12; pem: certificate, encrypted key and CA in one file", "p12")
    .option(
      "--days <n>",
      `how long it is valid (default ${RADSEC_CERT_DAYS}, at most ${MAX_RADSEC_CERT_DAYS})`,
      positiveInteger,
    )
    .option("--account <name>", ACCOUNT)
    .action((id: number, options: { out: string; format: string; days?: number; account?: string }) =>
      withCore(async (core) => {
        if (!(FORMATS as readonly string[]).includes(options.format)) {
          throw new ValidationError(`--format must be ${FORMATS.join(" or ")}`);
        }
        refuseExisting(options.out);
        const password = await readPassword();
        const accountId = await ownerOf(core, id, options.account);
        // Created before issuing: a folder that cannot be written leaves no certificate behind.
        const temp = temporaryBeside(options.out, 0o600);
        try {
          const issued = await core.radsec.issue(accountId, id, { days: options.days, password });
          try {
            publish(temp, options.out, fileOf(issued, options.format));
          } catch (error) {
            await core.radsec.revoke(accountId, id, issued.certificate.serial); // nobody holds it
            throw error;
          }
          const { serial, not_after } = issued.certificate;
          console.error(`issued RadSec certificate ${serial} for network ${id}, valid until ${not_after}`);
          console.error(`wrote ${options.out}; install it on the NAS (or its radsecproxy) with the password`);
          console.log(serial);
        } finally {
          fs.rmSync(temp, { force: true });
        }
      }),
    );
}

function registerShowAndRevoke(radsec: Command, withCore: WithCore): void {
  jsonOption(radsec.command("show"))
    .description("show the network's transport, uploaded CA and RadSec certificates")
    .argument("<network-id>", "the network's id (see networks list)", positiveInteger)
    .option("--account <name>", ACCOUNT)
    .action((id: number, options: { account?: string; json?: boolean }) =>
      withCore(async (core) => {
        const network = await core.networks.locate(id, await namedAccount(core, options.account));
        const [certificates, ca] = await Promise.all([
          core.radsec.certificates(network.account_id, id),
          core.radsec.trusted(network.account_id, id),
        ]);
        if (options.json) {
          return console.log(JSON.stringify({ transport: network.transport, ca, certificates }, null, 2));
        }
        printFields([
          ["network", `${id} "${network.name}"`],
          ["transport", network.transport],
          ["nas_ip", network.nas_ip],
          ["ca", ca && `${ca.subject} (SHA-256 ${ca.fingerprint}, until ${ca.not_after})`],
          ["match", ca && `${ca.match.field} ${ca.match.patterns.join(" ")}`],
        ]);
        console.log("");
        printTable(
          ["SERIAL", "STATUS", "NOT BEFORE", "NOT AFTER", "FINGERPRINT"],
          certificates.map((c) => [c.serial, c.status, c.not_before, c.not_after, c.fingerprint]),
        );
      }),
    );

  radsec
    .command("revoke")
    .description("revoke one of the network's RadSec certificates; refused from the next handshake")
    .argument("<network-id>", "the network's id (see networks list)", positiveInteger)
    .argument("<serial>", "the certificate's serial (hex, as radsec show prints it)")
    .option("--account <name>", ACCOUNT)
    .action((id: number, serial: string, options: { account?: string }) =>
      withCore(async (core) => {
        const revoked = await core.radsec.revoke(await ownerOf(core, id, options.account), id, serial);
        console.log(
          `revoked RadSec certificate ${revoked.serial} of network ${id} (since ${revoked.revoked_at})`,
        );
      }),
    );
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function registerTrust(radsec: Command, withCore: WithCore): void {
  radsec
    .command("trust")
    .description(
      "trust an outside CA for the network (uploads or replaces it), with the rule that matches its NAS certificates",
    )
    .argument("<network-id>", "the network's id (see networks list)", positiveInteger)
    .requiredOption("--ca <file.pem>", "the CA certificate, PEM (one certificate, never its key)")
    .requiredOption(
      "--match <field>",
      `the certificate name to match: ${MATCH_FIELDS.join(", ")} (subject CN, SAN DNS, SAN URI)`,
    )
    .requiredOption(
      "--pattern <glob>",
      "a name pattern (* is any run of characters); repeat for more",
      collect,
    )
    .option("--account <name>", ACCOUNT)
    .action((id: number, options: { ca: string; match: string; pattern: string[]; account?: string }) =>
      withCore(async (core) => {
        let pem: string;
        try {
          pem = fs.readFileSync(options.ca, "utf8");
        } catch (error) {
          throw new ValidationError(`cannot read ${options.ca}: ${(error as NodeJS.ErrnoException).code}`);
        }
        const accountId = await ownerOf(core, id, options.account);
        const ca = await core.radsec.trust(accountId, id, {
          ca: pem,
          match: { field: options.match, patterns: options.pattern },
        });
        console.log(
          `network ${id} trusts ${ca.subject} (SHA-256 ${ca.fingerprint}) for ${ca.match.field} ${ca.match.patterns.join(" ")}`,
        );
      }),
    );

  radsec
    .command("untrust")
    .description("remove the network's outside CA: its certificates are refused from the next handshake")
    .argument("<network-id>", "the network's id (see networks list)", positiveInteger)
    .option("--account <name>", ACCOUNT)
    .action((id: number, options: { account?: string }) =>
      withCore(async (core) => {
        await core.radsec.untrust(await ownerOf(core, id, options.account), id);
        console.log(`network ${id} no longer trusts an outside CA`);
      }),
    );
}

export function registerRadsecCommands(networks: Command, withCore: WithCore): void {
  const radsec = networks
    .command("radsec")
    .description("RadSec (RADIUS over TLS): the certificates by which a network's NAS is known");
  registerShowAndRevoke(radsec, withCore);
  registerIssue(radsec, withCore);
  registerTrust(radsec, withCore);
}
