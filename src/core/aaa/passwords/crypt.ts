// Crypt-Password: FreeRADIUS 3.2 calls the system's crypt(3) with the password and the stored
// string as its setting, and accepts when the result is the stored string (fr_crypt_check,
// src/main/crypt.c). Wisp computes the same for the schemes operators meet: MD5-crypt ($1$),
// SHA-crypt ($5$, $6$), bcrypt ($2a$, $2b$, $2y$) and traditional DES (13 characters). A stored
// string is read in its canonical form only (what crypt(3) writes): anything else never equals
// crypt(3)'s output, so FreeRADIUS rejects it too. Other schemes Debian's libxcrypt knows (yescrypt
// $y$, scrypt $7$, bigcrypt, $2x$, BSDi _...) are refused with the reason recorded, never accepted.
import bcrypt from "bcryptjs";
import unixCryptTD from "unix-crypt-td-js";
import { sameOctets } from "../../shared/secrets.ts";
import { type Check, problem } from "./check.ts";
import { md5Crypt, shaCrypt } from "./crypt-hashes.ts";
import { cString } from "./encoding.ts";

/**
 * Above these, the work per login is refused (FreeRADIUS allows 999,999,999 rounds and cost 31): a
 * SHA-crypt round takes about 4 microseconds here and bcryptjs about 0.35 s at cost 10, doubling with
 * each step, and a hostile imported hash must not keep the server busy for minutes per login.
 */
export const MAX_SHA_CRYPT_ROUNDS = 1_000_000;
export const MAX_BCRYPT_COST = 13;

const SALT = "[./0-9A-Za-z]";
const MD5_CRYPT = new RegExp(`^\\$1\\$(${SALT}{0,8})\\$${SALT}{22}$`);
const SHA_CRYPT = new RegExp(`^\\$([56])\\$(?:rounds=([1-9][0-9]{3,8})\\$)?(${SALT}{0,16})\\$(${SALT}+)$`);
const BCRYPT = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;
const DES = new RegExp(`^${SALT}{13}$`);

/** What scheme a stored crypt string is, for the checks and for validating input. */
export function cryptScheme(reference: string): "md5" | "sha" | "bcrypt" | "des" | Check {
  if (reference.startsWith("$1$")) return MD5_CRYPT.test(reference) ? "md5" : malformed("$1$");
  if (/^\$[56]\$/.test(reference)) return shaScheme(reference);
  if (/^\$2[aby]\$/.test(reference)) return bcryptScheme(reference);
  if (/^\$2/.test(reference)) return problem("unsupported", "bcrypt variant other than $2a$, $2b$, $2y$");
  if (reference.startsWith("$") || reference.startsWith("_")) {
    return problem("unsupported", `crypt scheme ${/^(\$[^$]*\$?|_)/.exec(reference)?.[0] ?? "?"}`);
  }
  if (DES.test(reference)) return "des";
  if (new RegExp(`^${SALT}{2}`).test(reference) && reference.length > 13) {
    return problem("unsupported", "bigcrypt (DES crypt longer than 13 characters)");
  }
  return problem("malformed", "Crypt-Password is no crypt(3) string");
}

const malformed = (scheme: string) => problem("malformed", `${scheme} crypt string not in crypt(3)'s form`);

function shaScheme(reference: string): "sha" | Check {
  const m = SHA_CRYPT.exec(reference);
  const size = reference[1] === "5" ? 43 : 86;
  if (!m || m[4]!.length !== size) return malformed(reference.slice(0, 3));
  const rounds = m[2] === undefined ? 5000 : Number(m[2]);
  if (rounds < 1000) return malformed(reference.slice(0, 3));
  if (rounds > MAX_SHA_CRYPT_ROUNDS)
    return problem("unsupported", `SHA-crypt rounds above ${MAX_SHA_CRYPT_ROUNDS}`);
  return "sha";
}

function bcryptScheme(reference: string): "bcrypt" | Check {
  const m = BCRYPT.exec(reference);
  if (!m || Number(m[1]) < 4 || Number(m[1]) > 31) return malformed("bcrypt");
  if (Number(m[1]) > MAX_BCRYPT_COST) return problem("unsupported", `bcrypt cost above ${MAX_BCRYPT_COST}`);
  return "bcrypt";
}

/** fr_crypt_check: crypt(3) of the password (a C string: up to its first NUL) with the stored setting. */
export async function checkCrypt(stored: Buffer, password: Buffer): Promise<Check> {
  const reference = cString(stored).toString("latin1");
  const key = cString(password);
  const scheme = cryptScheme(reference);
  if (typeof scheme !== "string") return scheme;
  const computed = await cryptOf(scheme, key, reference);
  if (typeof computed !== "string") return computed;
  return sameOctets(Buffer.from(computed, "latin1"), Buffer.from(reference, "latin1"));
}

async function cryptOf(scheme: "md5" | "sha" | "bcrypt" | "des", key: Buffer, reference: string) {
  switch (scheme) {
    case "md5":
      return md5Crypt(key, MD5_CRYPT.exec(reference)![1]!);
    case "sha": {
      const m = SHA_CRYPT.exec(reference)!;
      return shaCrypt(m[1] as "5" | "6", key, m[3]!, m[2] === undefined ? undefined : Number(m[2]));
    }
    case "bcrypt": {
      // bcryptjs hashes a string's UTF-8; a password that is not UTF-8 has no such string.
      const text = key.toString("utf8");
      if (!Buffer.from(text, "utf8").equals(key))
        return problem("uncheckable", "bcrypt of a password that is not UTF-8");
      return bcrypt.hash(text, reference.slice(0, 29));
    }
    case "des":
      // Traditional DES crypt: the first 8 octets, 7 bits each; the salt is the first 2 characters.
      return unixCryptTD([...key], reference.slice(0, 2)) as string;
  }
}
