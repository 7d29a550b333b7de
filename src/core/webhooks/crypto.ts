// Webhook secrets: generated whsec_ keys, kept encrypted at rest (AES-256-GCM), since the worker
// needs them in clear to sign. The key comes from WEBHOOK_SECRET_KEY (base64 of 32 bytes) or, when
// that is unset, from DATA_DIR/secret.key, generated once with mode 0600. Every process that signs
// or creates secrets must use the same key: on PostgreSQL with processes on several hosts, set
// WEBHOOK_SECRET_KEY to the same value everywhere (each host has its own DATA_DIR).
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { AppError } from "../shared/errors.ts";
import { SECRET_BYTES, SECRET_PREFIX } from "./rules.ts";

export const KEY_FILE = "secret.key";
const FORMAT = "v1";

export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString("base64")}`;
}

/** The HMAC key a whsec_ secret stands for. */
export function secretBytes(secret: string): Buffer {
  return Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    "base64",
  );
}

/** A short, non-secret name of a key, stored with each ciphertext so a wrong key is named as such. */
function keyId(key: Buffer): string {
  return createHash("sha256").update("wisp webhook key id").update(key).digest("hex").slice(0, 8);
}

/** A missing, unreadable or different encryption key: a setup problem, told as such by every door. */
export class SecretKeyError extends AppError {
  constructor(message: string) {
    super(500, message);
  }
}

/** Decodes WEBHOOK_SECRET_KEY; null when it is not base64 of exactly 32 bytes. */
export function decodeKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) return null;
  const key = Buffer.from(trimmed, "base64");
  return key.length === 32 ? key : null;
}

/** Reads DATA_DIR/secret.key, creating it (0600) when missing; two processes racing read one file. */
export function loadOrCreateKeyFile(dataDir: string): Buffer {
  const file = path.join(dataDir, KEY_FILE);
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${randomBytes(32).toString("base64")}\n`, { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const mode = fs.statSync(file).mode & 0o777;
  if (process.platform !== "win32" && (mode & 0o077) !== 0) {
    throw new SecretKeyError(`${file} must be readable by its owner only (chmod 600 ${file})`);
  }
  const key = decodeKey(fs.readFileSync(file, "utf8"));
  if (!key) throw new SecretKeyError(`${file} must hold base64 of 32 bytes`);
  return key;
}

export interface KeySource {
  /** Base64 of 32 bytes (WEBHOOK_SECRET_KEY), checked by the config. */
  secretKey?: string | undefined;
  dataDir?: string | undefined;
}

/**
 * Encrypts and decrypts secrets at rest (webhook endpoints', gateways' UAM secrets, console secrets
 * waiting to be shown, the CA's key); the key is read on first use. `what` names them in errors.
 */
export class SecretBox {
  private key: Buffer | undefined;

  constructor(
    private readonly source: KeySource,
    private readonly what = "webhook secret",
  ) {}

  private current(): Buffer {
    if (this.key) return this.key;
    if (this.source.secretKey) {
      const key = decodeKey(this.source.secretKey);
      if (!key) throw new SecretKeyError("WEBHOOK_SECRET_KEY must be base64 of 32 bytes");
      this.key = key;
    } else if (this.source.dataDir) {
      this.key = loadOrCreateKeyFile(this.source.dataDir);
    } else {
      throw new SecretKeyError(`a ${this.what} needs WEBHOOK_SECRET_KEY or a DATA_DIR for secret.key`);
    }
    return this.key;
  }

  /** A key of its own for `purpose` (an HMAC of it under the sealing key), e.g. guest codes' digests. */
  derive(purpose: string): Buffer {
    return createHmac("sha256", this.current()).update(`wisp derived key: ${purpose}`).digest();
  }

  /** `context` (the endpoint) is authenticated too, so a ciphertext copied to another row fails. */
  seal(secret: string, context: string): string {
    const key = this.current();
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    cipher.setAAD(Buffer.from(context));
    const data = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), data].map((b) => b.toString("base64"));
    return [FORMAT, keyId(key), ...parts].join(".");
  }

  open(sealed: string, context: string): string {
    const key = this.current();
    const [format, id, iv, tag, data] = sealed.split(".");
    if (format !== FORMAT || !id || !iv || !tag || data === undefined) {
      throw new SecretKeyError(`the stored ${this.what} is not in a known format`);
    }
    if (id !== keyId(key)) {
      throw new SecretKeyError(
        `the ${this.what} was encrypted with key ${id} but this process has key ${keyId(key)}: ` +
          "set WEBHOOK_SECRET_KEY to the same value on every process",
      );
    }
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64"));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag, "base64"));
      return Buffer.concat([decipher.update(Buffer.from(data, "base64")), decipher.final()]).toString("utf8");
    } catch {
      throw new SecretKeyError(`the stored ${this.what} does not decrypt (altered or moved between rows)`);
    }
  }
}
