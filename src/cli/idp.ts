// `wisp idp ...`: an account's identity providers (issue 26), and its console's password login.
// The client secret is write-only: read from --client-secret-stdin (or the option), never printed.
// SAML metadata comes from a file or an address Wisp reads.
import { readFile, stat } from "node:fs/promises";
import { type Command, InvalidArgumentError } from "commander";
import { IDP_PRESETS, MAX_METADATA } from "../core/idp/rules.ts";
import type { IdentityProvider, ProviderInput } from "../core/idp/service.ts";
import type { Core } from "../core/index.ts";
import { ValidationError } from "../core/shared/errors.ts";
import { printFields } from "./networks.ts";
import { jsonOption, printList, secretOption } from "./output.ts";
import type { WithCore } from "./program.ts";

interface IdpOptions {
  kind?: string;
  preset?: string;
  displayName?: string;
  enabled?: boolean;
  issuer?: string;
  clientId?: string;
  clientSecret?: string;
  clientSecretStdin?: boolean;
  scopes?: string;
  userClaim?: string;
  groupClaim?: string;
  allowedDomains?: string;
  metadataFile?: string;
  metadataUrl?: string;
  userAttribute?: string;
  groupAttribute?: string;
  consoleLogin?: boolean;
  adminDomains?: string;
  map?: string[];
  clearMappings?: boolean;
  account?: string;
}

/** --map "IdP group=Wisp group", repeatable. */
function mapping(text: string, previous: string[] = []): string[] {
  if (text.lastIndexOf("=") < 1) throw new InvalidArgumentError('must be "IdP group=Wisp group"');
  return [...previous, text];
}

const list = (text: string | undefined) => (text === undefined ? undefined : [text]);

async function metadataOf(file: string | undefined): Promise<string | undefined> {
  if (file === undefined) return undefined;
  if ((await stat(file)).size > MAX_METADATA)
    throw ValidationError.field("metadata", `must be at most ${MAX_METADATA / 1024} KiB`);
  return readFile(file, "utf8");
}

async function inputOf(options: IdpOptions): Promise<ProviderInput> {
  const mappings = options.map?.map((m) => {
    const eq = m.lastIndexOf("=");
    return { idp_group: m.slice(0, eq).trim(), group: m.slice(eq + 1).trim() };
  });
  return {
    kind: options.kind,
    display_name: options.displayName,
    enabled: options.enabled,
    issuer: options.issuer,
    client_id: options.clientId,
    client_secret: await secretOption(options.clientSecret, options.clientSecretStdin, "--client-secret"),
    scopes: options.scopes,
    user_claim: options.userClaim,
    group_claim: options.groupClaim,
    allowed_domains: list(options.allowedDomains),
    metadata: await metadataOf(options.metadataFile),
    metadata_url: options.metadataUrl,
    user_attribute: options.userAttribute,
    group_attribute: options.groupAttribute,
    console_login: options.consoleLogin,
    admin_domains: list(options.adminDomains),
    group_mappings: options.clearMappings ? [] : mappings,
  };
}

/** The options create and update share. */
function fieldOptions(command: Command): Command {
  return command
    .option("--display-name <text>", "the button's text (guest page, console login)")
    .option("--issuer <url>", "OIDC: the issuer URL (discovery at /.well-known/openid-configuration)")
    .option("--client-id <id>", "OIDC: the client id registered at the IdP")
    .option(
      "--client-secret <secret>",
      "OIDC: the client secret (visible in ps: prefer --client-secret-stdin)",
    )
    .option("--client-secret-stdin", "OIDC: read the client secret from standard input")
    .option("--scopes <scopes>", 'OIDC: space-separated scopes with openid (default "openid email profile")')
    .option("--user-claim <claim>", "OIDC: the claim naming the user (default sub; Entra ID: oid)")
    .option("--group-claim <claim>", "OIDC: the claim listing the user's groups")
    .option("--allowed-domains <list>", "only verified emails of these domains (comma-separated) sign in")
    .option("--metadata-file <path>", "SAML: the IdP's metadata XML")
    .option("--metadata-url <url>", "SAML: the IdP's metadata address (read now)")
    .option("--user-attribute <name>", "SAML: the attribute naming the user (default: the NameID)")
    .option("--group-attribute <name>", "SAML: the attribute listing the user's groups")
    .option("--console-login", "console users of the account may log in through it")
    .option("--admin-domains <list>", "console users are created on first sign-in for these domains")
    .option(
      "--map <idp-group=group>",
      "map an IdP group to a Wisp group (repeatable; replaces the mapping)",
      mapping,
    )
    .option("--account <name>", "the account (default: the account named default)");
}

function show(p: IdentityProvider): void {
  printFields([
    ["id", p.id],
    ["name", p.name],
    ["display_name", p.display_name],
    ["kind", p.kind],
    ["enabled", p.enabled ? "yes" : "no"],
    ...(p.kind === "oidc"
      ? ([
          ["issuer", p.issuer],
          ["client_id", p.client_id],
          ["client_secret", p.client_secret_set ? "set (never shown)" : "none"],
          ["scopes", p.scopes],
          ["user_claim", p.user_claim],
          ["group_claim", p.group_claim],
          ["redirect_uri", p.redirect_uri],
        ] as [string, string][])
      : ([
          ["idp_entity_id", p.idp_entity_id],
          ["sso_url", p.sso_url],
          ["metadata_url", p.metadata_url],
          ["user_attribute", p.user_attribute || "(NameID)"],
          ["group_attribute", p.group_attribute],
          ["sp_entity_id", p.sp_entity_id],
          ["acs_url", p.redirect_uri],
          ["sp_metadata_url", p.sp_metadata_url],
        ] as [string, string][])),
    ["allowed_domains", p.allowed_domains.join(", ")],
    ["console_login", p.console_login ? "yes" : "no"],
    ["admin_domains", p.admin_domains.join(", ")],
    ["group_mappings", p.group_mappings.map((m) => `${m.idp_group}=${m.group}`).join(", ")],
    ["created", p.created],
    ["updated", p.updated],
  ]);
}

