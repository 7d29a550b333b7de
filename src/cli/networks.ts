// `wisp networks ...`: the RADIUS clients. Secrets go to stdout alone (so scripts can capture them)
// and only when one was just set; everything else a person should read goes to stderr.
import { type Command, InvalidArgumentError } from "commander";
import type { Core } from "../core/index.ts";
import type { NetworkInput, NetworkListing } from "../core/networks/service.ts";
import { ValidationError } from "../core/shared/errors.ts";
import { jsonOption, printList, secretOption } from "./output.ts";
import { positiveInteger, type WithCore } from "./program.ts";
import { registerRadsecCommands } from "./radsec.ts";

interface NetworkOptions {
  name?: string;
  nasIp?: string;
  timeZone?: string;
  secret?: string;
  secretStdin?: boolean;
  nasIdentifier?: string;
  description?: string;
  requireMessageAuthenticator?: boolean;
  coa?: boolean;
  coaPort?: number;
  coaFallback?: string;
  coaRate?: number;
  interimInterval?: number;
  staleAfter?: number;
  eapMethod?: string;
  mabMode?: string;
  mabPassword?: string;
  mabSecret?: string;
  vendor?: string;
  radsecOnly?: boolean;
  account?: string;
}

/** A whole number option (0 allowed); the service checks its range. */
function wholeNumber(text: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new InvalidArgumentError("must be a whole number");
  return Number(text);
}

/** The options of the Dynamic Authorization Server and accounting, for create and update. */
function sessionOptions(command: Command): Command {
  return command
    .option(
      "--coa-port <port>",
      "UDP port of the NAS's Dynamic Authorization Server (default 3799)",
      wholeNumber,
    )
    .option(
      "--coa-fallback <fallback>",
      "after a CoA-NAK or no answer: none (recorded only) or disconnect (a Disconnect-Request follows)",
    )
    .option(
      "--coa-rate <per-second>",
      "CoA-Requests per second to one NAS in a batch change (default 20)",
      wholeNumber,
    )
    .option(
      "--interim-interval <seconds>",
      "sent as Acct-Interim-Interval in every Access-Accept (60-86400; 0: none)",
      wholeNumber,
    )
    .option(
      "--stale-after <seconds>",
      "close sessions with no accounting for this long as Lost-Carrier (0: three interim intervals)",
      wholeNumber,
    )
    .option(
      "--mab-mode <mode>",
      "MAC authentication: off, devices (registered devices), guests (devices and remembered guests)",
    )
    .option("--mab-password <kind>", "what the gateways send as MAB password: mac, empty, or secret")
    .option(
      "--vendor <vendor>",
      "the gateway's vendor, for a plan's bandwidth attributes: generic (WISPr), mikrotik, chillispot, cisco, aruba, meraki, ubiquiti",
    )
    .option(
      "--mab-secret <password>",
      "the network-wide MAB password (with --mab-password secret); empty removes it",
    )
    .option(
      "--time-zone <iana>",
      "policies' day and time conditions on this network (e.g. Europe/Paris); empty: the account's",
    );
}

async function inputOf(options: NetworkOptions): Promise<NetworkInput> {
  if (options.radsecOnly && options.nasIp !== undefined) {
    throw new ValidationError("give --nas-ip or --radsec-only, not both");
  }
  return {
    name: options.name,
    nas_ip: options.radsecOnly ? "" : options.nasIp,
    secret: await secretOption(options.secret, options.secretStdin, "--secret"),
    nas_identifier: options.nasIdentifier,
    description: options.description,
    require_message_authenticator: options.requireMessageAuthenticator,
    coa_enabled: options.coa,
    coa_port: options.coaPort,
    coa_fallback: options.coaFallback,
    coa_rate: options.coaRate,
    interim_interval: options.interimInterval,
    stale_after: options.staleAfter,
    eap_method: options.eapMethod,
    mab_mode: options.mabMode,
    mab_password: options.mabPassword,
    mab_secret: options.mabSecret,
    time_zone: options.timeZone,
    vendor: options.vendor,
  };
}

/** The id of the account --account names (it must exist), or undefined when none was named. */
export async function namedAccount(core: Core, name: string | undefined): Promise<number | undefined> {
  return name === undefined ? undefined : (await core.accounts.get(name)).id;
}

/** Prints "label  value" lines, "-" for empty values. */
export function printFields(fields: [string, string | number | null | undefined][]): void {
  const width = Math.max(...fields.map(([label]) => label.length));
  for (const [label, value] of fields) {
    console.log(
      `${label.padEnd(width)}  ${value === null || value === undefined || value === "" ? "-" : value}`,
    );
  }
}

