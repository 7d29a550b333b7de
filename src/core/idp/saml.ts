// SAML 2.0 service provider through @node-saml/node-saml: an SP-initiated AuthnRequest over the
// HTTP-Redirect binding (saml-bindings-2.0-os 3.4), and the Response over HTTP-POST (3.5) checked
// as saml-profiles-2.0-os 4.1.4.3 and 4.1.4.2 require: the assertion signed by a certificate of the
// IdP's metadata (an unsigned, or a wrapped one whose signature covers another element, is refused
// by node-saml's getVerifiedXml), InResponseTo our request (one request, one answer), the
// Audience our entity id, NotBefore/NotOnOrAfter within the allowed skew, Recipient our ACS. Wisp
// adds what node-saml leaves out: the assertion's Issuer is the metadata's entity id, its signature
// and digest are SHA-256 or stronger (not SHA-1), and each assertion ID is used once.
import { randomBytes } from "node:crypto";
import type { CacheProvider, Profile, SAML } from "@node-saml/node-saml";
import type { ProviderRow } from "./repo.ts";
import { CLOCK_SKEW_SECONDS, FLOW_SECONDS, IdpRefusal, type VerifiedIdentity } from "./rules.ts";

/** XML-DSig algorithms accepted (RFC 6931 2.3.2, 2.3.4; 2.1.3 and 2.1.5 digests). SHA-1 is not. */
const STRONG_SIGNATURES = new Set([
  "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
  "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384",
  "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
  "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
  "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384",
  "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512",
]);
const STRONG_DIGESTS = new Set([
  "http://www.w3.org/2001/04/xmlenc#sha256",
  "http://www.w3.org/2001/04/xmldsig-more#sha384",
  "http://www.w3.org/2001/04/xmlenc#sha512",
]);
const EMAIL_FORMAT = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";

export interface SamlSite {
  /** Wisp's entity id (the Audience it expects) and assertion consumer service. */
  entityId: string;
  acsUrl: string;
}

/**
 * A cache that knows only the one request this sign-in made (its InResponseTo must name it); the
 * value is when it was made (node-saml checks requestIdExpirationPeriodMs against it).
 */
function oneRequest(requestId: string, requestedAt: number): CacheProvider {
  return {
    saveAsync: async (_key, value) => ({ value, createdAt: Date.now() }),
    getAsync: async (key) =>
      key === requestId && requestId !== "" ? new Date(requestedAt).toISOString() : null,
    removeAsync: async () => null,
  };
}

/** node-saml, loaded when first needed (see saml-library.ts). */
const library = () => import("./saml-library.ts");

async function samlFor(
  row: ProviderRow,
  site: SamlSite,
  requestId: string,
  requestedAt = Date.now(),
): Promise<SAML> {
  const { SAML, ValidateInResponseTo, certPem } = await library();
  return new SAML({
    callbackUrl: site.acsUrl,
    entryPoint: row.sso_url,
    issuer: site.entityId,
    audience: site.entityId,
    idpCert: row.idp_certs.split(",").filter(Boolean).map(certPem),
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: FLOW_SECONDS * 1000,
    acceptedClockSkewMs: CLOCK_SKEW_SECONDS * 1000,
    cacheProvider: oneRequest(requestId, requestedAt),
    generateUniqueId: () => requestId,
    identifierFormat: null,
    disableRequestedAuthnContext: true,
  });
}

const text = (value: unknown): string =>
  typeof value === "string" ? value : Array.isArray(value) && typeof value[0] === "string" ? value[0] : "";
const texts = (value: unknown): string[] =>
  (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === "string").slice(0, 500);

/**
 * Every signature and digest algorithm named in the Response must be a strong one (the one
 * node-saml verified is among them); the verified assertion's ID and NotOnOrAfter for the replay check.
 */
