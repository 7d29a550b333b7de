// A real OpenID Provider for the tests: the oidc-provider package on 127.0.0.1 (a random port),
// with its development login and consent pages (any login name is an account; its claims are the
// test's). stepsToCallback drives those pages over HTTP like a browser would; chromium drives them
// by hand in the browser tests.
import http from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

export interface OpAccount {
  email?: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
}

export interface TestOp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The claims of each login name (unknown names get an example.org address). */
  accounts: Map<string, OpAccount>;
  close(): Promise<void>;
}

export async function startOp(redirectUris: string[], host = "127.0.0.1"): Promise<TestOp> {
  const accounts = new Map<string, OpAccount>();
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const issuer = `http://${host}:${(server.address() as AddressInfo).port}`;
  const clientId = "wisp-test";
  const clientSecret = "wisp-test-client-secret-0123456789abcdef";
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_post",
      },
    ],
    cookies: { keys: ["wisp-test-cookie-key-0123456789"] },
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name"],
      groups: ["groups"],
    },
    // The claims go in the ID token (Wisp reads only the ID token).
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx: unknown, id: string) {
      const account = accounts.get(id) ?? { email: `${id}@example.org`, email_verified: true, name: id };
      return {
        accountId: id,
        async claims() {
          return { sub: id, ...account };
        },
      };
    },
  });
  // Quiet: the library's warnings about development keys and interactions are expected here.
  provider.on("server_error", () => {});
  server.on("request", provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A cookie jar over fetch for one browser going through several origins, following no redirects. */
export class Jar {
  private readonly cookies = new Map<string, Map<string, string>>();

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const jar = this.cookies.get(target.host) ?? new Map<string, string>();
    this.cookies.set(target.host, jar);
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === "") jar.delete(name);
      else jar.set(name, value);
    }
    return response;
  }

  cookie(host: string, name: string): string | undefined {
    return this.cookies.get(host)?.get(name);
  }
}

/**
 * Follows the IdP's pages from its authorization URL, logging in as `login` and consenting, until
 * it redirects to a URL starting with `callbackPrefix`; returns that URL (not followed).
 */
export async function stepsToCallback(jar: Jar, authorizeUrl: string, login: string, callbackPrefix: string) {
  let url = authorizeUrl;
  for (let step = 0; step < 12; step++) {
    if (url.startsWith(callbackPrefix)) return url;
    const response = await jar.fetch(url);
    const location = response.headers.get("location");
    if (location) {
      url = new URL(location, url).href;
      continue;
    }
    const page = await response.text();
    const action = /<form[^>]*action="([^"]+)"[^>]*method="post"/.exec(page)?.[1];
    if (!action)
      throw new Error(`no form on the IdP's page ${url} (${response.status}): ${page.slice(0, 300)}`);
    const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1] ?? "";
    const body = new URLSearchParams({ prompt });
    if (prompt === "login") {
      body.set("login", login);
      body.set("password", "any");
    }
    const posted = await jar.fetch(new URL(action, url).href, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
    });
    const next = posted.headers.get("location");
    if (!next) throw new Error(`the IdP answered its form with ${posted.status}`);
    url = new URL(next, url).href;
  }
  throw new Error("the IdP never redirected back");
}
