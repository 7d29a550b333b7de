// OpenID Connect relying party (OpenID Connect Core 1.0, authorization code flow, 3.1) through
// openid-client: discovery (OIDC Discovery 1.0 section 4; the issuer in the document must be the one
// configured), PKCE with S256 (RFC 7636), state and nonce; the ID token's signature against the
// IdP's JWKS, with RS256 (the registered id_token_signed_response_alg default, Core 1.0 section 2:
// an "alg: none" or HMAC token is refused), its iss, aud, azp, exp, iat and nonce (Core 3.1.3.7).
// The claims the provider names are read only from that validated token.

import type * as OpenId from "openid-client";
import type { UrlFetch } from "../webhooks/sender.ts";
import type { ProviderRow } from "./repo.ts";
import {
  CLOCK_SKEW_SECONDS,
  DISCOVERY_CACHE_MS,
  IDP_TIMEOUT_MS,
  IdpRefusal,
  type VerifiedIdentity,
} from "./rules.ts";

export interface OidcStart {
  url: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** openid-client (with oauth4webapi), loaded with the first OIDC sign-in rather than at start. */
const openid = () => import("openid-client");

interface Cached {
  config: Promise<OpenId.Configuration>;
  key: string;
  until: number;
}

/** An error of the IdP's making (unreachable, slow, refused) rather than a forged answer. */
function unreachable(error: unknown): boolean {
  const name = (error as Error)?.name;
  const code = (error as { code?: string })?.code;
  return (
    name === "TimeoutError" ||
    name === "AbortError" ||
    code === "OAUTH_TIMEOUT" ||
    (error instanceof TypeError && /fetch failed/.test(error.message))
  );
}

function claimText(value: unknown): string {
  return typeof value === "string" ? value : typeof value === "number" ? String(value) : "";
}

/** A group claim: a list of strings (Okta, Entra: "groups"), or one string. */
function claimList(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string").slice(0, 500);
  return typeof value === "string" && value !== "" ? [value] : [];
}

/** An error's words; a refusal by the address guard is kept (openid-client wraps it in its own). */
function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code === "WISP_REFUSED" ? String(cause.message) : (error as Error).message;
}

export class OidcClient {
  private readonly cache = new Map<number, Cached>();

  /** `fetch`: every request to the provider (discovery, JWKS, token) through the SSRF guard. */
  constructor(
    private readonly allowHttp: boolean,
    private readonly fetch: UrlFetch = globalThis.fetch,
  ) {}

  /** The provider's configuration from its discovery document, reused for DISCOVERY_CACHE_MS. */
  private configuration(row: ProviderRow, secret: string, now = Date.now()): Promise<OpenId.Configuration> {
    const key = `${row.updated}\n${row.issuer}\n${row.client_id}`;
    const cached = this.cache.get(row.id);
    if (cached && cached.key === key && cached.until > now) return cached.config;
    const config = openid()
      .then((client) =>
        client.discovery(
          new URL(row.issuer),
          row.client_id,
          { client_secret: secret || undefined, [client.clockTolerance]: CLOCK_SKEW_SECONDS },
          secret ? client.ClientSecretPost(secret) : client.None(),
          {
            timeout: Math.ceil(IDP_TIMEOUT_MS / 1000),
            [client.customFetch]: (url, options) => this.fetch(url, options as RequestInit),
            // The ID token's signature is checked against the IdP's JWKS even though it came straight
            // from the token endpoint (Core 3.1.3.7 point 6 lets TLS stand in; Wisp does not).
            execute: this.allowHttp
              ? [client.enableNonRepudiationChecks, client.allowInsecureRequests]
              : [client.enableNonRepudiationChecks],
          },
        ),
      )
      .catch((error) => {
        this.cache.delete(row.id);
        throw error;
      });
    this.cache.set(row.id, { config, key, until: now + DISCOVERY_CACHE_MS });
    return config;
  }

  /** The address of the IdP's login, with a fresh state, nonce and PKCE verifier to keep. */
  async start(row: ProviderRow, secret: string, redirectUri: string): Promise<OidcStart> {
    const client = await openid();
    let config: OpenId.Configuration;
    try {
      config = await this.configuration(row, secret);
    } catch (error) {
      throw new IdpRefusal("idp_unreachable", `discovery at ${row.issuer} failed: ${reasonOf(error)}`);
    }
    const state = client.randomState();
    const nonce = client.randomNonce();
    const codeVerifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: row.scopes,
      response_type: "code",
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
    });
    return { url: url.href, state, nonce, codeVerifier };
  }

  /**
   * Exchanges the code of the IdP's redirect (`callback`, the URL as the browser asked it) and
   * validates the ID token; the identity it vouches for, or an IdpRefusal naming why not.
   */
  async finish(
    row: ProviderRow,
    secret: string,
    callback: URL,
    expected: { state: string; nonce: string; codeVerifier: string },
  ): Promise<VerifiedIdentity> {
    const client = await openid();
    let claims: Record<string, unknown> | undefined;
    try {
      const config = await this.configuration(row, secret);
      const tokens = await client.authorizationCodeGrant(config, callback, {
        expectedState: expected.state,
        expectedNonce: expected.nonce,
        pkceCodeVerifier: expected.codeVerifier,
        idTokenExpected: true,
      });
      claims = tokens.claims() as Record<string, unknown> | undefined;
    } catch (error) {
      if (unreachable(error)) throw new IdpRefusal("idp_unreachable", (error as Error).message);
      const idpError = (error as { error?: string }).error;
      if (idpError)
        throw new IdpRefusal("idp_error", `the IdP answered ${idpError}: ${(error as Error).message}`);
      // oauth4webapi names the claim and what was expected in the cause: the log says which check failed.
      const cause = (error as { cause?: unknown }).cause;
      const which = cause && typeof cause === "object" ? ` ${JSON.stringify(cause).slice(0, 300)}` : "";
      throw new IdpRefusal("token_invalid", `${(error as Error).message}${which}`);
    }
    if (!claims) throw new IdpRefusal("token_invalid", "no ID token");
    const subject = claimText(claims[row.user_claim]);
    if (!subject) throw new IdpRefusal("no_subject", `the ID token has no ${row.user_claim} claim`);
    // Entra ID sends no email_verified; its xms_edov says the same of the domain's owner.
    const emailVerified = claims.email_verified === true || claims.xms_edov === true;
    return {
      subject,
      email: claimText(claims.email).toLowerCase(),
      emailVerified,
      name: claimText(claims.name) || claimText(claims.preferred_username),
      groups: row.group_claim ? claimList(claims[row.group_claim]) : [],
    };
  }
}
