// `wisp portals ...`: captive portals, each on a network of its own account.
import { readFile, stat } from "node:fs/promises";
import type { Command } from "commander";
import { MAX_LOGO_BYTES } from "../core/portals/logo.ts";
import { PORTAL_LANGUAGES, PORTAL_METHODS, PORTAL_VENDORS } from "../core/portals/rules.ts";
import type { PortalInput } from "../core/portals/service.ts";
import { ValidationError } from "../core/shared/errors.ts";
import { namedAccount } from "./networks.ts";
import { jsonOption, printList, secretOption } from "./output.ts";
import { positiveInteger, type WithCore } from "./program.ts";

interface PortalOptions {
  name?: string;
  network?: number;
  successUrl?: string;
  account?: string;
  enabled?: string;
  vendor?: string;
  uamSecret?: string;
  uamSecretStdin?: boolean;
  uamAuth?: string;
  title?: string;
  welcomeText?: string;
  terms?: string;
  termsFile?: string;
  methods?: string;
  language?: string;
  colorPrimary?: string;
  colorBackground?: string;
  genericLoginParam?: string;
  genericUsernameField?: string;
  genericPasswordField?: string;
  genericRedirectField?: string;
  genericExtraFields?: string;
  allowedGateways?: string;
  clickthroughValidity?: number;
  clickthroughSessionTimeout?: number;
  registrationValidity?: number;
  rememberDevices?: string;
  rememberDays?: number;
  randomMacs?: string;
  guestGroup?: string;
  identityProviders?: string;
  /** update: a file to upload as the logo, or false (--no-logo) to remove it. */
  logo?: string | false;
}

/** The logo file's bytes; a larger file than allowed is refused before it is read. */
async function logoFile(path: string): Promise<Buffer> {
  if ((await stat(path)).size > MAX_LOGO_BYTES) {
    throw ValidationError.field("logo", `must be at most ${MAX_LOGO_BYTES / 1024} KB`);
  }
  return readFile(path);
}

function guestGroupOf(value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === "" || value === "none") return null;
  if (!/^\d{1,10}$/.test(value)) throw ValidationError.field("guest_group_id", "must be a group id or none");
  return Number(value);
}

/** --identity-providers 3,5 (ids, see wisp idp list); "none" for none. */
function providersOf(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  if (value === "none" || value === "") return [];
  const ids = value.split(",").map((v) => v.trim());
  if (ids.some((id) => !/^\d{1,9}$/.test(id)))
    throw ValidationError.field(
      "identity_providers",
      "must be identity provider ids separated by commas, or none",
    );
  return ids.map(Number);
}

function yesNo(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === "yes") return true;
  if (value === "no") return false;
  throw ValidationError.field("enabled", "must be yes or no");
}

async function inputOf(options: PortalOptions): Promise<PortalInput> {
  if (options.terms !== undefined && options.termsFile !== undefined) {
    throw new ValidationError("give --terms or --terms-file, not both");
  }
  const terms = options.termsFile !== undefined ? await readFile(options.termsFile, "utf8") : options.terms;
  return {
    name: options.name,
    network_id: options.network,
    success_url: options.successUrl,
    enabled: yesNo(options.enabled),
    vendor: options.vendor,
    uam_secret: await secretOption(options.uamSecret, options.uamSecretStdin, "--uam-secret"),
    uam_auth: options.uamAuth,
    title: options.title,
    welcome_text: options.welcomeText,
    terms,
    methods: options.methods === undefined ? undefined : options.methods.split(","),
    language: options.language,
    color_primary: options.colorPrimary,
    color_background: options.colorBackground,
    generic_login_param: options.genericLoginParam,
    generic_username_field: options.genericUsernameField,
    generic_password_field: options.genericPasswordField,
    generic_redirect_field: options.genericRedirectField,
    generic_extra_fields: options.genericExtraFields,
    allowed_gateways:
      options.allowedGateways === undefined
        ? undefined
        : options.allowedGateways.split(/[\s,]+/).filter(Boolean),
    clickthrough_validity: options.clickthroughValidity,
    clickthrough_session_timeout: options.clickthroughSessionTimeout,
    registration_validity: options.registrationValidity,
    remember_devices: options.rememberDevices,
    remember_days: options.rememberDays,
    random_macs: options.randomMacs,
    guest_group_id: guestGroupOf(options.guestGroup),
    identity_providers: providersOf(options.identityProviders),
  };
}

