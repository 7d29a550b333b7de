// The LAN Manager password hash, as FreeRADIUS 3.2's rlm_pap gets it for an LM-Password: through
// %{mschap:LM-Hash %{User-Password}} (rlm_mschap.c, mschap_xlat; smbdes.c, smbdes_lmpwdhash).
// LM is long broken; it is here because imported databases may still hold LM-Password items.
import { desEncryptBlock } from "../des.ts";

/** The constant LM encrypts under each half of the password ("KGS!@#$%"). */
const LM_MAGIC = Buffer.from("KGS!@#$%", "latin1");

/** isspace() of the C locale: space, \t, \n, \v, \f, \r. */
const isSpace = (octet: number) => octet === 0x20 || (octet >= 0x09 && octet <= 0x0d);

/**
 * mschap_xlat skips leading white space; smbdes_lmpwdhash takes at most 14 octets up to the first
 * NUL, upper-cases ASCII letters (toupper of the C locale), pads with zeros and DES-encrypts the
 * magic under each 7-octet half.
 */
export function lmPasswordHash(password: Buffer): Buffer {
  let start = 0;
  while (start < password.length && isSpace(password[start]!)) start++;
  const key = Buffer.alloc(14);
  for (let i = 0; i < 14 && start + i < password.length; i++) {
    const octet = password[start + i]!;
    if (octet === 0) break;
    key[i] = octet >= 0x61 && octet <= 0x7a ? octet - 0x20 : octet;
  }
  return Buffer.concat([
    desEncryptBlock(LM_MAGIC, key.subarray(0, 7)),
    desEncryptBlock(LM_MAGIC, key.subarray(7, 14)),
  ]);
}
