// MS-CHAPv2 as the authenticator computes it: RFC 2759 section 8 (responses) and RFC 3079
// section 3 (the MPPE keys of an MS-CHAPv2 login). Tested against RFC 2759 section 9.2 and RFC 3079
// section 3.5.3.
//
// User names: RFC 2759 section 8.2 hashes "only the user name ... excluding any prepended domain
// name". Like FreeRADIUS's rlm_mschap (with_ntdomain_hack, on by default), everything up to and
// including the first backslash is dropped: "ACME\alice" is hashed as "alice". "alice@realm" is
// hashed whole, as the peer does. The user is still looked up by the whole User-Name.
import { createHash, timingSafeEqual } from "node:crypto";
import { desEncryptBlock } from "../../core/aaa/des.ts";
import { hashNtPasswordHash } from "../../core/aaa/nt-hash.ts";
import { checkedAddon } from "../eap/native-addon.ts";

/** The name that goes into ChallengeHash: `DOMAIN\user` -> `user` (see the header). */
export function mschapUserName(username: string): string {
  const slash = username.indexOf("\\");
  return slash < 0 ? username : username.slice(slash + 1);
}

function sha1(...parts: Uint8Array[]): Buffer {
  const hash = createHash("sha1");
  for (const part of parts) hash.update(part);
  return hash.digest();
}

function need(value: Buffer, length: number, name: string): Buffer {
  if (value.length !== length) throw new RangeError(`${name} must be ${length} octets, not ${value.length}`);
  return value;
}

/** ChallengeHash (RFC 2759 section 8.2): the first 8 octets of SHA-1(peer + authenticator + name). */
export function challengeHash(
  peerChallenge: Buffer,
  authenticatorChallenge: Buffer,
  username: string,
): Buffer {
  return sha1(
    need(peerChallenge, 16, "peerChallenge"),
    need(authenticatorChallenge, 16, "authenticatorChallenge"),
    Buffer.from(mschapUserName(username), "utf8"),
  ).subarray(0, 8);
}

/**
 * ChallengeResponse (RFC 2759 section 8.5): the password hash, zero-padded to 21 octets, as three
 * 7-octet DES keys that each encrypt the 8-octet challenge (DesEncrypt, section 8.6).
 */
export function challengeResponse(challenge: Buffer, passwordHash: Buffer): Buffer {
  need(challenge, 8, "challenge");
  const keys = Buffer.alloc(21);
  need(passwordHash, 16, "passwordHash").copy(keys);
  const native = des.get();
  if (native) {
    const out = Buffer.alloc(24);
    native.mschapChallengeResponse(out, challenge, keys);
    return out;
  }
  return desInScript(challenge, keys);
}

function desInScript(challenge: Buffer, keys: Buffer): Buffer {
  return Buffer.concat([
    desEncryptBlock(challenge, keys.subarray(0, 7)),
    desEncryptBlock(challenge, keys.subarray(7, 14)),
    desEncryptBlock(challenge, keys.subarray(14, 21)),
  ]);
}

/**
 * The OpenSSL addon's DES (openssl-tunnel.c: 3DES under one key, as OpenSSL 3's default provider has
 * no single DES), when it is built and agrees with des.js on a known block; else des.js.
 */
const des = checkedAddon((addon) => {
  const challenge = Buffer.from("0123456789abcdef", "hex");
  const keys = Buffer.from("fedcba98765432100123456789abcdeffedcba9876", "hex");
  const out = Buffer.alloc(24);
  addon.mschapChallengeResponse(out, challenge, keys);
  return out.equals(desInScript(challenge, keys));
});

/** Tests only: DES by des.js (false) or by the addon when it loads and agrees (true). */
export function useNativeDes(on: boolean): void {
  des.use(on);
}

/** GenerateNTResponse (RFC 2759 section 8.1), from the password hash: the 24-octet NT-Response. */
export function generateNtResponse(
  authenticatorChallenge: Buffer,
  peerChallenge: Buffer,
  username: string,
  passwordHash: Buffer,
): Buffer {
  return challengeResponse(challengeHash(peerChallenge, authenticatorChallenge, username), passwordHash);
}

// RFC 2759 section 8.7: "Magic server to client signing constant" and "Pad to make it do more than
// one iteration".
const MAGIC1 = Buffer.from("Magic server to client signing constant", "ascii");
const MAGIC2 = Buffer.from("Pad to make it do more than one iteration", "ascii");

/**
 * GenerateAuthenticatorResponse (RFC 2759 section 8.7): "S=" and 40 upper-case hex digits, which
 * proves to the peer that the authenticator knows its password too.
 */