async function accountId(core: Core, name: string | undefined): Promise<number> {
  return (await core.accounts.resolve(name)).id;
}

export function registerIdpCommands(program: Command, withCore: WithCore): void {
  const idp = program
    .command("idp")
    .description(
      "manage identity providers (OpenID Connect, SAML) for guest sign-in and console single sign-on",
    );
  const presets = Object.keys(IDP_PRESETS).join(", ");

  fieldOptions(idp.command("create"))
    .description("create an identity provider and show it (with the addresses to register at the IdP)")
    .argument("<name>", "short name: 1-20 of a-z 0-9 -, the prefix of its users' names; fixed")
    .option("--kind <kind>", "oidc or saml (or take it from --preset)")
    .option("--preset <preset>", `start from a preset: ${presets}`)
    .option("--disabled", "create it disabled")
    .action((name: string, options: IdpOptions & { disabled?: boolean }) =>
      withCore(async (core) => {
        const preset =
          options.preset === undefined ? {} : (IDP_PRESETS as Record<string, object>)[options.preset];
        if (!preset) throw ValidationError.field("preset", `must be one of ${presets}`);
        const given = Object.fromEntries(
          Object.entries(await inputOf(options)).filter(([, v]) => v !== undefined),
        );
        const input: ProviderInput = { ...preset, ...given, name, enabled: !options.disabled };
        if (input.issuer?.includes("<"))
          throw ValidationError.field("issuer", `replace the preset's placeholder: --issuer ${input.issuer}`);
        const created = await core.idp.create(await accountId(core, options.account), input);
        console.error(`created identity provider ${created.id} "${created.name}"`);
        show(created);
      }),
    );

  jsonOption(idp.command("list").description("list identity providers (never their secrets)"))
    .option("--account <name>", "the account (default: the account named default)")
    .action((options: { account?: string; json?: boolean }) =>
      withCore(async (core) => {
        const rows = await core.idp.list(await accountId(core, options.account));
        printList(
          options.json,
          rows,
          ["ID", "NAME", "KIND", "ENABLED", "CONSOLE", "DISPLAY NAME", "ISSUER/IDP"],
          (p) => [
            p.id,
            p.name,
            p.kind,
            p.enabled ? "yes" : "no",
            p.console_login ? "yes" : "no",
            p.display_name,
            p.kind === "oidc" ? p.issuer : p.idp_entity_id,
          ],
        );
      }),
    );

  jsonOption(idp.command("show").description("show one identity provider (not its secret)"))
    .argument("<provider>", "the provider's id or name")
    .option("--account <name>", "the account (default: the account named default)")
    .action((ref: string, options: { account?: string; json?: boolean }) =>
      withCore(async (core) => {
        const p = await core.idp.find(await accountId(core, options.account), ref);
        if (options.json) console.log(JSON.stringify(p, null, 2));
        else show(p);
      }),
    );

  fieldOptions(idp.command("update"))
    .description("change an identity provider (name and kind are fixed)")
    .argument("<provider>", "the provider's id or name")
    .option("--enable", "enable it")
    .option("--disable", "disable it: its buttons go, sign-ins in progress are refused")
    .option("--no-console-login", "console users may no longer log in through it")
    .option("--clear-mappings", "remove the whole group mapping")
    .action((ref: string, options: IdpOptions & { enable?: boolean; disable?: boolean }) =>
      withCore(async (core) => {
        if (options.enable && options.disable)
          throw new ValidationError("give --enable or --disable, not both");
        const input = await inputOf({
          ...options,
          enabled: options.enable ? true : options.disable ? false : undefined,
        });
        if (Object.values(input).every((v) => v === undefined))
          throw new ValidationError(
            "nothing to change: give at least one option (see wisp idp update --help)",
          );
        const account = await accountId(core, options.account);
        const found = await core.idp.find(account, ref);
        const updated = await core.idp.update(account, found.id, input);
        console.log(`updated identity provider ${updated.id} "${updated.name}"`);
      }),
    );

  idp
    .command("delete")
    .description("delete an identity provider and its group mapping (its users stay)")
    .argument("<provider>", "the provider's id or name")
    .option("--account <name>", "the account (default: the account named default)")
    .action((ref: string, options: { account?: string }) =>
      withCore(async (core) => {
        const account = await accountId(core, options.account);
        const found = await core.idp.find(account, ref);
        await core.idp.delete(account, found.id);
        console.log(`deleted identity provider ${found.id} "${found.name}"`);
      }),
    );

  idp
    .command("password-login")
    .description("turn password login to the console on or off for an account (off: single sign-on only)")
    .argument("<on|off>", "on or off")
    .option("--account <name>", "the account (default: the account named default)")
    .action((state: string, options: { account?: string }) =>
      withCore(async (core) => {
        if (state !== "on" && state !== "off") throw new ValidationError("say on or off");
        const account = await core.accounts.resolve(options.account);
        await core.consoleSso.setPasswordLoginFor(account.id, state === "on");
        console.log(
          state === "on"
            ? `password login to the console is on for account ${account.name}`
            : `password login to the console is off for account ${account.name}; its password sessions were ended`,
        );
      }),
    );
}
