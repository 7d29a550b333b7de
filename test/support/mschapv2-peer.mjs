// The peer's side of MS-CHAPv2 (RFC 2759 section 8, RFC 3079 section 3), written apart from
// src/radius/mschap on OpenSSL's own MD4 and DES-ECB: run it as
// `node --openssl-legacy-provider mschapv2-peer.mjs` (OpenSSL 3 has both only in the legacy
// provider). Reads a JSON array of { username, password, authenticatorChallenge, peerChallenge }
// (challenges in hex) on stdin; writes, for each, the NT-Response, the authenticator response the
// peer expects, and the MPPE keys of the client side, in hex.
import { createCipheriv, createHash } from "node:crypto";

const sha1 = (...parts) => createHash("sha1").update(Buffer.concat(parts)).digest();
const md4 = (data) => createHash("md4").update(data).digest();

/** 56 key bits -> 8 octets with (ignored) parity bits in the low bit. */
function desKey(seven) {
  const bits = [...seven].map((octet) => octet.toString(2).padStart(8, "0")).join("");
  const out = Buffer.alloc(8);
  for (let i = 0; i < 8; i++) out[i] = Number.parseInt(bits.slice(i * 7, i * 7 + 7), 2) << 1;
  return out;
}

function desEncrypt(clear, seven) {
  const cipher = createCipheriv("des-ecb", desKey(seven), null).setAutoPadding(false);
  return Buffer.concat([cipher.update(clear), cipher.final()]);
}

function peer({ username, password, authenticatorChallenge, peerChallenge }) {
  const auth = Buffer.from(authenticatorChallenge, "hex");
  const peerC = Buffer.from(peerChallenge, "hex");
  const name = username.includes("\\") ? username.slice(username.indexOf("\\") + 1) : username;
  const challenge = sha1(peerC, auth, Buffer.from(name, "utf8")).subarray(0, 8);
  const hash = md4(Buffer.from(password, "utf16le"));
  const z = Buffer.concat([hash, Buffer.alloc(5)]);
  const ntResponse = Buffer.concat([0, 7, 14].map((at) => desEncrypt(challenge, z.subarray(at, at + 7))));
  const hashHash = md4(hash);
  const magic1 = Buffer.from("Magic server to client signing constant");
  const magic2 = Buffer.from("Pad to make it do more than one iteration");
  const digest = sha1(sha1(hashHash, ntResponse, magic1), challenge, magic2);
  const master = sha1(hashHash, ntResponse, Buffer.from("This is the MPPE Master Key")).subarray(0, 16);
  const key = (magic) =>
    sha1(master, Buffer.alloc(40, 0), Buffer.from(magic), Buffer.alloc(40, 0xf2)).subarray(0, 16);
  return {
    ntResponse: ntResponse.toString("hex"),
    authenticatorResponse: `S=${digest.toString("hex").toUpperCase()}`,
    // Client side (IsServer FALSE): send = Magic2, receive = Magic3.
    clientSendKey: key(
      "On the client side, this is the send key; on the server side, it is the receive key.",
    ).toString("hex"),
    clientRecvKey: key(
      "On the client side, this is the receive key; on the server side, it is the send key.",
    ).toString("hex"),
  };
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
process.stdout.write(JSON.stringify(JSON.parse(Buffer.concat(chunks).toString("utf8")).map(peer)));