export function generateAuthenticatorResponse(
  passwordHash: Buffer,
  ntResponse: Buffer,
  peerChallenge: Buffer,
  authenticatorChallenge: Buffer,
  username: string,
): string {
  const digest = sha1(
    hashNtPasswordHash(need(passwordHash, 16, "passwordHash")),
    need(ntResponse, 24, "ntResponse"),
    MAGIC1,
  );
  const challenge = challengeHash(peerChallenge, authenticatorChallenge, username);
  return `S=${sha1(digest, challenge, MAGIC2).toString("hex").toUpperCase()}`;
}

// RFC 3079 section 3.4 constants (GetMasterKey's Magic1, GetAsymmetricStartKey's Magic2/Magic3 and pads).
const MASTER_MAGIC = Buffer.from("This is the MPPE Master Key", "ascii");
const CLIENT_SEND_MAGIC = Buffer.from(
  "On the client side, this is the send key; on the server side, it is the receive key.",
  "ascii",
);
const CLIENT_RECEIVE_MAGIC = Buffer.from(
  "On the client side, this is the receive key; on the server side, it is the send key.",
  "ascii",
);
const SHS_PAD1 = Buffer.alloc(40, 0x00);
const SHS_PAD2 = Buffer.alloc(40, 0xf2);

/** GetMasterKey (RFC 3079 section 3.4): SHA-1(PasswordHashHash + NT-Response + Magic1), 16 octets. */
export function mppeMasterKey(passwordHash: Buffer, ntResponse: Buffer): Buffer {
  return sha1(
    hashNtPasswordHash(need(passwordHash, 16, "passwordHash")),
    need(ntResponse, 24, "ntResponse"),
    MASTER_MAGIC,
  ).subarray(0, 16);
}

/** GetAsymmetricStartKey (RFC 3079 section 3.4) for 128-bit keys, from the master key and magic. */
function asymmetricStartKey(masterKey: Buffer, magic: Buffer): Buffer {
  return sha1(masterKey, SHS_PAD1, magic, SHS_PAD2).subarray(0, 16);
}

/**
 * The server's 128-bit MPPE keys of an MS-CHAPv2 login (RFC 3079 sections 3.3 and 3.4, IsServer
 * TRUE): its send key is the client's receive key and the other way round. In an Access-Accept
 * they go as MS-MPPE-Send-Key and MS-MPPE-Recv-Key (RFC 2548 sections 2.4.2 and 2.4.3, keys the
 * NAS uses towards and from the peer), as FreeRADIUS's rlm_mschap sends them.
 */
export function mppeMasterKeys(
  passwordHash: Buffer,
  ntResponse: Buffer,
): { masterSendKey: Buffer; masterRecvKey: Buffer } {
  const master = mppeMasterKey(passwordHash, ntResponse);
  return {
    masterSendKey: asymmetricStartKey(master, CLIENT_RECEIVE_MAGIC),
    masterRecvKey: asymmetricStartKey(master, CLIENT_SEND_MAGIC),
  };
}

/** One peer's MS-CHAPv2 response as the authenticator received it (RADIUS or EAP-MSCHAPv2). */
export interface MschapV2Response {
  authenticatorChallenge: Buffer;
  peerChallenge: Buffer;
  ntResponse: Buffer;
  /** The name the peer hashed (User-Name, or EAP-MSCHAPv2's Name); a DOMAIN\ prefix is dropped. */
  username: string;
}

/**
 * A verifier for Credentials.mschapv2 that remembers the NT hash it matched, so that the answer
 * can then carry the authenticator response ("S=...") and the MPPE keys made from it.
 */
export class MschapV2Verifier {
  private matched: Buffer | undefined;

  constructor(private readonly response: MschapV2Response) {
    need(response.authenticatorChallenge, 16, "authenticatorChallenge");
    need(response.peerChallenge, 16, "peerChallenge");
    need(response.ntResponse, 24, "ntResponse");
  }

  /** True when the NT-Response was made from this hash (compared in constant time). */
  readonly verify = (ntPasswordHash: Buffer): boolean => {
    const r = this.response;
    const expected = generateNtResponse(
      r.authenticatorChallenge,
      r.peerChallenge,
      r.username,
      ntPasswordHash,
    );
    if (!timingSafeEqual(expected, r.ntResponse)) return false;
    this.matched = ntPasswordHash;
    return true;
  };

  /** "S=" + 40 hex digits, once verify() has matched; undefined before (nothing proven). */
  authenticatorResponse(): string | undefined {
    if (!this.matched) return undefined;
    const r = this.response;
    return generateAuthenticatorResponse(
      this.matched,
      r.ntResponse,
      r.peerChallenge,
      r.authenticatorChallenge,
      r.username,
    );
  }

  /** The server's MPPE keys (RFC 3079), once verify() has matched. */
  mppeKeys(): { masterSendKey: Buffer; masterRecvKey: Buffer } | undefined {
    return this.matched ? mppeMasterKeys(this.matched, this.response.ntResponse) : undefined;
  }
}
