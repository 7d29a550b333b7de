// An OpenID Provider that misbehaves on purpose, for the refusals no real provider will produce:
// its discovery, JWKS and authorization endpoint are ordinary (the authorization endpoint answers
// at once with a code), but its token endpoint returns the ID token the test builds from the
// request's nonce (alg "none", another audience or issuer, expired, another nonce, another key).
import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface TokenContext {
  issuer: string;
  clientId: string;
  nonce: string;
  now: number;
}

export interface RogueOp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Builds the next ID token; by default a valid one. */
  idToken: (context: TokenContext) => string;
  /** A correct RS256 token with these claims changed. */
  signed(claims: Record<string, unknown>, header?: Record<string, unknown>, key?: KeyObject): string;
  validClaims(context: TokenContext): Record<string, unknown>;
  otherKey: KeyObject;
  close(): Promise<void>;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

export async function startRogueOp(): Promise<RogueOp> {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const nonces = new Map<string, string>();
  let codes = 0;
  const op: RogueOp = {
    issuer,
    clientId: "rogue-client",
    clientSecret: "rogue-secret-0123456789",
    otherKey: other,
    validClaims: (c) => ({
      iss: c.issuer,
      aud: c.clientId,
      sub: "rogue-user",
      nonce: c.nonce,
      iat: c.now,
      exp: c.now + 300,
    }),
    signed(claims, header = {}, key = privateKey) {
      const head = b64({ alg: "RS256", kid: "k1", typ: "JWT", ...header });
      const body = b64(claims);
      const signature = sign("sha256", Buffer.from(`${head}.${body}`), key).toString("base64url");
      return `${head}.${body}.${signature}`;
    },
    idToken: (c) => op.signed(op.validClaims(c)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const json = (reply: http.ServerResponse, body: unknown) =>
    reply.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  server.on("request", (request, reply) => {
    const url = new URL(request.url ?? "/", issuer);
    if (url.pathname === "/.well-known/openid-configuration") {
      return json(reply, {
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
        code_challenge_methods_supported: ["S256"],
      });
    }
    if (url.pathname === "/jwks") {
      return json(reply, {
        keys: [{ ...publicKey.export({ format: "jwk" }), kid: "k1", use: "sig", alg: "RS256" }],
      });
    }
    if (url.pathname === "/auth") {
      const code = `code-${++codes}`;
      nonces.set(code, url.searchParams.get("nonce") ?? "");
      const back = new URL(url.searchParams.get("redirect_uri") ?? "");
      back.searchParams.set("code", code);
      back.searchParams.set("state", url.searchParams.get("state") ?? "");
      back.searchParams.set("iss", issuer);
      reply.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === "/token" && request.method === "POST") {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        const code = new URLSearchParams(body).get("code") ?? "";
        const context = {
          issuer,
          clientId: op.clientId,
          nonce: nonces.get(code) ?? "",
          now: Math.floor(Date.now() / 1000),
        };
        json(reply, {
          access_token: "at",
          token_type: "Bearer",
          expires_in: 300,
          id_token: op.idToken(context),
        });
      });
      return;
    }
    reply.writeHead(404).end();
  });
  return op;
}
