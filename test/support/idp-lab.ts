// The identity-provider tests' set-up: a Wisp on a known loopback port (its PUBLIC_URL is where the
// IdPs send browsers back), a real OpenID Provider (oidc-provider) whose client knows Wisp's
// redirect URIs, the test's SAML IdP, a network and groups, and a guest's browser over HTTP.
import assert from "node:assert/strict";
import net from "node:net";
import type { ProviderInput } from "../../src/core/idp/service.ts";
import type { CaptivePortal, PortalInput } from "../../src/core/portals/service.ts";
import { MemoryCounterStore } from "../../src/http/rate-limit.ts";
import { Jar, startOp, type TestOp } from "./oidc-op.ts";
import { startSamlIdp, type TestSamlIdp } from "./saml-idp.ts";
import { startTestServer, type TestServer } from "./server.ts";

export const RADIUS_SECRET = "idp-radius-secret";

export async function freeTcpPort(host = "127.0.0.1"): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface IdpLab {
  server: TestServer;
  op: TestOp;
  saml: TestSamlIdp;
  accountId: number;
  networkId: number;
  groups: { staff: number; students: number };
  oidcProvider(input?: ProviderInput): Promise<{ id: number; name: string }>;
  samlProvider(input?: ProviderInput): Promise<{ id: number; name: string }>;
  portal(input: PortalInput): Promise<CaptivePortal>;
  stop(): Promise<void>;
}

export async function startIdpLab(env: Record<string, string> = {}): Promise<IdpLab> {
  const port = await freeTcpPort();
  const base = `http://127.0.0.1:${port}`;
  const server = await startTestServer({
    counters: new MemoryCounterStore(),
    portal: { attemptsPerAddress: 10_000, attemptsPerDevice: 1_000, windowMs: 60_000 },
    env: { PORT: String(port), PUBLIC_URL: base, IDP_ALLOW_HTTP: "1", ...env },
  });
  // A fresh database: providers get ids from 1; the OP's client knows the first 40 redirect URIs.
  const op = await startOp(Array.from({ length: 40 }, (_, i) => `${base}/portal/idp/${i + 1}/callback`));
  const saml = await startSamlIdp();
  const accountId = (await server.account("default")).id;
  const networkId = (
    await server.core.networks.create(accountId, {
      name: "campus",
      nas_ip: "127.0.0.1",
      secret: RADIUS_SECRET,
    })
  ).network.id;
  const staff = (await server.core.groups.create(accountId, { name: "staff" })).id;
  const students = (await server.core.groups.create(accountId, { name: "students" })).id;
  let count = 0;
  return {
    server,
    op,
    saml,
    accountId,
    networkId,
    groups: { staff, students },
    oidcProvider: (input = {}) =>
      server.core.idp.create(accountId, {
        name: `op${++count}`,
        kind: "oidc",
        display_name: "Campus ID",
        issuer: op.issuer,
        client_id: op.clientId,
        client_secret: op.clientSecret,
        scopes: "openid email profile groups",
        group_claim: "groups",
        ...input,
      }),
    samlProvider: (input = {}) =>
      server.core.idp.create(accountId, {
        name: `saml${++count}`,
        kind: "saml",
        display_name: "City SSO",
        metadata: saml.metadata,
        group_attribute: "groups",
        ...input,
      }),
    portal: (input) =>
      server.core.portals.create(accountId, {
        name: `idp portal ${++count}`,
        network_id: networkId,
        vendor: "mikrotik",
        methods: ["idp"],
        allowed_gateways: ["127.0.0.1", "10.0.0.0/8"],
        title: "Campus Wi-Fi",
        ...input,
      }),
    async stop() {
      await server.stop();
      await op.close();
      await saml.close();
    },
  };
}

/** A guest's browser over HTTP: the portal page, a provider's button, and the way back. */
export class GuestBrowser {
  readonly jar = new Jar();
  csrf = "";

  constructor(
    readonly lab: IdpLab,
    readonly portal: CaptivePortal,
    readonly mac = "AA:BB:CC:26:00:01",
  ) {}

  get gateway(): string {
    return new URLSearchParams({ "link-login-only": "http://10.5.50.1/login", mac: this.mac }).toString();
  }

  url(path: string): string {
    return `${this.lab.server.url}${path}`;
  }

  async open(): Promise<string> {
    const response = await this.jar.fetch(this.url(`/portal/${this.portal.id}?${this.gateway}`));
    const text = await response.text();
    this.csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? "";
    return text;
  }

  /** Presses the provider's button; the IdP's address the page sends the browser to, or the page. */
  async start(providerId: number): Promise<{ status: number; idpUrl: string | null; text: string }> {
    await this.open();
    const response = await this.jar.fetch(this.url(`/portal/${this.portal.id}/idp/${providerId}`), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: this.csrf, gw: this.gateway, lang: "en" }),
    });
    const text = await response.text();
    const link = /<a id="idp-link" href="([^"]+)"/.exec(text)?.[1]?.replace(/&amp;/g, "&") ?? null;
    return { status: response.status, idpUrl: link, text };
  }

  /** Follows a redirect of ours (callback, ACS answer) and the finish page; the last answer. */
  async follow(response: Response): Promise<{ status: number; text: string }> {
    let current = response;
    for (let i = 0; i < 3; i++) {
      const location = current.headers.get("location");
      if (!location) break;
      current = await this.jar.fetch(new URL(location, this.lab.server.url).href);
    }
    return { status: current.status, text: await current.text() };
  }
}

/** The hand-off form's fields (MikroTik: username and password posted to the router). */
export function handoffFields(text: string): Record<string, string> {
  assert.match(text, /<form id="handoff" method="post"/, text.slice(0, 600));
  const fields: Record<string, string> = {};
  for (const [, name, value] of text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[name ?? ""] = (value ?? "")
      .replace(/&amp;/g, "&")
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'");
  return fields;
}
