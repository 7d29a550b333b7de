// Why a RadSec handshake was refused, as a bounded label for the metrics (the log line carries the
// full reason): from Node's TLS error codes, OpenSSL's verification results and the core's refusals.

export type RefusalLabel =
  | "no_certificate"
  | "untrusted"
  | "expired"
  | "not_yet_valid"
  | "revoked"
  | "unknown_network"
  | "tls_version"
  | "alpn"
  | "handshake_timeout"
  | "tls_error";

const BY_CODE: Record<string, RefusalLabel> = {
  NO_CERTIFICATE: "no_certificate",
  ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE: "no_certificate",
  CERT_HAS_EXPIRED: "expired",
  CERT_NOT_YET_VALID: "not_yet_valid",
  CERT_REVOKED: "revoked",
  UNABLE_TO_GET_ISSUER_CERT: "untrusted",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "untrusted",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "untrusted",
  SELF_SIGNED_CERT_IN_CHAIN: "untrusted",
  DEPTH_ZERO_SELF_SIGNED_CERT: "untrusted",
  CERT_SIGNATURE_FAILURE: "untrusted",
  INVALID_CA: "untrusted",
  INVALID_PURPOSE: "untrusted",
  CERT_UNTRUSTED: "untrusted",
  CERT_REJECTED: "untrusted",
  ERR_SSL_UNSUPPORTED_PROTOCOL: "tls_version",
  ERR_SSL_NO_PROTOCOLS_AVAILABLE: "tls_version",
  ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION: "tls_version",
  ERR_SSL_NO_APPLICATION_PROTOCOL: "alpn",
  ERR_TLS_HANDSHAKE_TIMEOUT: "handshake_timeout",
};

/** The label of a TLS-level failure (Node error or OpenSSL verification code). */
export function handshakeRefusal(error: { code?: string | undefined; message: string }): RefusalLabel {
  const code = error.code ?? "";
  if (BY_CODE[code]) return BY_CODE[code];
  if (/application protocol/i.test(error.message)) return "alpn";
  if (/unsupported protocol|version/i.test(error.message)) return "tls_version";
  return "tls_error";
}

/** The label of the core's refusal (src/core/radsec: revoked, expired, or no network matches). */
export function identityRefusal(reason: string): RefusalLabel {
  if (/revoked/i.test(reason)) return "revoked";
  if (/expired/i.test(reason)) return "expired";
  return "unknown_network";
}
