// A sign-in through an identity provider, in three steps, each a request of the browser:
//   start    a flow row (state, nonce, PKCE verifier or SAML request id, the gateway's parameters,
//            a hash of a cookie the door sets), and the IdP's address to send the browser to;
//   complete the IdP's answer (OIDC redirect with a code, SAML POST) checked against the flow,
//            which is taken once; a new flow row holds the verified identity under a finish token;
//   finish   the browser comes back with that token and its cookie (a SAML POST from the IdP's site
//            carries no SameSite=Lax cookie, a redirect to our own page does), the flow is taken
//            once, and the portal issues the one-time credential or the console a session.
// Every refusal is an IdpRefusal naming its reason; nothing is written for a refused sign-in.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { AaaService } from "../aaa/service.ts";
import type { GuestPortal } from "../portals/service.ts";
import { EMAIL_PATTERN } from "../users/rules.ts";
import type { UsersService } from "../users/service.ts";
import type { OidcClient } from "./oidc.ts";
import type { FlowRow, IdpRepo, ProviderRow } from "./repo.ts";
import { emailDomain, FLOW_SECONDS, IdpRefusal, idpUsername, type VerifiedIdentity } from "./rules.ts";
import type { SamlClient } from "./saml.ts";
import type { IdpService } from "./service.ts";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const token = () => randomBytes(32).toString("base64url");
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const PLAIN_EMAIL = new RegExp(EMAIL_PATTERN);
/** Text without control characters (C0, DEL), as user fields take it. */
const printable = (text: string) => [...text].filter((c) => c >= " " && c !== "\u007f").join("");
const nowSeconds = () => Math.floor(Date.now() / 1000);

export type FlowPurpose =
  | { kind: "portal"; portal: GuestPortal; gateway: string; lang: string }
  | { kind: "console" };

export interface Started {
  /** Where the browser goes: the IdP's login. */
  url: string;
  /** The value of the cookie binding this sign-in to the browser that started it. */
  browser: string;
}

export interface Completed {
  accountId: number;
  purpose: "portal" | "console";
  portalId: number | null;
  providerId: number;
  /** The token of the finish step (in the URL the browser is sent to). */
  finish: string;
}

export interface Finished {
  provider: ProviderRow;
  identity: VerifiedIdentity;
  flow: FlowRow;
}

export interface IdpSignInDeps {
  service: IdpService;
  repo: IdpRepo;
  oidc: OidcClient;
  saml: SamlClient;
  users: UsersService;
  aaa: AaaService;
}

function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

export class IdpSignIn {
  private readonly buttonCache = new Map<
    number,
    { key: string; buttons: { id: number; name: string }[]; until: number }
  >();

  constructor(private readonly deps: IdpSignInDeps) {}

  /** An enabled provider by the id in an address; undefined otherwise. */
  async provider(id: number): Promise<ProviderRow | undefined> {
    if (!Number.isInteger(id) || id < 1 || id > 2_147_483_647) return undefined;
    const row = await this.deps.repo.findForSignIn(id);
    return row?.enabled === 1 ? row : undefined;
  }

  /**
   * The portal's buttons: its enabled providers of its account, by display name. Read at most every
   * few seconds per portal (the sign-in page is what every guest asks for first).
   */
  async buttons(portal: GuestPortal, now = Date.now()): Promise<{ id: number; name: string }[]> {
    const key = portal.identityProviders.join(",");
    const cached = this.buttonCache.get(portal.id);
    if (cached && cached.key === key && cached.until > now) return cached.buttons;
    const rows = await this.deps.repo.list(portal.accountId);
    const buttons = portal.identityProviders.flatMap((id) => {
      const row = rows.find((r) => r.id === id && r.enabled === 1);
      return row ? [{ id: row.id, name: row.display_name }] : [];
    });
    if (this.buttonCache.size > 10_000) this.buttonCache.clear();
    this.buttonCache.set(portal.id, { key, buttons, until: now + 3_000 });
    return buttons;
  }

  samlSite(row: ProviderRow) {
    return { entityId: this.deps.service.spEntityId(row), acsUrl: this.deps.service.redirectUri(row) };
  }

