// Identity providers (issue 26): an account's OpenID Connect and SAML 2.0 IdPs, managed by the
// console, the CLI and the API; the group mapping of each; the addresses Wisp gives the IdP (OIDC
// redirect URI, SAML ACS and SP metadata). The sign-in itself is in signin.ts.

import { isUniqueViolation } from "../../db/database.ts";
import { ConflictError, type FieldProblem, NotFoundError, ValidationError } from "../shared/errors.ts";
import { offsetOf, type Page, type PageRequest } from "../shared/pages.ts";
import { hasControlCharacters } from "../shared/text.ts";
import { isoNow } from "../shared/time.ts";
import type { SecretBox } from "../webhooks/crypto.ts";
import type { UrlFetch } from "../webhooks/sender.ts";
import type { IdpRepo, ProviderChanges, ProviderRow } from "./repo.ts";
import {
  CLAIM_PATTERN,
  DOMAIN_PATTERN,
  domainEntries,
  IDP_KINDS,
  IDP_NAME_PATTERN,
  IDP_NAME_RULE,
  IDP_TIMEOUT_MS,
  type IdpKind,
  MAX_ATTRIBUTE,
  MAX_CLIENT_ID,
  MAX_CLIENT_SECRET,
  MAX_DISPLAY_NAME,
  MAX_DOMAINS,
  MAX_IDP_GROUP,
  MAX_MAPPINGS,
  MAX_METADATA,
  MAX_SCOPES,
  urlProblem,
} from "./rules.ts";

/** What operators see of a provider (the client secret only as set or not). */
export interface IdentityProvider {
  id: number;
  name: string;
  display_name: string;
  kind: IdpKind;
  enabled: boolean;
  issuer: string;
  client_id: string;
  client_secret_set: boolean;
  scopes: string;
  user_claim: string;
  group_claim: string;
  allowed_domains: string[];
  metadata_url: string;
  /** From the SAML metadata: the IdP's entity id and sign-on address. */
  idp_entity_id: string;
  sso_url: string;
  user_attribute: string;
  group_attribute: string;
  console_login: boolean;
  admin_domains: string[];
  /** OIDC: the redirect URI to register at the IdP; SAML: the assertion consumer service. */
  redirect_uri: string;
  /** SAML: Wisp's entity id and metadata address (the IdP reads them). */
  sp_entity_id: string;
  sp_metadata_url: string;
  group_mappings: GroupMapping[];
  created: string;
  updated: string;
}

export interface GroupMapping {
  idp_group: string;
  group: string;
}

export interface ProviderInput {
  name?: string | undefined;
  display_name?: string | undefined;
  kind?: string | undefined;
  enabled?: boolean | undefined;
  issuer?: string | undefined;
  client_id?: string | undefined;
  /** Write-only; empty removes it. */
  client_secret?: string | undefined;
  scopes?: string | undefined;
  user_claim?: string | undefined;
  group_claim?: string | undefined;
  allowed_domains?: string[] | undefined;
  metadata_url?: string | undefined;
  /** SAML metadata XML as uploaded (or read from metadata_url when that is given). */
  metadata?: string | undefined;
  user_attribute?: string | undefined;
  group_attribute?: string | undefined;
  console_login?: boolean | undefined;
  admin_domains?: string[] | undefined;
  /** Replaces the whole mapping: IdP group -> Wisp group name. */
  group_mappings?: GroupMapping[] | undefined;
}

export interface IdpServiceOptions {
  /** Wisp's address as browsers reach it (PUBLIC_URL): the base of every address given to the IdP. */
  publicUrl: string;
  /** IDP_ALLOW_HTTP: plain-http issuers and metadata (labs and tests); https only otherwise. */
  allowHttp: boolean;
  /** Reads metadata_url: through the SSRF guard (core/webhooks/sender.ts) in a server. */
  fetch?: UrlFetch;
  box: SecretBox;
}

const sealContext = (accountId: number, id: number) => `identity provider client secret ${accountId} ${id}`;
const entries = (stored: string) => (stored === "" ? [] : stored.split(","));
const oneLine = (value: string, max: number) => value.length <= max && !hasControlCharacters(value);

