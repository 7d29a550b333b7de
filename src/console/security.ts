// What every console answer carries: security headers, and the cookies of the session and of the
// CSRF token used before login. When PUBLIC_URL is https the console is served over HTTPS only:
// cookies are always Secure and HSTS is sent, whatever the request looked like to this process
// (TLS usually ends at a proxy in front of it). Otherwise cookies are Secure when the request came
// over HTTPS (directly, or as X-Forwarded-Proto from a proxy in TRUSTED_PROXIES: fastify's
// request.protocol says which), and no HSTS is sent: it would lock browsers out of an http site.
import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type CookieOptions, parseCookies, serializeCookie } from "./cookies.ts";

declare module "fastify" {
  interface FastifyInstance {
    /** Set on the console's instance: PUBLIC_URL is https, so the console is HTTPS only. */
    consoleHttpsOnly?: boolean;
  }
}

export const SESSION_COOKIE = "wisp_session";
/** Before login (setup and login forms): a double-submit token, cookie and hidden field alike. */
export const CSRF_COOKIE = "wisp_csrf";
const COOKIE_PATH = "/console";
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy":
    "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "same-origin",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
};

/**
 * RFC 6797: a year, renewed by every answer. Not includeSubDomains: other hosts under Wisp's name
 * are not Wisp's to pin (an operator who wants it sets it at the proxy).
 */
export const HSTS = "max-age=31536000";

/** Whether PUBLIC_URL makes the console HTTPS only. */
export function httpsOnly(publicUrl: string | undefined): boolean {
  return publicUrl !== undefined && /^https:/i.test(publicUrl);
}

/** Marks the console's own instance (not the API's) as HTTPS only, or not. */
export function setHttpsOnly(app: FastifyInstance, value: boolean): void {
  app.decorate("consoleHttpsOnly", value);
}

/**
 * A preview the console frames itself: no scripts, no forms, framable by console pages only (the
 * iframe is sandboxed too).
 */
export const FRAMED_HEADERS: Record<string, string> = {
  ...SECURITY_HEADERS,
  "Content-Security-Policy":
    "default-src 'self'; script-src 'none'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'; object-src 'none'",
  "X-Frame-Options": "SAMEORIGIN",
};

/**
 * The one inline style swagger-ui's page uses: the <style> of its logo, an SVG drawn by
 * swagger-ui-bundle.js (".logo_small_svg__cls-2{fill:#fff}..."). Allowed by its hash alone; a new
 * swagger-ui that changes it shows up as a violation in test/console/docs-headers.test.ts.
 */
const SWAGGER_LOGO_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

/**
 * The API's browsable documentation (/docs: swagger-ui) and its OpenAPI document, served on the
 * console's origin: the console's headers, with what swagger-ui's page needs. Its scripts and
 * stylesheets are files under /docs/static (nothing inline but its logo's style), its stylesheet
 * draws icons as data: SVG images, and it fetches the document (and "Try it out" the API) from
 * this origin.
 */
export const DOCS_HEADERS: Record<string, string> = {
  ...SECURITY_HEADERS,
  "Content-Security-Policy":
    `default-src 'self'; style-src 'self' ${SWAGGER_LOGO_STYLE}; img-src 'self' data:; ` +
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
};

/** The console's headers; `framed` for a preview the console frames itself. */
export function setSecurityHeaders(request: FastifyRequest, reply: FastifyReply, framed = false): void {
  setHeaders(request, reply, framed ? FRAMED_HEADERS : SECURITY_HEADERS);
}

/** The headers of the API's documentation pages (on an instance marked with setHttpsOnly too). */
export function setDocsHeaders(request: FastifyRequest, reply: FastifyReply): void {
  setHeaders(request, reply, DOCS_HEADERS);
}

function setHeaders(request: FastifyRequest, reply: FastifyReply, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  if (request.server.consoleHttpsOnly === true) reply.header("Strict-Transport-Security", HSTS);
}

function cookieOptions(request: FastifyRequest, sameSite: CookieOptions["sameSite"]): CookieOptions {
  const secure = request.server.consoleHttpsOnly === true || request.protocol === "https";
  return { path: COOKIE_PATH, sameSite, secure };
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  return parseCookies(request.headers.cookie).get(name);
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.header("Set-Cookie", serializeCookie(SESSION_COOKIE, token, cookieOptions(request, "Lax")));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header(
    "Set-Cookie",
    serializeCookie(SESSION_COOKIE, "", { ...cookieOptions(request, "Lax"), maxAge: 0 }),
  );
}

/** Console single sign-on: binds a sign-in at the IdP to the browser that started it (core/idp). */
export const SSO_COOKIE = "wisp_sso";

/** Lax: the browser comes back from the IdP's site by a top-level navigation, which carries it. */
export function setSsoCookie(request: FastifyRequest, reply: FastifyReply, value: string): void {
  reply.header(
    "Set-Cookie",
    serializeCookie(SSO_COOKIE, value, { ...cookieOptions(request, "Lax"), maxAge: 600 }),
  );
}

export function clearSsoCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header(
    "Set-Cookie",
    serializeCookie(SSO_COOKIE, "", { ...cookieOptions(request, "Lax"), maxAge: 0 }),
  );
}

/** The pre-login CSRF token: the browser's existing one, or a new one set as a cookie now. */
export function preSessionToken(request: FastifyRequest, reply: FastifyReply): string {
  const existing = readCookie(request, CSRF_COOKIE);
  if (existing && TOKEN.test(existing)) return existing;
  const token = randomBytes(32).toString("base64url");
  reply.header("Set-Cookie", serializeCookie(CSRF_COOKIE, token, cookieOptions(request, "Strict")));
  return token;
}

/** A sign-in between its first factor and its session (core/admins/sign-in.ts): its token. */
export const SIGN_IN_COOKIE = "wisp_signin";

/** Lax, as the session's: the sign-in may come back from an identity provider's site. */
export function setSignInCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.header(
    "Set-Cookie",
    serializeCookie(SIGN_IN_COOKIE, token, { ...cookieOptions(request, "Lax"), maxAge: 600 }),
  );
}

export function clearSignInCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header(
    "Set-Cookie",
    serializeCookie(SIGN_IN_COOKIE, "", { ...cookieOptions(request, "Lax"), maxAge: 0 }),
  );
}
