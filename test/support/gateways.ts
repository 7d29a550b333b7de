// Test gateways written from each vendor's documented protocol, as small HTTP servers: GET /start
// plays the interception (a redirect of the guest's browser to the portal with that vendor's
// parameters); the login endpoint receives the portal's hand-off, sends a real Access-Request to
// Wisp's RADIUS port exactly as that gateway would (PAP, or CHAP from its challenge), and redirects
// on Accept. /welcome and /original stand for the success URL and the page first asked for.
//   CoovaChilli: coova-chilli src/redir.c (bstring_buildurl, the /logon handler) and
//     doc/hotspotlogin.cgi; CHAP-Challenge = md5(challenge + uamsecret), CHAP ident 0.
//   MikroTik HotSpot: login.html variables (link-login-only, link-orig, chap-id, chap-challenge as
//     octal escapes, mac) and HTTP-CHAP: password = md5(chap-id + password + chap-challenge).
//   MAC authentication before the portal (issue 24): CoovaChilli `macauth` (src/chilli.c: User-Name
//     the MAC as %.2X-%.2X-..., User-Password `macpasswd` or else the MAC itself, PAP); MikroTik
//     `login-by=mac` (User-Name AA:BB:CC:DD:EE:FF, User-Password `mac-auth-password`, empty by
//     default). On Access-Accept the guest goes straight on, without the portal.
//   generic: a form POST of username/password to the login URL (PAP), like pfSense's auth_user/
//     auth_pass or Cisco WLC's switch_url.
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { accessRequestPap, sendRadius } from "../../src/radius/client.ts";

export type Vendor = "coovachilli" | "mikrotik" | "generic";

export interface GatewayOptions {
  vendor: Vendor;
  /** Wisp's RADIUS authentication port and this gateway's shared secret (a network on 127.0.0.1). */
  radiusPort: number;
  secret: string;
  uamSecret?: string;
  /** MikroTik without a challenge: plain-password (PAP) logins. */
  noChallenge?: boolean;
  /** generic: field names and the login URL's query parameter. */
  generic?: { loginParam: string; usernameField: string; passwordField: string; redirectField?: string };
  clientMac?: string;
  /** Try MAC authentication first on /start (CoovaChilli macauth, MikroTik login-by=mac). */
  macAuth?: { password?: string };
}

export interface Handoff {
  path: string;
  params: Record<string, string>;
  radius: { type: string; message?: string | undefined; attributes: Record<string, unknown> };
}

export interface TestGateway {
  url: string;
  /** Where the browser starts: the gateway intercepts it and redirects to the portal. */
  startUrl(portalUrl: string, original?: string): string;
  handoffs: Handoff[];
  close(): Promise<void>;
}