function checkAssertion(profile: Profile, responseXml: string): { id: string; notOnOrAfter: number | null } {
  const named = (element: string) =>
    [
      ...responseXml.matchAll(
        new RegExp(`<(?:[\\w.-]+:)?${element}\\b[^>]*\\bAlgorithm=["']([^"']+)["']`, "g"),
      ),
    ].map((m) => m[1] ?? "");
  const algorithms = named("SignatureMethod");
  const digests = named("DigestMethod");
  if (algorithms.length === 0 || algorithms.some((a) => !STRONG_SIGNATURES.has(a)))
    throw new IdpRefusal("assertion_invalid", `signature algorithm not accepted: ${algorithms.join(", ")}`);
  if (digests.some((d) => !STRONG_DIGESTS.has(d)))
    throw new IdpRefusal("assertion_invalid", `digest algorithm not accepted: ${digests.join(", ")}`);
  const assertion = (
    profile.getAssertion?.() as {
      Assertion?: { $?: Record<string, string>; Conditions?: { $?: Record<string, string> }[] };
    }
  )?.Assertion;
  const id = assertion?.$?.ID ?? "";
  if (!id) throw new IdpRefusal("assertion_invalid", "the assertion has no ID");
  const until = assertion?.Conditions?.[0]?.$?.NotOnOrAfter;
  return { id, notOnOrAfter: until ? Math.floor(Date.parse(until) / 1000) : null };
}

export class SamlClient {
  /** The IdP's login address carrying a new AuthnRequest; its ID is kept for InResponseTo. */
  async start(
    row: ProviderRow,
    site: SamlSite,
    relayState: string,
  ): Promise<{ url: string; requestId: string }> {
    // An xs:ID must not start with a digit (XML Schema NCName).
    const requestId = `_${randomBytes(20).toString("hex")}`;
    const saml = await samlFor(row, site, requestId);
    const url = await saml.getAuthorizeUrlAsync(relayState, undefined, {});
    return { url, requestId };
  }

  /**
   * Validates the posted Response for the request this sign-in made; the identity, the assertion's
   * ID and until when it must be remembered (its NotOnOrAfter), or an IdpRefusal.
   */
  async finish(
    row: ProviderRow,
    site: SamlSite,
    samlResponse: string,
    request: { id: string; at: number },
  ): Promise<{ identity: VerifiedIdentity; assertionId: string; until: number | null }> {
    let profile: Profile | null;
    try {
      const saml = await samlFor(row, site, request.id, request.at);
      ({ profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse }));
    } catch (error) {
      const status = (error as { xmlStatus?: string }).xmlStatus;
      throw new IdpRefusal(status ? "idp_error" : "assertion_invalid", (error as Error).message);
    }
    if (!profile) throw new IdpRefusal("assertion_invalid", "no assertion in the response");
    if (profile.issuer !== row.idp_entity_id)
      throw new IdpRefusal(
        "assertion_invalid",
        `the assertion's issuer ${profile.issuer} is not ${row.idp_entity_id}`,
      );
    const { id, notOnOrAfter } = checkAssertion(
      profile,
      Buffer.from(samlResponse, "base64").toString("utf8"),
    );
    const attributes = (profile.attributes ?? {}) as Record<string, unknown>;
    const subject = row.user_attribute ? text(attributes[row.user_attribute]) : (profile.nameID ?? "");
    if (!subject) throw new IdpRefusal("no_subject", `no ${row.user_attribute || "NameID"} in the assertion`);
    const email = (
      text(profile.email) || (profile.nameIDFormat === EMAIL_FORMAT ? (profile.nameID ?? "") : "")
    ).toLowerCase();
    const name =
      text(attributes.displayName) ||
      text(attributes["urn:oid:2.16.840.1.113730.3.1.241"]) ||
      text(attributes.cn);
    return {
      // The IdP the operator chose asserts the address; SAML has no separate verified flag.
      identity: {
        subject,
        email,
        emailVerified: email !== "",
        name,
        groups: row.group_attribute ? texts(attributes[row.group_attribute]) : [],
      },
      assertionId: id,
      until: notOnOrAfter,
    };
  }

  /** Wisp's SP metadata for this provider (saml-metadata-2.0-os 2.4.4). */
  async metadata(row: ProviderRow, site: SamlSite): Promise<string> {
    return (await samlFor(row, site, "")).generateServiceProviderMetadata(null, null);
  }
}
