// A SAML 2.0 IdP played by the tests: it reads the SP's AuthnRequest from the HTTP-Redirect binding
// (saml-bindings-2.0-os 3.4: SAMLRequest deflated and base64, RelayState), and answers with a
// Response whose Assertion is signed with its own RSA key by xml-crypto (enveloped signature,
// exclusive C14N, RSA-SHA256 unless a test asks for SHA-1), posted back by the HTTP-POST binding
// (3.5: an auto-submitted form). Its metadata lists that key's certificate. Tests build bad
// responses (unsigned, wrapped, for another SP, expired, another issuer) with the same builder.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { inflateRawSync } from "node:zlib";
import { SignedXml } from "xml-crypto";

export interface AuthnRequest {
  id: string;
  acs: string;
  issuer: string;
  relayState: string;
}

export interface ResponseOptions {
  request: AuthnRequest;
  nameId: string;
  attributes?: Record<string, string[]>;
  /** Defaults: the request's issuer (audience), the request's ACS, this IdP's entity id. */
  audience?: string;
  issuer?: string;
  /** Seconds from now: NotBefore (default -60) and NotOnOrAfter (default 300). */
  notBefore?: number;
  notOnOrAfter?: number;
  sign?: "assertion" | "none";
  algorithm?: "sha256" | "sha1";
  /** Another key than the one in the metadata. */
  otherKey?: boolean;
}

export interface TestSamlIdp {
  url: string;
  entityId: string;
  metadata: string;
  /** The AuthnRequests received, newest last. */
  requests: AuthnRequest[];
  /** Reads an AuthnRequest out of the redirect URL Wisp sent the browser to. */
  parseRedirect(url: string): AuthnRequest;
  /** A base64 Response as the HTTP-POST binding carries it. */
  response(options: ResponseOptions): string;
  /** The login name the browser's form will sign in as, and its attributes. */
  accounts: Map<string, Record<string, string[]>>;
  close(): Promise<void>;
}

const SIGNATURES = {
  sha256: ["http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", "http://www.w3.org/2001/04/xmlenc#sha256"],
  sha1: ["http://www.w3.org/2000/09/xmldsig#rsa-sha1", "http://www.w3.org/2000/09/xmldsig#sha1"],
} as const;

function keyPair(name: string): { key: string; cert: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wisp-saml-idp-"));
  const keyFile = path.join(dir, "key.pem");
  const certFile = path.join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-sha256",
      "-days",
      "2",
      "-subj",
      `/CN=${name}`,
      "-keyout",
      keyFile,
      "-out",
      certFile,
    ],
    { stdio: "ignore" },
  );
  const pair = { key: fs.readFileSync(keyFile, "utf8"), cert: fs.readFileSync(certFile, "utf8") };
  fs.rmSync(dir, { recursive: true, force: true });
  return pair;
}

