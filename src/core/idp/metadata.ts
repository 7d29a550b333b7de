// A SAML IdP's metadata (SAML 2.0 Metadata, OASIS saml-metadata-2.0-os): its entityID, the
// SingleSignOnService the AuthnRequest goes to, and the certificates its responses are signed with.
// The document is the operator's upload or fetched from the operator's URL, and is still read as
// untrusted: no DTD, bounded size, only the elements named below.
import { DOMParser } from "@xmldom/xmldom";
import { MAX_METADATA } from "./rules.ts";

const MD = "urn:oasis:names:tc:SAML:2.0:metadata";
const DS = "http://www.w3.org/2000/09/xmldsig#";
/** saml-bindings-2.0-os 3.4 and 3.5. */
export const REDIRECT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";
export const POST_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST";

export interface IdpMetadata {
  entityId: string;
  ssoUrl: string;
  /** Base64 DER certificates (KeyDescriptor use="signing" or without a use). */
  certs: string[];
}

// xmldom's element type, as much as is read here.
interface El {
  getAttribute(name: string): string | null;
  getElementsByTagNameNS(ns: string, name: string): ArrayLike<El>;
  textContent: string | null;
  parentNode: El | null;
  localName: string | null;
  namespaceURI: string | null;
}

const list = (nodes: ArrayLike<El>): El[] => Array.from({ length: nodes.length }, (_, i) => nodes[i] as El);

/** The metadata's facts, or a sentence saying what is missing or wrong. */
export function parseIdpMetadata(xml: string): IdpMetadata | string {
  if (xml.length > MAX_METADATA) return `is larger than ${MAX_METADATA / 1024} KiB`;
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) return "must not contain a DOCTYPE or entity declarations";
  const errors: string[] = [];
  const doc = new DOMParser({
    errorHandler: (level: string, message: string) => {
      if (level !== "warning") errors.push(message);
    },
  }).parseFromString(xml, "text/xml") as unknown as { documentElement: El | null };
  const root = doc.documentElement;
  if (errors.length > 0 || !root) return "is not well-formed XML";
  const descriptors = list(root.getElementsByTagNameNS(MD, "IDPSSODescriptor"));
  const idp = descriptors[0];
  if (!idp || descriptors.length > 1) return "must describe exactly one IdP (one IDPSSODescriptor)";
  const entity = idp.parentNode;
  if (entity?.localName !== "EntityDescriptor" || entity.namespaceURI !== MD)
    return "has an IDPSSODescriptor outside an EntityDescriptor";
  const entityId = (entity.getAttribute("entityID") ?? "").trim();
  if (!entityId || entityId.length > 1024) return "has no entityID";
  const services = list(idp.getElementsByTagNameNS(MD, "SingleSignOnService"));
  const service =
    services.find((s) => s.getAttribute("Binding") === REDIRECT_BINDING) ??
    services.find((s) => s.getAttribute("Binding") === POST_BINDING);
  const ssoUrl = (service?.getAttribute("Location") ?? "").trim();
  if (!/^https?:\/\/[^/?#\s]+[^\s]*$/i.test(ssoUrl))
    return "has no SingleSignOnService with the HTTP-Redirect or HTTP-POST binding and an http(s) Location";
  const certs = list(idp.getElementsByTagNameNS(MD, "KeyDescriptor"))
    .filter((k) => (k.getAttribute("use") ?? "signing") === "signing")
    .flatMap((k) => list(k.getElementsByTagNameNS(DS, "X509Certificate")))
    .map((c) => (c.textContent ?? "").replace(/\s+/g, ""))
    .filter((c) => /^[A-Za-z0-9+/]+=*$/.test(c) && c.length >= 100);
  if (certs.length === 0) return "has no signing certificate (KeyDescriptor with an X509Certificate)";
  return { entityId, ssoUrl, certs: [...new Set(certs)] };
}

/** A base64 DER certificate as PEM (node-saml's idpCert). */
export function certPem(base64: string): string {
  const lines = base64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}