/** The field checks that need no database; pushes a problem per bad field. */
function checkFields(
  input: ProviderInput,
  clean: ProviderInput,
  allowHttp: boolean,
  problems: FieldProblem[],
) {
  const bad = (field: string, message: string) => problems.push({ field, message });
  if (input.name !== undefined && !IDP_NAME_PATTERN.test(input.name)) bad("name", IDP_NAME_RULE);
  if (input.kind !== undefined && !(IDP_KINDS as readonly string[]).includes(input.kind))
    bad("kind", `must be one of ${IDP_KINDS.join(", ")}`);
  if (input.display_name !== undefined) {
    clean.display_name = input.display_name.trim();
    if (clean.display_name === "" || !oneLine(clean.display_name, MAX_DISPLAY_NAME))
      bad("display_name", `must be 1-${MAX_DISPLAY_NAME} characters on one line`);
  }
  for (const field of ["issuer", "metadata_url"] as const) {
    const value = input[field]?.trim();
    if (value === undefined) continue;
    clean[field] = field === "issuer" ? value.replace(/\/$/, "") : value;
    const problem = value === "" ? null : urlProblem(value, allowHttp);
    if (problem) bad(field, problem);
  }
  if (input.client_id !== undefined && !oneLine(input.client_id, MAX_CLIENT_ID))
    bad("client_id", `must be at most ${MAX_CLIENT_ID} characters on one line`);
  if (input.client_secret !== undefined && !/^[\x20-\x7e]{0,500}$/.test(input.client_secret))
    bad("client_secret", `must be at most ${MAX_CLIENT_SECRET} printable ASCII characters`);
  if (input.scopes !== undefined) {
    clean.scopes = input.scopes.trim().split(/\s+/).filter(Boolean).join(" ");
    if (
      clean.scopes.length > MAX_SCOPES ||
      !clean.scopes.split(" ").includes("openid") ||
      !/^[\x21-\x7e ]+$/.test(clean.scopes)
    )
      bad("scopes", `must be space-separated scopes including openid, at most ${MAX_SCOPES} characters`);
  }
  for (const field of ["user_claim", "group_claim"] as const) {
    const value = input[field]?.trim();
    if (value === undefined) continue;
    clean[field] = value;
    if (value !== "" && !CLAIM_PATTERN.test(value))
      bad(field, "must be a claim name of 1-100 printable characters");
  }
  for (const field of ["user_attribute", "group_attribute"] as const) {
    const value = input[field]?.trim();
    if (value === undefined) continue;
    clean[field] = value;
    if (!/^[\x21-\x7e]{0,200}$/.test(value))
      bad(field, `must be an attribute name of at most ${MAX_ATTRIBUTE} printable characters`);
  }
  for (const field of ["allowed_domains", "admin_domains"] as const) {
    const value = input[field];
    if (value === undefined) continue;
    clean[field] = domainEntries(value);
    if (clean[field].length > MAX_DOMAINS || clean[field].some((d) => !DOMAIN_PATTERN.test(d)))
      bad(field, `must be up to ${MAX_DOMAINS} domain names like example.com`);
  }
  if (input.metadata !== undefined && input.metadata.length > MAX_METADATA)
    bad("metadata", `must be at most ${MAX_METADATA / 1024} KiB`);
  if (input.group_mappings !== undefined) {
    const seen = new Set<string>();
    clean.group_mappings = input.group_mappings.map((m) => ({
      idp_group: m.idp_group.trim(),
      group: m.group.trim(),
    }));
    const wrong = clean.group_mappings.some(
      (m) =>
        m.idp_group === "" ||
        !oneLine(m.idp_group, MAX_IDP_GROUP) ||
        seen.size === seen.add(m.idp_group).size,
    );
    if (wrong || clean.group_mappings.length > MAX_MAPPINGS)
      bad(
        "group_mappings",
        `must be up to ${MAX_MAPPINGS} distinct IdP groups of 1-${MAX_IDP_GROUP} characters, each with a group`,
      );
  }
}