  /** SAML: Wisp's SP metadata for the provider. */
  spMetadata(row: ProviderRow): Promise<string> {
    return this.deps.saml.metadata(row, this.samlSite(row));
  }

  async start(row: ProviderRow, purpose: FlowPurpose, now = nowSeconds()): Promise<Started> {
    if (row.enabled !== 1) throw new IdpRefusal("provider_off", `provider ${row.id} is disabled`);
    const browser = token();
    const state = token();
    const base = {
      account_id: row.account_id,
      provider_id: row.id,
      purpose: purpose.kind,
      portal_id: purpose.kind === "portal" ? purpose.portal.id : null,
      state_hash: sha256(state),
      finish_hash: null,
      browser_hash: sha256(browser),
      gateway: purpose.kind === "portal" ? purpose.gateway : "",
      lang: purpose.kind === "portal" ? purpose.lang : "en",
      status: "started",
      identity: null,
      created: now,
      expires: now + FLOW_SECONDS,
    };
    if (row.kind === "saml") {
      // RelayState carries the state (saml-bindings 3.4.3: at most 80 bytes; 43 here).
      const { url, requestId } = await this.deps.saml.start(row, this.samlSite(row), state);
      await this.deps.repo.addFlow({ ...base, request_id: requestId }, now);
      return { url, browser };
    }
    const secret = this.deps.service.clientSecret(row);
    const oidc = await this.deps.oidc.start(row, secret, this.deps.service.redirectUri(row));
    // openid-client makes its own state: that one is the flow's key.
    await this.deps.repo.addFlow(
      { ...base, state_hash: sha256(oidc.state), nonce: oidc.nonce, code_verifier: oidc.codeVerifier },
      now,
    );
    return { url: oidc.url, browser };
  }

  /** The started flow a state names, taken once; a refusal when there is none (forged, replayed, late). */
  private async take(row: ProviderRow, state: string, now: number): Promise<FlowRow> {
    if (!TOKEN.test(state)) throw new IdpRefusal("unknown_state", "the state is missing or malformed");
    const flow = await this.deps.repo.takeStartedFlow(row.account_id, row.id, sha256(state), now);
    if (!flow)
      throw new IdpRefusal(
        "unknown_state",
        "no sign-in in progress has this state (forged, used or expired)",
      );
    return flow;
  }

  /** OIDC: the IdP's redirect to the callback (`callback` as the browser asked it). */
  async completeOidc(row: ProviderRow, callback: URL, now = nowSeconds()): Promise<Completed> {
    const state = callback.searchParams.get("state") ?? "";
    const flow = await this.take(row, state, now);
    const idpError = callback.searchParams.get("error");
    if (idpError) throw new IdpRefusal("idp_error", `the IdP answered ${idpError.slice(0, 100)}`);
    const identity = await this.deps.oidc.finish(row, this.deps.service.clientSecret(row), callback, {
      state,
      nonce: flow.nonce,
      codeVerifier: flow.code_verifier,
    });
    return this.verified(row, flow, identity, now);
  }

  /** SAML: the IdP's POST to the assertion consumer service. */
  async completeSaml(row: ProviderRow, samlResponse: string, relayState: string, now = nowSeconds()) {
    const flow = await this.take(row, relayState, now);
    const result = await this.deps.saml.finish(row, this.samlSite(row), samlResponse, {
      id: flow.request_id,
      at: flow.created * 1000,
    });
    // Remembered until the assertion could no longer be accepted anyway (at least the flow's time).
    const until = Math.max(result.until ?? 0, now + FLOW_SECONDS) + 300;
    if (!(await this.deps.repo.useAssertion(row.account_id, row.id, result.assertionId, until, now)))
      throw new IdpRefusal(
        "assertion_replayed",
        `assertion ${result.assertionId.slice(0, 100)} was used before`,
      );
    return this.verified(row, flow, result.identity, now);
  }