/** The page and hand-off options shared by create and update. */
function pageOptions(command: Command): Command {
  return command
    .option("--enabled <yes|no>", "whether the guest page answers (no: 404)")
    .option("--vendor <vendor>", `the gateway: ${PORTAL_VENDORS.join(", ")} (default generic)`)
    .option(
      "--uam-secret <secret>",
      "the UAM secret shared with a CoovaChilli gateway (write-only; '' removes)",
    )
    .option("--uam-secret-stdin", "read the UAM secret from standard input")
    .option("--uam-auth <chap|pap>", "CoovaChilli: hand the password over as a CHAP response or PAP-encoded")
    .option("--title <text>", "the page's heading (default: the portal's name)")
    .option("--welcome-text <text>", "plain text under the title")
    .option("--terms <text>", "plain-text terms of use (paragraphs, bare http(s) links)")
    .option("--terms-file <path>", "read the terms from a UTF-8 text file")
    .option(
      "--methods <list>",
      `comma-separated sign-in methods: ${PORTAL_METHODS.join(", ")} (default voucher)`,
    )
    .option("--language <code>", `auto (the guest's browser) or ${PORTAL_LANGUAGES.join(", ")}`)
    .option("--color-primary <#rrggbb>", "header and button colour")
    .option("--color-background <#rrggbb>", "page background colour")
    .option("--generic-login-param <name>", "generic vendor: query parameter with the gateway's login URL")
    .option("--generic-username-field <name>", "generic vendor: the login form's username field")
    .option("--generic-password-field <name>", "generic vendor: the login form's password field")
    .option("--generic-redirect-field <name>", "generic vendor: field for the page after login ('' for none)")
    .option(
      "--generic-extra-fields <pairs>",
      "generic vendor: extra form fields, name=value&name=$gatewayParam (e.g. accept=Continue&zone=$zone)",
    )
    .option(
      "--allowed-gateways <list>",
      "comma-separated gateway addresses, CIDRs or host names (hotspot.lan) guests may be handed to " +
        "('' for the default: private, CGNAT, link-local and unique local addresses only)",
    )
    .option(
      "--clickthrough-validity <seconds>",
      "click-through: how long the one-time credential stays valid (default 86400)",
      positiveInteger,
    )
    .option(
      "--clickthrough-session-timeout <seconds>",
      "click-through: how long one session may last (default 3600)",
      positiveInteger,
    )
    .option(
      "--registration-validity <seconds>",
      "registration: how long a registered guest stays valid (default 604800)",
      positiveInteger,
    )
    .option("--guest-group <group-id|none>", "registration: the group registered guests join")
    .option(
      "--identity-providers <ids|none>",
      "idp method: the identity providers offered, by id separated by commas (see wisp idp list)",
    )
    .option(
      "--remember-devices <choice>",
      "remember guests' devices for MAC authentication without the page: never, ask, always",
    )
    .option("--remember-days <days>", "how long a device is remembered (1-365, default 30)", positiveInteger)
    .option(
      "--random-macs <choice>",
      "randomised (private) addresses: refuse or allow (when the guest asks)",
    );
}

