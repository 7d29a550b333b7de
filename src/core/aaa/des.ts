// DesEncrypt of RFC 2759 section 8.6: one 8-octet block, DES in ECB mode, under a 7-octet key. In
// core: MS-CHAP (the RADIUS door) and the LM-Password check (LM hash) both use it.
// DES comes from des.js, not node:crypto: OpenSSL 3 keeps DES-ECB in its legacy provider, and
// Node 20 fails createCipheriv("des-ecb") with ERR_OSSL_EVP_UNSUPPORTED.
import des from "des.js";

/**
 * The 56 key bits spread over 8 octets, 7 bits each in the high bits, the low bit set for odd
 * parity (RFC 2759 section 9.3 shows the result). DES ignores the parity bits; setting them makes
 * the key a valid DES key for any engine and is what the RFC's example shows.
 */
export function desKeyFrom7(key: Buffer): Buffer {
  if (key.length !== 7) throw new RangeError("a DES key from MS-CHAP is 7 octets");
  const out = Buffer.alloc(8);
  let bits = 0n;
  for (const octet of key) bits = (bits << 8n) | BigInt(octet);
  for (let i = 0; i < 8; i++) {
    const seven = Number((bits >> BigInt(49 - i * 7)) & 0x7fn);
    let ones = 0;
    for (let v = seven; v; v >>= 1) ones += v & 1;
    out[i] = (seven << 1) | (ones % 2 === 0 ? 1 : 0);
  }
  return out;
}

/** DES-ECB encryption of one 8-octet block under a 7-octet key. */
export function desEncryptBlock(clear: Buffer, key7: Buffer): Buffer {
  if (clear.length !== 8) throw new RangeError("DES encrypts 8-octet blocks");
  const cipher = des.DES.create({ type: "encrypt", key: desKeyFrom7(key7), padding: false });
  return Buffer.from(cipher.update(clear));
}