  private async verified(
    row: ProviderRow,
    flow: FlowRow,
    identity: VerifiedIdentity,
    now: number,
  ): Promise<Completed> {
    checkDomain(row, identity);
    const finish = token();
    await this.deps.repo.addVerifiedFlow({
      account_id: flow.account_id,
      provider_id: flow.provider_id,
      purpose: flow.purpose,
      portal_id: flow.portal_id,
      state_hash: sha256(token()),
      finish_hash: sha256(finish),
      browser_hash: flow.browser_hash,
      gateway: flow.gateway,
      lang: flow.lang,
      status: "verified",
      identity: JSON.stringify(identity),
      created: now,
      expires: now + FLOW_SECONDS,
    });
    return {
      accountId: flow.account_id,
      purpose: flow.purpose as "portal" | "console",
      portalId: flow.portal_id,
      providerId: row.id,
      finish,
    };
  }

  /**
   * The verified sign-in a finish token names, taken once, for the browser that started it (its
   * cookie); the provider must still be enabled.
   */
  async finish(accountId: number, finish: string, browser: string, now = nowSeconds()): Promise<Finished> {
    if (!TOKEN.test(finish)) throw new IdpRefusal("unknown_state", "the finish token is malformed");
    const flow = await this.deps.repo.takeVerifiedFlow(accountId, sha256(finish), now);
    if (!flow) throw new IdpRefusal("unknown_state", "no verified sign-in has this token (used or expired)");
    if (!TOKEN.test(browser) || !sameHash(sha256(browser), flow.browser_hash))
      throw new IdpRefusal("browser_mismatch", "the sign-in was started in another browser");
    const provider = await this.provider(flow.provider_id);
    if (!provider || provider.account_id !== accountId)
      throw new IdpRefusal("provider_off", `provider ${flow.provider_id} was disabled during the sign-in`);
    return { provider, flow, identity: JSON.parse(flow.identity ?? "{}") as VerifiedIdentity };
  }

  /**
   * The portal's one-time credential for a verified guest: the user `<provider>:<subject>`, created
   * or updated, in the groups mapped from the IdP's groups, with a new password and the portal's
   * registration validity; checked with the RADIUS rules.
   */
  async portalCredential(
    portal: GuestPortal,
    done: Finished,
    clientMac: string | null,
    now = nowSeconds(),
  ): Promise<{ username: string; password: string }> {
    const { provider, identity } = done;
    if (!portal.methods.includes("idp") || !portal.identityProviders.includes(provider.id))
      throw new IdpRefusal("provider_off", `portal ${portal.id} no longer offers provider ${provider.id}`);
    const mappings = await this.deps.repo.mappings(provider.account_id, provider.id);
    const username = idpUsername(provider.name, identity.subject);
    const password = randomBytes(18).toString("base64url");
    const result = await this.deps.users.signInFromProvider(portal.accountId, {
      username,
      email:
        identity.emailVerified && identity.email.length <= 254 && PLAIN_EMAIL.test(identity.email)
          ? identity.email
          : "",
      fullname: printable(identity.name).slice(0, 255),
      password,
      expiration: now + portal.registration.validity,
      managedGroups: [...new Set(mappings.map((m) => m.group_name))],
      groups: [
        ...new Set(mappings.filter((m) => identity.groups.includes(m.idp_group)).map((m) => m.group_name)),
      ],
      origin: { method: "idp", portalId: portal.id, providerId: provider.id, clientMac },
    });
    if (result.disabled) throw new IdpRefusal("user_refused", `user ${username} is disabled`);
    const verdict = await this.deps.aaa.precheck(portal.accountId, { username, password, clientMac }, now);
    if (!verdict.accepted)
      throw new IdpRefusal("user_refused", `user ${username}: ${verdict.reason ?? "refused"}`);
    return { username, password };
  }
}

/** The provider's allowed email domains, when it has any: a verified address in one of them. */
function checkDomain(row: ProviderRow, identity: VerifiedIdentity): void {
  const allowed = row.allowed_domains === "" ? [] : row.allowed_domains.split(",");
  if (allowed.length === 0) return;
  if (!identity.email || !identity.emailVerified)
    throw new IdpRefusal("email_not_verified", "the IdP vouched for no verified email address");
  if (!allowed.includes(emailDomain(identity.email)))
    throw new IdpRefusal(
      "domain_not_allowed",
      `the email domain ${emailDomain(identity.email)} is not allowed`,
    );
}