/** Reads metadata from the operator's URL: bounded wait and size; a field error otherwise. */
async function fetchMetadata(url: string, fetch: UrlFetch): Promise<string> {
  const fail = (why: string) => ValidationError.field("metadata_url", `could not be read: ${why}`);
  let response: Response;
  try {
    response = await fetch(url, { redirect: "error", signal: AbortSignal.timeout(IDP_TIMEOUT_MS) });
  } catch (error) {
    const e = error as Error & { code?: string };
    if (e.code === "WISP_REFUSED") throw fail(e.message);
    throw fail(e.name === "TimeoutError" ? "no answer in time" : "the address did not answer");
  }
  if (!response.ok) throw fail(`HTTP ${response.status}`);
  const text = await response.text();
  if (text.length > MAX_METADATA) throw fail(`larger than ${MAX_METADATA / 1024} KiB`);
  return text;
}

export class IdpService {
  /** Told after every change, so this process's caches (the console's login buttons) forget at once. */
  onChange: () => void = () => {};

  constructor(
    readonly repo: IdpRepo,
    readonly options: IdpServiceOptions,
  ) {}

  /** Where the IdP sends the browser back (OIDC redirect_uri, SAML AssertionConsumerService). */
  redirectUri(row: { id: number; kind: string }): string {
    return `${this.options.publicUrl}/portal/idp/${row.id}/${row.kind === "saml" ? "acs" : "callback"}`;
  }

  spEntityId(row: { id: number }): string {
    return `${this.options.publicUrl}/portal/idp/${row.id}/metadata`;
  }

  clientSecret(row: ProviderRow): string {
    return row.client_secret
      ? this.options.box.open(row.client_secret, sealContext(row.account_id, row.id))
      : "";
  }

  async present(row: ProviderRow): Promise<IdentityProvider> {
    const mappings = await this.repo.mappings(row.account_id, row.id);
    return {
      id: row.id,
      name: row.name,
      display_name: row.display_name,
      kind: row.kind as IdpKind,
      enabled: row.enabled === 1,
      issuer: row.issuer,
      client_id: row.client_id,
      client_secret_set: row.client_secret !== "",
      scopes: row.scopes,
      user_claim: row.user_claim,
      group_claim: row.group_claim,
      allowed_domains: entries(row.allowed_domains),
      metadata_url: row.metadata_url,
      idp_entity_id: row.idp_entity_id,
      sso_url: row.sso_url,
      user_attribute: row.user_attribute,
      group_attribute: row.group_attribute,
      console_login: row.console_login === 1,
      admin_domains: entries(row.admin_domains),
      redirect_uri: this.redirectUri(row),
      sp_entity_id: this.spEntityId(row),
      sp_metadata_url: this.spEntityId(row),
      group_mappings: mappings.map((m) => ({ idp_group: m.idp_group, group: m.group_name })),
      created: row.created,
      updated: row.updated,
    };
  }

  async list(accountId: number): Promise<IdentityProvider[]> {
    return Promise.all((await this.repo.list(accountId)).map((row) => this.present(row)));
  }

  async page(accountId: number, request: PageRequest): Promise<Page<IdentityProvider>> {
    const { rows, total } = await this.repo.page(accountId, offsetOf(request), request.limit);
    const data = await Promise.all(rows.map((row) => this.present(row)));
    return { data, page: request.page, total, limit: request.limit };
  }

  async row(accountId: number, id: number): Promise<ProviderRow> {
    const row = Number.isInteger(id) ? await this.repo.findById(accountId, id) : undefined;
    if (!row) throw new NotFoundError(`identity provider ${id} not found`);
    return row;
  }

  async get(accountId: number, id: number): Promise<IdentityProvider> {
    return this.present(await this.row(accountId, id));
  }

  /** A provider by id, or by its name when the text is not a number (the CLI's argument). */
  async find(accountId: number, idOrName: string): Promise<IdentityProvider> {
    if (/^\d{1,9}$/.test(idOrName)) return this.get(accountId, Number(idOrName));
    const row = await this.repo.findByName(accountId, idOrName);
    if (!row) throw new NotFoundError(`identity provider ${idOrName} not found`);
    return this.present(row);
  }

