// The console's cookies, parsed and written by hand: two cookies with base64url values need no library.

export interface CookieOptions {
  /** Seconds; omitted: a browser-session cookie. 0 deletes it. */
  maxAge?: number;
  secure: boolean;
  sameSite: "Lax" | "Strict";
  path: string;
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 1) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    // The first of two same-named cookies wins (the most specific path, as browsers send them).
    if (!cookies.has(name)) {
      try {
        cookies.set(name, decodeURIComponent(value));
      } catch {
        // a malformed escape: not a cookie this server wrote
      }
    }
  }
  return cookies;
}

/** Always HttpOnly: no script of the console reads a cookie. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${options.path}`, "HttpOnly"];
  parts.push(`SameSite=${options.sameSite}`);
  if (options.maxAge !== undefined) parts.push(`Max-Age=${options.maxAge}`);
  if (options.secure) parts.push("Secure");
  return parts.join("; ");
}