const base64Cert = (pem: string) => pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
const iso = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
const escapeXml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export async function startSamlIdp(host = "127.0.0.1"): Promise<TestSamlIdp> {
  const signing = keyPair("wisp-test-idp");
  const other = keyPair("someone-else");
  const accounts = new Map<string, Record<string, string[]>>();
  const requests: AuthnRequest[] = [];
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;
  const entityId = `${url}/idp`;

  function parseRedirect(address: string): AuthnRequest {
    const query = new URL(address).searchParams;
    const xml = inflateRawSync(Buffer.from(query.get("SAMLRequest") ?? "", "base64")).toString("utf8");
    const request = {
      id: /\sID="([^"]+)"/.exec(xml)?.[1] ?? "",
      acs: /AssertionConsumerServiceURL="([^"]+)"/.exec(xml)?.[1] ?? "",
      issuer: /<(?:\w+:)?Issuer[^>]*>([^<]+)</.exec(xml)?.[1] ?? "",
      relayState: query.get("RelayState") ?? "",
    };
    requests.push(request);
    return request;
  }

  function response(o: ResponseOptions): string {
    const id = `_a${randomBytes(16).toString("hex")}`;
    const issuer = o.issuer ?? entityId;
    const attributes = Object.entries(o.attributes ?? {})
      .map(
        ([name, values]) =>
          `<saml:Attribute Name="${escapeXml(name)}">${values.map((v) => `<saml:AttributeValue>${escapeXml(v)}</saml:AttributeValue>`).join("")}</saml:Attribute>`,
      )
      .join("");
    const until = iso(o.notOnOrAfter ?? 300);
    const assertion =
      `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${id}" Version="2.0" IssueInstant="${iso(0)}">` +
      `<saml:Issuer>${escapeXml(issuer)}</saml:Issuer>` +
      `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">${escapeXml(o.nameId)}</saml:NameID>` +
      `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData InResponseTo="${o.request.id}" NotOnOrAfter="${until}" Recipient="${escapeXml(o.request.acs)}"/></saml:SubjectConfirmation></saml:Subject>` +
      `<saml:Conditions NotBefore="${iso(o.notBefore ?? -60)}" NotOnOrAfter="${until}"><saml:AudienceRestriction><saml:Audience>${escapeXml(o.audience ?? o.request.issuer)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
      `<saml:AuthnStatement AuthnInstant="${iso(0)}" SessionIndex="${id}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
      `${attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : ""}</saml:Assertion>`;
    const signed =
      (o.sign ?? "assertion") === "assertion"
        ? sign(assertion, o.algorithm ?? "sha256", o.otherKey ? other : signing)
        : assertion;
    const xml =
      `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r${randomBytes(16).toString("hex")}" Version="2.0" IssueInstant="${iso(0)}" Destination="${escapeXml(o.request.acs)}" InResponseTo="${o.request.id}">` +
      `<saml:Issuer>${escapeXml(issuer)}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>${signed}</samlp:Response>`;
    return Buffer.from(xml).toString("base64");
  }

  function sign(
    assertion: string,
    algorithm: "sha256" | "sha1",
    pair: { key: string; cert: string },
  ): string {
    const [signature, digest] = SIGNATURES[algorithm];
    const sig = new SignedXml({
      privateKey: pair.key,
      publicCert: pair.cert,
      signatureAlgorithm: signature,
      canonicalizationAlgorithm: "http://www.w3.org/2001/10/xml-exc-c14n#",
    });
    sig.addReference({
      xpath: "/*[local-name(.)='Assertion']",
      digestAlgorithm: digest,
      transforms: [
        "http://www.w3.org/2000/09/xmldsig#enveloped-signature",
        "http://www.w3.org/2001/10/xml-exc-c14n#",
      ],
    });
    sig.computeSignature(assertion, {
      location: { reference: "/*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: "after" },
    });
    return sig.getSignedXml();
  }

  const metadata =
    `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${entityId}">` +
    `<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" WantAuthnRequestsSigned="false">` +
    `<md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>${base64Cert(signing.cert)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>` +
    `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${url}/sso"/>` +
    `</md:IDPSSODescriptor></md:EntityDescriptor>`;

  // The browser's pages: the login form for a request, and the auto-submitted Response.
  server.on("request", (request, reply) => {
    const address = new URL(request.url ?? "/", url);
    if (address.pathname === "/metadata") {
      reply.writeHead(200, { "content-type": "application/samlmetadata+xml" }).end(metadata);
      return;
    }
    if (address.pathname === "/sso" && request.method === "GET") {
      const authn = parseRedirect(address.href);
      const state = Buffer.from(JSON.stringify(authn)).toString("base64url");
      reply
        .writeHead(200, { "content-type": "text/html" })
        .end(
          `<!doctype html><title>Test IdP</title><form method="post" action="/login"><input type="hidden" name="s" value="${state}">` +
            `<label>User <input id="user" name="user"></label><button id="signin" type="submit">Sign in</button></form>`,
        );
      return;
    }
    if (address.pathname === "/login" && request.method === "POST") {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        const form = new URLSearchParams(body);
        const authn = JSON.parse(Buffer.from(form.get("s") ?? "", "base64url").toString()) as AuthnRequest;
        const user = form.get("user") ?? "";
        const saml = response({ request: authn, nameId: user, attributes: accounts.get(user) ?? {} });
        reply
          .writeHead(200, { "content-type": "text/html" })
          .end(
            `<!doctype html><title>Test IdP</title><form id="post" method="post" action="${escapeXml(authn.acs)}">` +
              `<input type="hidden" name="SAMLResponse" value="${saml}"><input type="hidden" name="RelayState" value="${escapeXml(authn.relayState)}">` +
              `<button type="submit">Continue</button></form><script>document.getElementById("post").submit()</script>`,
          );
      });
      return;
    }
    reply.writeHead(404).end();
  });

  return {
    url,
    entityId,
    metadata,
    requests,
    parseRedirect,
    response,
    accounts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
