// The one masking rule of the audit log: a field is secret when its name says so (SECRET_NAME),
// and a RADIUS item ({attribute, value}, radcheck and radreply rows) is secret when its attribute's
// name says so (Cleartext-Password, NT-Password, Password-With-Header, ...). A secret's value
// becomes MASK (an empty one stays empty, so "set" and "not set" still differ), at any depth.

export const MASK = "********";

/**
 * Network and webhook `secret`, portal `uam_secret`, MAB `mab_secret`/`mab_password`, SMS
 * `sms_secret`, IdP `client_secret`, SMTP `password`, users' `password`/`password_hash`, API keys
 * (`key`, `key_hash`), admins' `password_hash`, TOTP seeds, recovery codes, private keys, tokens.
 * A voucher's `code` (also `voucher_code`, `preverify_code`) is its username and password at once,
 * a guest's credential like any password: masked too (the row's resource_id names the voucher).
 * `key_tail` (the last characters an operator recognises a key by) is shown on purpose.
 */
const SECRET_NAME =
  /secret|password|passphrase|passcode|token|private_key|credential|recovery|totp|seed|(^|_)key$|hash$|^(voucher_|preverify_)?code$/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

function maskValue(value: unknown): unknown {
  // Nothing to hide in an empty value or a switch (password_login: on/off).
  if (value === null || value === undefined || value === "" || typeof value === "boolean") return value;
  return MASK;
}

/** A copy of `value` with every secret masked. */
export function maskSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskSecrets);
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Date) return value.toISOString();
  if (Buffer.isBuffer(value)) return `(${value.length} bytes)`;
  const record = value as Record<string, unknown>;
  const secretItem = typeof record.attribute === "string" && isSecretName(record.attribute);
  const masked: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(record)) {
    if (isSecretName(name) || (secretItem && name === "value")) masked[name] = maskValue(field);
    else masked[name] = maskSecrets(field);
  }
  return masked;
}
