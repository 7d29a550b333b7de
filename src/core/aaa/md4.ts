// MD4 (RFC 1320), for the NT password hash of MS-CHAP and nothing else: MD4 is broken as a general
// hash. Written here because node:crypto cannot: OpenSSL 3 keeps MD4 in its legacy provider, and
// Node 20 fails createHash("md4") with ERR_OSSL_EVP_UNSUPPORTED unless the whole process starts
// with --openssl-legacy-provider. The npm packages looked at either call createHash("md4") on
// their default path (js-md4) or need an asynchronous WebAssembly start (hash-wasm). Tested
// against RFC 1320 appendix A.5 and RFC 2759 section 9.2.

const rotl = (x: number, n: number) => (x << n) | (x >>> (32 - n));

// Message word order and shift amounts of rounds 2 and 3 (RFC 1320 section 3.4).
const ROUND2_WORDS = [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15];
const ROUND3_WORDS = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15];
const SHIFTS = [
  [3, 7, 11, 19],
  [3, 5, 9, 13],
  [3, 9, 11, 15],
];

/** MD4 digest (16 octets) of `data`. */
export function md4(data: Uint8Array): Buffer {
  // Padding (section 3.1-3.2): 0x80, zeros to 56 mod 64, then the bit length as 64-bit little-endian.
  const blocks = Math.ceil((data.length + 9) / 64);
  const message = Buffer.alloc(blocks * 64);
  message.set(data);
  message[data.length] = 0x80;
  const bits = data.length * 8;
  message.writeUInt32LE(bits >>> 0, message.length - 8);
  message.writeUInt32LE(Math.floor(bits / 2 ** 32), message.length - 4);

  const state = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];
  const x = new Array<number>(16);
  for (let offset = 0; offset < message.length; offset += 64) {
    for (let i = 0; i < 16; i++) x[i] = message.readInt32LE(offset + i * 4);
    const r = [...state] as [number, number, number, number];
    for (let round = 0; round < 3; round++) {
      for (let step = 0; step < 16; step++) {
        // Registers rotate each step: a = f(a, b, c, d), then d = f(d, a, b, c), and so on.
        const ia = (4 - (step % 4)) % 4;
        const a = r[ia]!;
        const b = r[(ia + 1) % 4]!;
        const c = r[(ia + 2) % 4]!;
        const d = r[(ia + 3) % 4]!;
        let sum: number;
        if (round === 0) sum = a + ((b & c) | (~b & d)) + x[step]!;
        else if (round === 1) sum = a + ((b & c) | (b & d) | (c & d)) + x[ROUND2_WORDS[step]!]! + 0x5a827999;
        else sum = a + (b ^ c ^ d) + x[ROUND3_WORDS[step]!]! + 0x6ed9eba1;
        r[ia] = rotl(sum | 0, SHIFTS[round]![step % 4]!);
      }
    }
    for (let i = 0; i < 4; i++) state[i] = (state[i]! + r[i]!) | 0;
  }
  const out = Buffer.alloc(16);
  for (let i = 0; i < 4; i++) out.writeInt32LE(state[i]!, i * 4);
  return out;
}