export function registerPortalCommands(program: Command, withCore: WithCore): void {
  const portals = program.command("portals").description("manage captive portals (guest login pages)");
  const accountOption = "only act if the portal belongs to this account";

  pageOptions(portals.command("create"))
    .description("create a captive portal on a network of the account")
    .requiredOption("--name <name>", "what guests see it called")
    .requiredOption("--network <network-id>", "the network it serves (same account)", positiveInteger)
    .option("--success-url <url>", "where guests go after logging in (http or https)")
    .option("--account <name>", "the owning account (default: the account named default)")
    .action((options: PortalOptions) =>
      withCore(async (core) => {
        const input = await inputOf(options);
        // Refuse bad input before anything is written, even the default account.
        core.portals.validateNew(input);
        const account = await core.accounts.resolve(options.account);
        const portal = await core.portals.create(account.id, input);
        console.log(
          `created captive portal ${portal.id} "${portal.name}" on network ${portal.network_id} ` +
            `for account ${account.name}; login URL ${portal.login_url}`,
        );
        // The CLI reads its own environment: a server started with other settings has another URL.
        if (!process.env.PUBLIC_URL) {
          console.error(
            "PUBLIC_URL is not set for this command: the login URL is made from its HOST and PORT; " +
              "run the CLI with the server's PUBLIC_URL (or HOST and PORT)",
          );
        }
      }),
    );

  jsonOption(portals.command("list").description("list captive portals"))
    .option("--account <name>", "only this account's portals")
    .option("--network <network-id>", "only this network's portals", positiveInteger)
    .action((options: { account?: string; network?: number; json?: boolean }) =>
      withCore(async (core) => {
        const rows = await core.portals.listAll(await namedAccount(core, options.account), options.network);
        printList(
          options.json,
          rows,
          // Every field, the page's included, is in --json; the table keeps to the essentials.
          ["ID", "ACCOUNT", "NAME", "NETWORK", "LOGIN URL", "SUCCESS URL", "CREATED"],
          (p) => [p.id, p.account, p.name, p.network_id, p.login_url, p.success_url, p.created],
        );
      }),
    );

  pageOptions(portals.command("update"))
    .description("change a captive portal (--success-url '' removes it)")
    .argument("<portal-id>", "the portal's id (see portals list)", positiveInteger)
    .option("--name <name>", "what guests see it called")
    .option("--network <network-id>", "move it to another network of its account", positiveInteger)
    .option("--success-url <url>", "where guests go after logging in (http or https)")
    .option("--account <name>", accountOption)
    .option("--logo <file>", "a PNG, JPEG or WebP of at most 512 KB shown on the guest page")
    .option("--no-logo", "remove the logo")
    .action((id: number, options: PortalOptions) =>
      withCore(async (core) => {
        const input = await inputOf(options);
        const changes = Object.values(input).some((value) => value !== undefined);
        if (!changes && options.logo === undefined) {
          throw new ValidationError(
            "nothing to change: give --name, --network, --success-url, --logo, --no-logo or a page option",
          );
        }
        const logo = typeof options.logo === "string" ? await logoFile(options.logo) : undefined;
        const owner = await core.portals.locate(id, await namedAccount(core, options.account));
        // The logo first: a refused file changes nothing else.
        if (logo) {
          const stored = await core.portals.setLogo(owner.account_id, id, logo);
          console.log(`logo set: ${stored.content_type}, ${stored.width} x ${stored.height} pixels`);
        } else if (options.logo === false) {
          const removed = await core.portals.removeLogo(owner.account_id, id);
          console.log(removed ? "logo removed" : "there was no logo");
        }
        if (changes) {
          const portal = await core.portals.update(owner.account_id, id, input);
          console.log(`updated captive portal ${portal.id} "${portal.name}" on network ${portal.network_id}`);
        }
      }),
    );

  portals
    .command("delete")
    .description("delete a captive portal")
    .argument("<portal-id>", "the portal's id (see portals list)", positiveInteger)
    .option("--account <name>", accountOption)
    .action((id: number, options: { account?: string }) =>
      withCore(async (core) => {
        const owner = await core.portals.locate(id, await namedAccount(core, options.account));
        const portal = await core.portals.delete(owner.account_id, id);
        console.log(`deleted captive portal ${portal.id} "${portal.name}"`);
      }),
    );
}