const md5 = (...parts: (Buffer | string)[]) => {
  const h = createHash("md5");
  for (const p of parts) h.update(p);
  return h.digest();
};
/** coova-chilli src/redir.c redir_urlencode: A-Z a-z 0-9 - _ . ! ~ * kept, the rest %xx in lower case. */
const chilliEncode = (text: string) =>
  [...Buffer.from(text, "utf8")]
    .map((b) =>
      /[A-Za-z0-9_.!~*-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).padStart(2, "0")}`,
    )
    .join("");

/**
 * A CoovaChilli redirect as bstring_buildurl writes it: the portal's address, the parameters in its
 * order, and with a UAM secret `&md=` + MD5(everything before it + uamsecret) in upper-case hex.
 */
function chilliUrl(page: string, params: [string, string][], uamSecret: string): string {
  let url = `${page}${page.includes("?") ? "&" : "?"}${params.map(([k, v]) => `${k}=${chilliEncode(v)}`).join("&")}`;
  if (uamSecret) url += `&md=${md5(url, uamSecret).toString("hex").toUpperCase()}`;
  return url;
}

const octal = (bytes: Buffer) => [...bytes].map((b) => `\\${b.toString(8).padStart(3, "0")}`).join("");

function body(request: http.IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve) => {
    let text = "";
    request.on("data", (c) => (text += c));
    request.on("end", () => resolve(new URLSearchParams(text)));
  });
}

export async function startGateway(options: GatewayOptions): Promise<TestGateway> {
  const mac = options.clientMac ?? "AA-BB-CC-00-11-22";
  const handoffs: Handoff[] = [];
  /** The challenge of the current guest session (one browser per gateway in these tests). */
  let challenge = randomBytes(16);
  let chapId = randomBytes(1);
  let portalUrl = "";
  let original = "";
  let base = "";

  async function radius(username: string, attributes: [string, Buffer | string][], pap?: string) {
    const request = pap
      ? accessRequestPap(username, pap)
      : { code: 1, attributes: [["User-Name", username] as [string, string]] };
    const answer = await sendRadius({
      host: "127.0.0.1",
      port: options.radiusPort,
      secret: options.secret,
      timeoutMs: 3000,
      retries: 1,
      ...request,
      attributes: [
        ...(request.attributes ?? []),
        ...attributes,
        ["Calling-Station-Id", mac],
        ["Called-Station-Id", "00-1D-7E-BC-02-AD:Guest"],
        ["NAS-Identifier", `test-${options.vendor}`],
      ],
    });
    const attrs: Record<string, unknown> = {};
    for (const a of answer.attributes) attrs[a.name] = a.value;
    return { type: answer.type, message: attrs["Reply-Message"] as string | undefined, attributes: attrs };
  }

  function redirect(response: http.ServerResponse, location: string) {
    response.writeHead(302, { location }).end();
  }

  function portalRedirect(res: string): string {
    const url = new URL(portalUrl);
    if (options.vendor === "coovachilli") {
      // src/redir.c bstring_buildurl: res, uamip, uamport, challenge, called, mac, ip, nasid, userurl, md.
      challenge = randomBytes(16);
      const port = new URL(base).port;
      return chilliUrl(
        portalUrl,
        [
          ["res", res],
          ["uamip", "127.0.0.1"],
          ["uamport", port],
          ["challenge", challenge.toString("hex")],
          ["called", "00-1D-7E-BC-02-AD"],
          ["mac", mac],
          ["ip", "10.1.0.2"],
          ["nasid", "test-coova"],
          ["userurl", original],
        ],
        options.uamSecret ?? "",
      );
    } else if (options.vendor === "mikrotik") {
      challenge = randomBytes(16);
      chapId = randomBytes(1);
      url.searchParams.set("link-login-only", `${base}/login`);
      url.searchParams.set("link-orig", original);
      if (!options.noChallenge) {
        url.searchParams.set("chap-id", octal(chapId));
        url.searchParams.set("chap-challenge", octal(challenge));
      }
      url.searchParams.set("mac", mac.replace(/-/g, ":"));
      url.searchParams.set("ip", "10.5.50.2");
      if (res === "failed") url.searchParams.set("error", "invalid username or password");
    } else {
      const g = options.generic ?? { loginParam: "login_url" };
      url.searchParams.set(g.loginParam, `${base}/login`);
      url.searchParams.set("client_mac", mac);
      url.searchParams.set("redirect_url", original);
    }
    return url.href;
  }

  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", base);
    try {
      if (url.pathname === "/start") {
        portalUrl = url.searchParams.get("portal") ?? "";
        original = url.searchParams.get("orig") ?? `${base}/original`;
        if (options.macAuth && options.vendor !== "generic") {
          const name =
            options.vendor === "mikrotik" ? mac.replace(/-/g, ":").toUpperCase() : mac.toUpperCase();
          const password = options.macAuth.password ?? (options.vendor === "mikrotik" ? "" : name);
          const answer = await radius(name, [], password === "" ? "\u0000" : password);
          handoffs.push({ path: "/mab", params: { username: name }, radius: answer });
          if (answer.type === "Access-Accept") return redirect(response, original);
        }
        return redirect(response, portalRedirect("notyet"));
      }
      if (url.pathname === "/welcome" || url.pathname === "/original") {
        response.writeHead(200, { "content-type": "text/html" });
        return response.end(
          `<!doctype html><title>${url.pathname.slice(1)}</title><h1 id="landed">${url.pathname}</h1>`,
        );
      }
      if (options.vendor === "coovachilli" && url.pathname === "/logon" && request.method === "GET") {
        const params = Object.fromEntries(url.searchParams);
        const username = params.username ?? "";
        const secret = options.uamSecret ?? "";
        const newChallenge = secret ? md5(challenge, secret) : challenge;
        let answer: Handoff["radius"];
        if (params.response) {
          // CHAP: ident 0, the response as sent, the uamsecret-hashed challenge (src/redir.c).
          const chap = Buffer.concat([Buffer.from([0]), Buffer.from(params.response, "hex")]);
          answer = await radius(username, [
            ["CHAP-Password", chap],
            ["CHAP-Challenge", newChallenge],
          ]);
        } else {
          // PAP: XOR the hex password back with md5(challenge + uamsecret).
          const bytes = Buffer.from(params.password ?? "", "hex");
          const clear = Buffer.from(bytes.map((b, i) => b ^ newChallenge[i % 16]!)).toString("utf8");
          answer = await radius(username, [], clear);
        }
        handoffs.push({ path: "/logon", params, radius: answer });
        if (answer.type !== "Access-Accept") return redirect(response, portalRedirect("failed"));
        const back: [string, string][] = [
          ["res", "success"],
          ["uamip", "127.0.0.1"],
          ["uamport", new URL(base).port],
          ["mac", mac],
          ["userurl", params.userurl ?? original],
        ];
        return redirect(response, chilliUrl(portalUrl, back, options.uamSecret ?? ""));
      }
      if (url.pathname === "/login" && request.method === "POST") {
        const form = await body(request);
        const params = Object.fromEntries(form);
        let answer: Handoff["radius"];
        let dst: string | null;
        if (options.vendor === "mikrotik") {
          const username = params.username ?? "";
          if (options.noChallenge) answer = await radius(username, [], params.password ?? "");
          else {
            const chap = Buffer.concat([chapId, Buffer.from(params.password ?? "", "hex")]);
            answer = await radius(username, [
              ["CHAP-Password", chap],
              ["CHAP-Challenge", challenge],
            ]);
          }
          dst = params.dst ?? null;
        } else {
          const g = options.generic ?? { usernameField: "username", passwordField: "password" };
          answer = await radius(params[g.usernameField] ?? "", [], params[g.passwordField] ?? "");
          dst = options.generic?.redirectField ? (params[options.generic.redirectField] ?? null) : null;
        }
        handoffs.push({ path: "/login", params, radius: answer });
        if (answer.type !== "Access-Accept") return redirect(response, portalRedirect("failed"));
        return redirect(response, dst ?? `${base}/original`);
      }
      response.writeHead(404).end("no such page");
    } catch (error) {
      response.writeHead(500).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    startUrl: (portal, orig) =>
      `${base}/start?portal=${encodeURIComponent(portal)}${orig ? `&orig=${encodeURIComponent(orig)}` : ""}`,
    handoffs,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