  private check(input: ProviderInput): ProviderInput {
    const problems: FieldProblem[] = [];
    const clean = { ...input };
    checkFields(input, clean, this.options.allowHttp, problems);
    const first = problems[0];
    if (first) throw new ValidationError(`${first.field} ${first.message}`, problems);
    return clean;
  }

  /** The SAML columns from the metadata given (uploaded, or read from metadata_url). */
  private async samlColumns(clean: ProviderInput): Promise<ProviderChanges> {
    let xml = clean.metadata;
    if (xml === undefined && clean.metadata_url)
      xml = await fetchMetadata(clean.metadata_url, this.options.fetch ?? globalThis.fetch);
    if (xml === undefined)
      return clean.metadata_url !== undefined ? { metadata_url: clean.metadata_url } : {};
    // metadata.ts brings @xmldom/xmldom: loaded with the first SAML provider saved, not at start.
    const { parseIdpMetadata } = await import("./metadata.ts");
    const parsed = parseIdpMetadata(xml);
    if (typeof parsed === "string") throw ValidationError.field("metadata", parsed);
    const badSso = urlProblem(parsed.ssoUrl, this.options.allowHttp);
    if (badSso) throw ValidationError.field("metadata", `has a SingleSignOnService Location that ${badSso}`);
    return {
      ...(clean.metadata_url !== undefined ? { metadata_url: clean.metadata_url } : {}),
      metadata: xml,
      idp_entity_id: parsed.entityId,
      sso_url: parsed.ssoUrl,
      idp_certs: parsed.certs.join(","),
    };
  }

  private columns(clean: ProviderInput): ProviderChanges {
    const changes: ProviderChanges = {};
    const flag = (v: boolean | undefined) => (v === undefined ? undefined : v ? 1 : 0);
    if (clean.display_name !== undefined) changes.display_name = clean.display_name;
    if (clean.enabled !== undefined) changes.enabled = flag(clean.enabled);
    if (clean.console_login !== undefined) changes.console_login = flag(clean.console_login);
    for (const field of [
      "issuer",
      "client_id",
      "scopes",
      "user_claim",
      "group_claim",
      "user_attribute",
      "group_attribute",
    ] as const) {
      if (clean[field] !== undefined) changes[field] = clean[field];
    }
    if (clean.allowed_domains !== undefined) changes.allowed_domains = clean.allowed_domains.join(",");
    if (clean.admin_domains !== undefined) changes.admin_domains = clean.admin_domains.join(",");
    return changes;
  }

  /** What a provider of its kind needs once the change is applied. */
  private complete(row: ProviderRow): void {
    if (row.kind === "oidc") {
      if (!row.issuer) throw ValidationError.field("issuer", "is required for OpenID Connect");
      if (!row.client_id) throw ValidationError.field("client_id", "is required for OpenID Connect");
      if (!row.user_claim) throw ValidationError.field("user_claim", "is required for OpenID Connect");
    } else if (!row.sso_url) {
      throw ValidationError.field("metadata", "or metadata_url is required for SAML");
    }
  }

  /**
   * With password login to the console off, the account's last enabled provider with console
   * login must stay so: otherwise nobody could log in to the console any more.
   */
  private async keepConsoleDoor(repo: IdpRepo, accountId: number, leaving: ProviderRow): Promise<void> {
    if (await repo.passwordLogin(accountId)) return;
    const others = (await repo.list(accountId)).filter(
      (r) => r.id !== leaving.id && r.enabled === 1 && r.console_login === 1,
    );
    if (others.length === 0)
      throw new ConflictError(
        `${leaving.name} is this account's last way into the console (password login is off): ` +
          "turn password login back on first",
      );
  }

  private async writeMappings(accountId: number, providerId: number, mappings: GroupMapping[] | undefined) {
    if (mappings === undefined) return;
    const ids = await this.repo.groupIdsByName(accountId, [...new Set(mappings.map((m) => m.group))]);
    const missing = mappings.find((m) => !ids.has(m.group));
    if (missing)
      throw ValidationError.field("group_mappings", `${missing.group} is not a group of this account`);
    await this.repo.replaceMappings(
      accountId,
      providerId,
      mappings.map((m) => ({ idp_group: m.idp_group, group_id: ids.get(m.group) as number })),
    );
  }