/** A network's address as operators' listings show it: flagged when wider than the limits allow. */
function addressCell(network: NetworkListing): string {
  if (network.transport === "radsec") return "(RadSec only)";
  const address = network.too_wide ? `${network.nas_ip} (too wide)` : network.nas_ip;
  return network.transport === "both" ? `${address} (+RadSec)` : address;
}

/** Said on stderr under a listing that flags a network: what "too wide" means and what to do. */
function tooWideNote(core: Core): string {
  const { ipv4, ipv6 } = core.networks.minPrefix;
  return (
    `too wide: wider than NETWORK_MIN_PREFIX_IPV4=${ipv4} / NETWORK_MIN_PREFIX_IPV6=${ipv6} allow ` +
    "(made before this limit, or under a lower one); it keeps working, but no other account can add a network inside it, " +
    "and a change of its address must narrow it: wisp networks update <id> --nas-ip <narrower range>"
  );
}

const SECRET_NOTE = "configure the devices with this shared secret now; it is not shown again";
/** FreeRADIUS reads the nas table only when it starts (read_clients = yes). */
const RESTART_NOTE = "a FreeRADIUS reading the nas table sees this change after its next restart";

export function registerNetworkCommands(program: Command, withCore: WithCore): void {
  const networks = program
    .command("networks")
    .description("manage networks (RADIUS clients: the access points or controller of one site)");
  const accountOption = "only act if the network belongs to this account";

  sessionOptions(networks.command("create"))
    .description("create a network and print its shared secret (alone on stdout; it is not shown again)")
    .requiredOption("--name <name>", "what the site is called")
    .option(
      "--nas-ip <ip|cidr>",
      "address or CIDR the RADIUS requests come from (unique, and apart from other accounts' networks)",
    )
    .option("--radsec-only", "no address: the NAS reaches Wisp over RadSec and is known by its certificate")
    .option("--secret <secret>", "the RADIUS shared secret (default: a generated one)")
    .option("--secret-stdin", "read the shared secret from standard input (keeps it out of ps and history)")
    .option("--nas-identifier <id>", "the NAS-Identifier the devices send")
    .option("--description <text>", "a note about the network")
    .option("--require-message-authenticator", "drop Access-Requests without a Message-Authenticator")
    .option("--coa", "allow RFC 5176 Disconnect/CoA-Requests to the network's NAS")
    .option(
      "--eap-method <method>",
      "WPA-Enterprise: the EAP method proposed first (peap, ttls or tls; default peap)",
    )
    .option("--account <name>", "the owning account (default: the account named default)")
    .action((options: NetworkOptions) =>
      withCore(async (core) => {
        const input = await inputOf(options);
        if (input.nas_ip === undefined)
          throw new ValidationError("give --nas-ip <ip|cidr>, or --radsec-only");
        // Refuse bad input before anything is written, even the default account.
        core.networks.validateNew(input);
        const account = await core.accounts.resolve(options.account);
        const { network, secret } = await core.networks.create(account.id, input);
        console.error(
          `created network ${network.id} "${network.name}" (${network.nas_ip || "RadSec only"}) ` +
            `for account ${account.name}; ${SECRET_NOTE}`,
        );
        console.error(RESTART_NOTE);
        console.log(secret);
      }),
    );

  jsonOption(networks.command("list").description("list networks (never their secrets)"))
    .option("--account <name>", "only this account's networks")
    .action((options: { account?: string; json?: boolean }) =>
      withCore(async (core) => {
        const rows = await core.networks.listAll(await namedAccount(core, options.account));
        printList(
          options.json,
          rows,
          ["ID", "ACCOUNT", "NAME", "NAS-IP", "NAS-IDENTIFIER", "MSG-AUTH", "CREATED", "DESCRIPTION"],
          (n) => [
            n.id,
            n.account,
            n.name,
            addressCell(n),
            n.nas_identifier,
            n.require_message_authenticator ? "required" : "",
            n.created,
            n.description,
          ],
        );
        if (!options.json && rows.some((n) => n.too_wide)) console.error(tooWideNote(core));
      }),
    );

  networks
    .command("show")
    .description("show one network and its captive portals (not its secret)")
    .argument("<network-id>", "the network's id (see networks list)", positiveInteger)
    .option("--account <name>", accountOption)
    .action((id: number, options: { account?: string }) =>
      withCore(async (core) => {
        const network = await core.networks.locate(id, await namedAccount(core, options.account));
        const portals = await core.portals.listAll(network.account_id, id);
        printFields([
          ["id", network.id],
          ["account", network.account],
          ["name", network.name],
          ["nas_ip", addressCell(network)],
          ["transport", network.transport],
          ["nas_identifier", network.nas_identifier],
          ["description", network.description],
          ["require_message_authenticator", network.require_message_authenticator ? "yes" : "no"],
          ["coa", network.coa_enabled ? `on, port ${network.coa_port}` : `off (port ${network.coa_port})`],
          ["coa_fallback", network.coa_fallback],
          ["coa_rate", `${network.coa_rate}/s per NAS`],
          ["interim_interval", network.interim_interval],
          ["stale_after", network.stale_after],
          ["eap_method", network.eap_method],
          ["vendor", network.vendor],
          [
            "mab",
            `${network.mab_mode}, password ${network.mab_password}${network.mab_secret_set ? " (set)" : ""}`,
          ],
          ["created", network.created],
          ["updated", network.updated],
          ["captive portals", portals.map((p) => `${p.id} "${p.name}"`).join(", ")],
        ]);
        if (network.too_wide) console.error(tooWideNote(core));
      }),
    );

  sessionOptions(networks.command("update"))
    .description("change a network; with --secret, prints the new secret alone on stdout")
    .argument("<network-id>", "the network's id (see networks list)", positiveInteger)
    .option("--name <name>", "what the site is called")
    .option(
      "--nas-ip <ip|cidr>",
      "address or CIDR the RADIUS requests come from (unique, and apart from other accounts' networks)",
    )
    .option("--radsec-only", "drop the address: the NAS reaches Wisp over RadSec only")
    .option("--secret <secret>", "a new RADIUS shared secret (rotate-secret generates one)")
    .option("--secret-stdin", "read the new shared secret from standard input")
    .option("--nas-identifier <id>", "the NAS-Identifier the devices send")
    .option("--description <text>", "a note about the network")
    .option("--require-message-authenticator", "drop Access-Requests without a Message-Authenticator")
    .option(
      "--eap-method <method>",
      "WPA-Enterprise: the EAP method proposed first (peap, ttls or tls; default peap)",
    )
    .option("--no-require-message-authenticator", "accept Access-Requests without a Message-Authenticator")
    .option("--coa", "allow RFC 5176 Disconnect/CoA-Requests to the network's NAS")
    .option("--no-coa", "send no Disconnect/CoA-Requests to the network's NAS")
    .option("--account <name>", accountOption)
    .action((id: number, options: NetworkOptions) =>
      withCore(async (core) => {
        const input = await inputOf(options);
        if (Object.values(input).every((value) => value === undefined)) {
          throw new ValidationError(
            "nothing to change: give --name, --nas-ip, --radsec-only, --secret, --nas-identifier, --description, " +
              "--[no-]require-message-authenticator, --[no-]coa, --coa-port, --coa-fallback, --coa-rate, --interim-interval, --stale-after, --eap-method or --mab-*",
          );
        }
        const owner = await core.networks.locate(id, await namedAccount(core, options.account));
        const { network, secret } = await core.networks.update(owner.account_id, id, input);
        const summary = `updated network ${network.id} "${network.name}" (${network.nas_ip})`;
        if (input.nas_ip !== undefined || secret !== undefined) console.error(RESTART_NOTE);
        if (secret === undefined) return console.log(summary);
        console.error(`${summary}; ${SECRET_NOTE}`);
        console.log(secret);
      }),
    );

  networks
    .command("rotate-secret")
    .description("replace a network's shared secret with a generated one and print it alone on stdout")
    .argument("<network-id>", "the network's id (see networks list)", positiveInteger)
    .option("--account <name>", accountOption)
    .action((id: number, options: { account?: string }) =>
      withCore(async (core) => {
        const owner = await core.networks.locate(id, await namedAccount(core, options.account));
        const { network, secret } = await core.networks.rotateSecret(owner.account_id, id);
        console.error(
          `new shared secret for network ${network.id} "${network.name}" (${network.nas_ip}); ` +
            `the old one stops working; ${SECRET_NOTE}`,
        );
        console.error(RESTART_NOTE);
        console.log(secret);
      }),
    );

  networks
    .command("delete")
    .description("delete a network together with its captive portals")
    .argument("<network-id>", "the network's id (see networks list)", positiveInteger)
    .option("--account <name>", accountOption)
    .action((id: number, options: { account?: string }) =>
      withCore(async (core) => {
        const owner = await core.networks.locate(id, await namedAccount(core, options.account));
        const { network, portalsDeleted } = await core.networks.delete(owner.account_id, id);
        const portals =
          portalsDeleted === 0
            ? "; it had no captive portals"
            : ` and its ${portalsDeleted} captive portal${portalsDeleted === 1 ? "" : "s"}`;
        console.log(`deleted network ${network.id} "${network.name}" (${network.nas_ip})${portals}`);
        console.error(RESTART_NOTE);
      }),
    );

  registerRadsecCommands(networks, withCore);
}
