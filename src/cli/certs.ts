// `wisp certs ...`: the CA clients install for WPA-Enterprise, and client certificates for EAP-TLS.
// What scripts take goes to stdout alone (the CA, a serial, a list); what people read, to stderr.
// Files are written whole or not at all: a temporary file beside the target, then linked into
// place, which fails rather than replace a file that appeared meanwhile.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { DEFAULT_ACCOUNT } from "../core/accounts/service.ts";
import { CLIENT_DAYS, MAX_CLIENT_DAYS } from "../core/certs/rules.ts";
import type { Core } from "../core/index.ts";
import { AppError, ValidationError } from "../core/shared/errors.ts";
import { jsonOption, printList, readStdin } from "./output.ts";
import { positiveInteger, type WithCore } from "./program.ts";

/** A file's own temporary sibling, created now (mode `mode`, never an existing file). */
export function temporaryBeside(target: string, mode: number): string {
  const temp = path.join(
    path.dirname(target),
    `.${path.basename(target)}.${randomBytes(6).toString("hex")}.tmp`,
  );
  try {
    fs.writeFileSync(temp, "", { flag: "wx", mode });
  } catch (error) {
    throw new ValidationError(
      `cannot write in ${path.dirname(target)}: ${(error as NodeJS.ErrnoException).code}`,
    );
  }
  return temp;
}

export function refuseExisting(target: string): void {
  if (fs.existsSync(target))
    throw new ValidationError(`${target} already exists; choose another --out or remove it first`);
}

/** Fills the temporary file and links it to `target`; the temporary name is gone either way. */
export function publish(temp: string, target: string, data: string | Buffer): void {
  try {
    fs.writeFileSync(temp, data);
    fs.linkSync(temp, target); // unlike rename, never replaces an existing file
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ValidationError(
      code === "EEXIST"
        ? `${target} appeared meanwhile; nothing was replaced`
        : `cannot write ${target}: ${code}`,
    );
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** The account a command acts for: --account, else `default` (which must exist to be listed). */
async function accountOf(core: Core, name: string | undefined, create: boolean) {
  return create ? core.accounts.resolve(name) : core.accounts.get(name ?? DEFAULT_ACCOUNT);
}

export function registerCertCommands(program: Command, withCore: WithCore): void {
  const certs = program
    .command("certs")
    .description("certificates for WPA-Enterprise: the CA clients trust, client certificates for EAP-TLS");

  certs
    .command("ca")
    .description("print the CA certificate clients install to check the RADIUS server, and its fingerprint")
    .option("--der", "binary DER instead of PEM (needs --out)")
    .option("--out <file>", "write it to this new file instead of standard output")
    .action((options: { der?: boolean; out?: string }) =>
      withCore(async (core) => {
        if (options.der && !options.out)
          throw new ValidationError("--der writes binary: give --out <file> too");
        if (options.out) refuseExisting(options.out);
        const authority = await core.certs.authorityCertificate();
        if (!authority) {
          throw new AppError(
            409,
            "the server certificate comes from EAP_CERT_FILE, and neither it nor EAP_CA_FILE holds the CA " +
              "that issued it: give clients that CA yourself",
          );
        }
        if (options.out) {
          publish(
            temporaryBeside(options.out, 0o644),
            options.out,
            options.der ? authority.der : authority.pem,
          );
          console.error(`wrote ${options.out}`);
        } else {
          process.stdout.write(authority.pem);
        }
        console.error(`subject ${authority.subject}, valid until ${authority.not_after}`);
        console.error(`SHA-256 fingerprint ${authority.fingerprint}`);
      }),
    );

  certs
    .command("issue")
    .description(
      "issue a client certificate for EAP-TLS as a PKCS#12 file, protected by a password read from standard input",
    )
    .argument("<username>", "the user it logs in as (CN and SAN)")
    .requiredOption("--out <file.p12>", "the new file to write (mode 0600; never replaces a file)")
    .option(
      "--days <n>",
      `how long it is valid (default ${CLIENT_DAYS}, at most ${MAX_CLIENT_DAYS})`,
      positiveInteger,
    )
    .option("--account <name>", "the user's account (default: the account named default)")
    .action((username: string, options: { out: string; days?: number; account?: string }) =>
      withCore(async (core) => {
        refuseExisting(options.out);
        if (process.stdin.isTTY) {
          console.error(
            "wisp: type the PKCS#12 password, then Enter and Ctrl-D (it is echoed: a pipe is better)",
          );
        }
        const password = await readStdin();
        if (password === "")
          throw new ValidationError("the PKCS#12 password is read from standard input, which was empty");
        // Created before issuing: a folder that cannot be written leaves no certificate behind.
        const temp = temporaryBeside(options.out, 0o600);
        try {
          const account = await accountOf(core, options.account, true);
          const issued = await core.certs.issue(account.id, { username, days: options.days, password });
          try {
            publish(temp, options.out, issued.pkcs12);
          } catch (error) {
            // Nobody holds this certificate: it must never log in.
            await core.certs.revoke(account.id, issued.certificate.serial);
            throw error;
          }
          const { serial, not_after } = issued.certificate;
          console.error(
            `issued certificate ${serial} for ${username} (account ${account.name}), valid until ${not_after}`,
          );
          console.error(`wrote ${options.out}; import it on the device with the password`);
          console.log(serial);
        } finally {
          fs.rmSync(temp, { force: true });
        }
      }),
    );

  jsonOption(certs.command("list").description("list the client certificates of an account"))
    .option("--user <username>", "only this user's")
    .option("--account <name>", "the account (default: the account named default)")
    .action((options: { user?: string; account?: string; json?: boolean }) =>
      withCore(async (core) => {
        const account = await accountOf(core, options.account, false);
        const rows = await core.certs.list(account.id, { user: options.user });
        printList(
          options.json,
          rows,
          ["SERIAL", "USER", "STATUS", "NOT BEFORE", "NOT AFTER", "REVOKED"],
          (c) => [c.serial, c.username, c.status, c.not_before, c.not_after, c.revoked_at],
        );
      }),
    );

  certs
    .command("revoke")
    .description("revoke a client certificate; EAP-TLS refuses it from the next login")
    .argument("<serial>", "the certificate's serial (hex, as certs list shows it; colons allowed)")
    .option("--account <name>", "the account (default: the account named default)")
    .action((serial: string, options: { account?: string }) =>
      withCore(async (core) => {
        const account = await accountOf(core, options.account, false);
        const revoked = await core.certs.revoke(account.id, serial);
        console.log(
          `revoked certificate ${revoked.serial} of ${revoked.username} (since ${revoked.revoked_at})`,
        );
      }),
    );
}