  async create(accountId: number, input: ProviderInput): Promise<IdentityProvider> {
    if (input.name === undefined) throw ValidationError.field("name", "is required");
    if (input.kind === undefined) throw ValidationError.field("kind", "is required");
    const clean = this.check({ display_name: input.name, ...input });
    const saml = clean.kind === "saml" ? await this.samlColumns(clean) : {};
    const now = isoNow();
    try {
      const row = await this.repo.transaction(async (repo) => {
        let row = await repo.insert({
          account_id: accountId,
          name: clean.name as string,
          display_name: clean.display_name as string,
          kind: clean.kind as string,
          created: now,
          updated: now,
          ...this.columns(clean),
          ...saml,
        });
        if (clean.client_secret) {
          const client_secret = this.options.box.seal(clean.client_secret, sealContext(accountId, row.id));
          row = (await repo.update(accountId, row.id, { client_secret })) ?? row;
        }
        this.complete(row);
        await new IdpService(repo, this.options).writeMappings(accountId, row.id, clean.group_mappings);
        const after = { ...row, group_mappings: clean.group_mappings };
        await repo.audit({ accountId, resource: "identity_provider", id: row.id, action: "create", after });
        return row;
      });
      this.onChange();
      return this.present(row);
    } catch (error) {
      if (isUniqueViolation(error))
        throw new ConflictError(`an identity provider named ${input.name} already exists`);
      throw error;
    }
  }

  /** Partial update; name and kind are fixed (the name is in the users' names). */
  async update(accountId: number, id: number, input: ProviderInput): Promise<IdentityProvider> {
    const clean = this.check(input);
    const before = await this.row(accountId, id);
    if (clean.name !== undefined && clean.name !== before.name)
      throw ValidationError.field("name", "cannot change (it is the prefix of the provider's users' names)");
    if (clean.kind !== undefined && clean.kind !== before.kind)
      throw ValidationError.field("kind", "cannot change");
    const saml = before.kind === "saml" ? await this.samlColumns(clean) : {};
    const row = await this.repo.transaction(async (repo) => {
      const changes: ProviderChanges = { ...this.columns(clean), ...saml, updated: isoNow() };
      if (clean.client_secret !== undefined)
        changes.client_secret =
          clean.client_secret && this.options.box.seal(clean.client_secret, sealContext(accountId, id));
      const row = await repo.update(accountId, id, changes);
      if (!row) throw new NotFoundError(`identity provider ${id} not found`);
      this.complete(row);
      if (
        before.enabled === 1 &&
        before.console_login === 1 &&
        !(row.enabled === 1 && row.console_login === 1)
      )
        await this.keepConsoleDoor(repo, accountId, row);
      await new IdpService(repo, this.options).writeMappings(accountId, id, clean.group_mappings);
      const after = { ...row, group_mappings: clean.group_mappings };
      await repo.audit({ accountId, resource: "identity_provider", id, action: "update", before, after });
      return row;
    });
    this.onChange();
    return this.present(row);
  }

  /** Refused while a portal offers the provider (its idp method would be left without it). */
  async delete(accountId: number, id: number): Promise<IdentityProvider> {
    const row = await this.row(accountId, id);
    const shown = await this.present(row);
    const portals = await this.repo.portalsOffering(accountId, id);
    if (portals.length > 0)
      throw new ConflictError(
        `${row.name} is offered by the captive portal${portals.length === 1 ? "" : "s"} ` +
          `${portals.map((p) => `${p.id} "${p.name}"`).join(", ")}: take it off ${portals.length === 1 ? "it" : "them"} first`,
      );
    await this.repo.transaction(async (repo) => {
      if (row.enabled === 1 && row.console_login === 1) await this.keepConsoleDoor(repo, accountId, row);
      if (!(await repo.delete(accountId, id))) throw new NotFoundError(`identity provider ${id} not found`);
      await repo.audit({ accountId, resource: "identity_provider", id, action: "delete", before: row });
    });
    this.onChange();
    return shown;
  }
}
