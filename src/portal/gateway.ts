// The gateways' side of a captive portal: what each vendor's redirect brings in the query string
// (untrusted: every address, port, MAC, challenge and URL is checked here), and how the portal hands
// the checked credentials back to that gateway, which then asks Wisp's RADIUS server.
import crypto, { createHash, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import { normalizeMac } from "../core/aaa/stations.ts";
import type { GuestPortal } from "../core/portals/service.ts";
import { hasControlCharacters } from "../core/shared/text.ts";

const MAX_URL = 2000;

/** An absolute http(s) URL without credentials, or null (javascript:, data:, relative, ...). */
export function safeHttpUrl(value: string | undefined | null): string | null {
  if (!value || value.length > MAX_URL || /\s/.test(value) || hasControlCharacters(value)) return null;
  if (!/^https?:\/\/[^/?#]/i.test(value)) return null;
  try {
    const url = new URL(value);
    if ((url.protocol !== "http:" && url.protocol !== "https:") || url.username || url.password) return null;
    return url.href;
  } catch {
    return null;
  }
}

/**
 * A gateway's login address from the link: an http(s) URL whose host the portal allows
 * (core/portals/gateways.ts), or null. The host is read as the browser will (URL.hostname), so
 * the address checked is the address the credentials would go to.
 */
function gatewayUrl(portal: GuestPortal, value: string | null): string | null {
  const url = safeHttpUrl(value);
  return url && portal.allowedGateways.allows(new URL(url).hostname) ? url : null;
}

/** The query parameter carrying the gateway's address: its login URL, or CoovaChilli's uamip. */
function loginParam(portal: GuestPortal): string {
  if (portal.vendor === "coovachilli") return "uamip";
  return portal.vendor === "mikrotik" ? "link-login-only" : portal.generic.loginParam;
}

/**
 * The gateway host a link names when the portal does not allow it, else null: what the operator
 * needs to read in the log when every guest of a gateway is refused (a name such as hotspot.lan
 * not yet listed, or an address outside the default ranges).
 */
export function refusedGatewayHost(portal: GuestPortal, query: GatewayParams): string | null {
  const value = query.get(loginParam(portal));
  const url = portal.vendor === "coovachilli" ? null : safeHttpUrl(value);
  const address = portal.vendor === "coovachilli" && value && isIP(value) ? value : null;
  const host = url ? new URL(url).hostname : address;
  return host && !portal.allowedGateways.allows(host) ? host : null;
}

function port(value: string | null): number | null {
  if (!value || !/^\d{1,5}$/.test(value)) return null;
  const n = Number(value);
  return n >= 1 && n <= 65535 ? n : null;
}

/** Where the guest stands, as the gateway told it. */
export type Gateway =
  | {
      vendor: "coovachilli";
      /** coova-chilli src/redir.c, bstring_buildurl: res is notyet, success, failed, already, logoff... */
      res: string;
      uamip: string;
      uamport: number;
      /** 16 bytes, sent as 32 hex digits. */
      challenge: Buffer | null;
      clientMac: string | null;
      userurl: string | null;
    }
  | {
      vendor: "mikrotik";
      linkLoginOnly: string;
      linkOrig: string | null;
      chapId: Buffer | null;
      chapChallenge: Buffer | null;
      clientMac: string | null;
      /** The router's `error` after a failed login (not shown as such: its words are untrusted). */
      failed: boolean;
    }
  | {
      vendor: "generic";
      loginUrl: string;
      clientMac: string | null;
      original: string | null;
      /** The gateway's parameters the portal's extra fields copy ($name), as they came. */
      passed: Map<string, string>;
    };

/** A gateway parameter copied into the hand-off form: printable, short. */
const PASSED_VALUE = /^[\x20-\x7e]{0,256}$/;

/**
 * MikroTik's $(chap-id) and $(chap-challenge) are octal escapes, one per byte ("\371",
 * "\357\015\330..."), as listed with the servlet page variables in the HotSpot customisation manual
 * (help.mikrotik.com, "HotSpot customisation", login.html variables).
 */
export function octalBytes(value: string | null): Buffer | null {
  if (!value || !/^(\\[0-3][0-7]{2}){1,64}$/.test(value)) return null;
  return Buffer.from(
    value
      .split("\\")
      .slice(1)
      .map((o) => Number.parseInt(o, 8)),
  );
}

/** A gateway's query parameters by name (URLSearchParams, or fastify's parsed query): first value or null. */
export interface GatewayParams {
  get(name: string): string | null;
}

/**
 * The gateway parameters of a page or sign-in request for this portal's vendor; null when they do
 * not check out, or name a gateway the portal does not allow (the page and the sign-in then refuse).
 */
export function parseGateway(portal: GuestPortal, query: GatewayParams): Gateway | null {
  const get = (name: string) => query.get(name);
  switch (portal.vendor) {
    case "coovachilli": {
      // The UAM redirect (coova-chilli src/redir.c, bstring_buildurl): ?res=&uamip=&uamport=
      // &challenge=&called=&mac=&ip=&nasid=&userurl=&md=
      const uamip = get(loginParam(portal)) ?? "";
      const uamport = port(get("uamport"));
      const res = get("res") ?? "";
      const challengeHex = get("challenge");
      // The signature (&md=) covers uamip too; the allow-list holds as well, should the UAM secret
      // be known beyond the gateways.
      if (!isIP(uamip) || !portal.allowedGateways.allows(uamip)) return null;
      if (uamport === null || !/^[a-z]{1,16}$/.test(res)) return null;
      if (challengeHex !== null && !/^[0-9a-fA-F]{32}$/.test(challengeHex)) return null;
      return {
        vendor: "coovachilli",
        res,
        uamip,
        uamport,
        challenge: challengeHex ? Buffer.from(challengeHex, "hex") : null,
        clientMac: normalizeMac(get("mac") ?? undefined),
        userurl: safeHttpUrl(get("userurl")),
      };
    }
    case "mikrotik": {
      // login.html variables of the HotSpot servlet, passed on by the router's redirect page:
      // link-login-only, link-orig, chap-id, chap-challenge, mac, ip, error.
      // The challenge is used only with a login address the portal allows: otherwise whoever wrote
      // the link would choose both and get a CHAP hash to crack offline.
      const linkLoginOnly = gatewayUrl(portal, get(loginParam(portal)));
      if (!linkLoginOnly) return null;
      const chapId = octalBytes(get("chap-id"));
      const chapChallenge = octalBytes(get("chap-challenge"));
      if (
        Boolean(get("chap-id")) !== Boolean(chapId) ||
        Boolean(get("chap-challenge")) !== Boolean(chapChallenge)
      ) {
        return null;
      }
      if (chapId && chapId.length !== 1) return null;
      return {
        vendor: "mikrotik",
        linkLoginOnly,
        linkOrig: safeHttpUrl(get("link-orig")),
        chapId,
        chapChallenge,
        clientMac: normalizeMac(get("mac") ?? undefined),
        failed: Boolean(get("error")),
      };
    }
    default: {
      const loginUrl = gatewayUrl(portal, get(loginParam(portal)));
      if (!loginUrl) return null;
      // Client MAC and original URL under the names common controllers use (UniFi: id, url;
      // Cisco WLC: client_mac, redirect; pfSense: redirurl).
      const mac = get("client_mac") ?? get("mac") ?? get("id") ?? undefined;
      const original = get("redirurl") ?? get("redirect_url") ?? get("redirect") ?? get("url");
      const passed = new Map<string, string>();
      for (const field of portal.generic.extraFields) {
        const value = field.fromGateway ? get(field.value) : null;
        if (value === null) continue;
        if (!PASSED_VALUE.test(value)) return null;
        passed.set(field.value, value);
      }
      return {
        vendor: "generic",
        loginUrl,
        clientMac: normalizeMac(mac),
        original: safeHttpUrl(original),
        passed,
      };
    }
  }
}

/**
 * CoovaChilli signs its redirect when it has a UAM secret: `&md=` + upper-case hex of
 * MD5(the whole URL before "&md=" + uamsecret), appended last (coova-chilli src/redir.c,
 * redir_md_param, called from bstring_buildurl). `raw` is the query exactly as the browser sent it;
 * `pages` are the addresses the gateway may have been given as its uamserver (this portal's
 * login_url, and the address the request came in on). Without a secret there is nothing to check.
 */
export function coovaChecksumValid(raw: string, uamSecret: string, pages: string[]): boolean {
  if (!uamSecret) return true;
  const at = raw.lastIndexOf("&md=");
  if (at < 0) return false;
  const given = raw.slice(at + 4);
  if (!/^[0-9A-Fa-f]{32}$/.test(given)) return false;
  const expected = Buffer.from(given, "hex");
  const signed = raw.slice(0, at);
  return pages.some((page) => timingSafeEqual(md5Once(`${page}?${signed}${uamSecret}`), expected));
}

/** One-shot MD5: crypto.hash (Node 20.12+) is about twice as fast as createHash for one string. */
const md5Once: (text: string) => Buffer =
  typeof crypto.hash === "function" ? (text) => crypto.hash("md5", text, "buffer") : (text) => md5(text);

/** The origin the hand-off goes to (the page's CSP form-action must allow it). */
export function gatewayOrigin(gateway: Gateway): string {
  switch (gateway.vendor) {
    case "coovachilli":
      return new URL(coovaBase(gateway.uamip, gateway.uamport)).origin;
    case "mikrotik":
      return new URL(gateway.linkLoginOnly).origin;
    default:
      return new URL(gateway.loginUrl).origin;
  }
}

function coovaBase(uamip: string, uamport: number): string {
  return `http://${isIP(uamip) === 6 ? `[${uamip}]` : uamip}:${uamport}`;
}

const md5 = (...parts: (Buffer | string)[]) => {
  const hash = createHash("md5");
  for (const part of parts) hash.update(part);
  return hash.digest();
};

/**
 * CoovaChilli UAM, CHAP: the challenge is first hashed with the UAM secret, then the response is
 * MD5(ident 0 + password + that challenge), in hex. doc/hotspotlogin.cgi: `$newchal = md5($hexchal,
 * $uamsecret); $response = md5_hex("\0", $password, $newchal)`; src/redir.c checks it the same
 * way and sends CHAP-Password (ident 0) with CHAP-Challenge = md5(challenge + uamsecret).
 */
export function coovaChapResponse(password: string, challenge: Buffer, uamSecret: string): string {
  const newChallenge = uamSecret ? md5(challenge, uamSecret) : challenge;
  return md5(Buffer.from([0]), password, newChallenge).toString("hex");
}

/**
 * CoovaChilli UAM, PAP: hex of the password XOR md5(challenge + uamsecret), the 16-byte key
 * repeated (doc/hotspotlogin.cgi: `unpack "H*", substr($password ^ $newchal, 0, length)`;
 * src/redir.c XORs it back before sending User-Password).
 */
export function coovaPapPassword(password: string, challenge: Buffer, uamSecret: string): string {
  const key = uamSecret ? md5(challenge, uamSecret) : challenge;
  const bytes = Buffer.from(password, "utf8");
  return Buffer.from(bytes.map((b, i) => b ^ key[i % 16]!)).toString("hex");
}

/**
 * MikroTik HotSpot HTTP-CHAP: the password sent to the router is MD5(chap-id + password +
 * chap-challenge) in hex, as the default login.html's `hexMD5('$(chap-id)' + password +
 * '$(chap-challenge)')` computes it (RouterOS manual, HotSpot: "formed MD5-hashing the
 * concatenation of chap-id, the password of the user and chap-challenge").
 */
export function mikrotikChapPassword(password: string, chapId: Buffer, chapChallenge: Buffer): string {
  return md5(chapId, password, chapChallenge).toString("hex");
}

/**
 * How the browser is sent on: a link it follows (GET, by meta refresh or by hand), or a form it
 * posts to the gateway. Never a redirect of the sign-in POST: browsers hold a form's whole redirect
 * chain to the page's CSP form-action, and the chain ends at a success URL of any origin.
 */
export type Handoff =
  | { kind: "link"; url: string }
  | { kind: "form"; action: string; fields: [string, string][] };

/** The hand-off of checked credentials; `landing` is where the guest should end up (http/https). */
export function handoff(
  portal: GuestPortal,
  gateway: Gateway,
  username: string,
  password: string,
  landing: string | null,
): Handoff {
  switch (gateway.vendor) {
    case "coovachilli": {
      // src/redir.c answers GET /logon?username=&response=|password=&userurl= on uamip:uamport.
      const url = new URL("/logon", coovaBase(gateway.uamip, gateway.uamport));
      url.searchParams.set("username", username);
      if (gateway.challenge && portal.uamAuth === "pap") {
        url.searchParams.set("password", coovaPapPassword(password, gateway.challenge, portal.uamSecret));
      } else if (gateway.challenge) {
        url.searchParams.set("response", coovaChapResponse(password, gateway.challenge, portal.uamSecret));
      } else {
        url.searchParams.set("password", password);
      }
      if (landing) url.searchParams.set("userurl", landing);
      return { kind: "link", url: url.href };
    }
    case "mikrotik": {
      // login.html's "sendin" form: username, password (CHAP-hashed when the router sent a
      // challenge, else plain for PAP), dst (opened after a successful login), popup.
      const encoded =
        gateway.chapId && gateway.chapChallenge
          ? mikrotikChapPassword(password, gateway.chapId, gateway.chapChallenge)
          : password;
      const fields: [string, string][] = [
        ["username", username],
        ["password", encoded],
        ["popup", "false"],
      ];
      const dst = landing ?? gateway.linkOrig;
      if (dst) fields.push(["dst", dst]);
      return { kind: "form", action: gateway.linkLoginOnly, fields };
    }
    default: {
      // An external-portal form POST of username and password to the controller's login URL, e.g.
      // pfSense/OPNsense-style auth_user/auth_pass/redirurl, Cisco WLC switch_url with
      // username/password/redirect_url; names are the portal's generic_* settings.
      const g = portal.generic;
      const fields: [string, string][] = [
        [g.usernameField, username],
        [g.passwordField, password],
      ];
      const dst = landing ?? gateway.original;
      if (g.redirectField && dst) fields.push([g.redirectField, dst]);
      // The portal's extra fields: fixed values, or the gateway's own parameter where it sent one.
      for (const field of g.extraFields) {
        const value = field.fromGateway ? gateway.passed.get(field.value) : field.value;
        if (value !== undefined) fields.push([field.name, value]);
      }
      return { kind: "form", action: gateway.loginUrl, fields };
    }
  }
}
