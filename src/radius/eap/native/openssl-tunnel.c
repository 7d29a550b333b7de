// EAP's TLS server connections straight on OpenSSL with memory BIOs, as FreeRADIUS's rlm_eap
// and hostapd's EAP server do them: the supplicant's reassembled records are written into one
// BIO, SSL_do_handshake / SSL_read / SSL_write run, and what TLS answers is read out of the other
// (OpenSSL's ssl(7), BIO_s_mem(3)). Node's TLSSocket does the same OpenSSL work behind a stream
// socket; over memory it costs a JS Duplex, a JSStreamSocket and their turns per round trip,
// which measured 0.2-0.3 ms of a 2.2 ms PEAP login (docs/benchmarks.md). No npm package exposes
// OpenSSL's memory BIOs, so this file does, through Node-API.
//
// OpenSSL is not linked here: node exports its own OpenSSL's symbols to addons (its headers come
// with node's, include/node/openssl), so this uses exactly the OpenSSL node's TLS uses.
// Everything runs on the calling thread; a connection is used by one thread at a time.
//
// The same addon also computes RADIUS's MD5 authenticators (the last section), which every
// packet of the UDP door needs, EAP or not.
#define NAPI_VERSION 8
#include <node_api.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                  \
  do {                                                               \
    if ((call) != napi_ok) {                                         \
      napi_throw_error(env, NULL, "eap-tls native: " #call);         \
      return NULL;                                                   \
    }                                                                \
  } while (0)

/** Application data read in one call is bounded by the records fed (one reassembled message). */
#define READ_CHUNK 16384

typedef struct {
  SSL *ssl;
  BIO *in;   /* records from the supplicant (owned by ssl) */
  BIO *out;  /* records for the supplicant (owned by ssl) */
} Connection;

/* --- helpers ---------------------------------------------------------------------------------- */

/** A string argument, NUL-terminated, malloc'd (freed by the caller); NULL for null/undefined. */
static char *string_arg(napi_env env, napi_value value) {
  napi_valuetype type;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_string) return NULL;
  size_t length = 0;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) return NULL;
  char *text = malloc(length + 1);
  if (!text) return NULL;
  napi_get_value_string_utf8(env, value, text, length + 1, &length);
  return text;
}

/** OpenSSL's reason for the last error on this thread ("unknown ca"), then the queue cleared. */
static const char *last_reason(const char *fallback) {
  unsigned long code = ERR_peek_last_error();
  const char *reason = code ? ERR_reason_error_string(code) : NULL;
  ERR_clear_error();
  return reason ? reason : fallback;
}

static napi_value make_buffer(napi_env env, const void *data, size_t length) {
  napi_value buffer;
  void *copy;
  if (napi_create_buffer_copy(env, length, data, &copy, &buffer) != napi_ok) return NULL;
  return buffer;
}

/** Everything TLS wrote for the supplicant since the last call. */
static napi_value take_output(napi_env env, Connection *c) {
  char *data;
  long length = BIO_get_mem_data(c->out, &data);
  napi_value buffer = make_buffer(env, data, length > 0 ? (size_t)length : 0);
  (void)BIO_reset(c->out);
  return buffer;
}

static Connection *connection_arg(napi_env env, napi_value value) {
  Connection *c = NULL;
  if (napi_get_value_external(env, value, (void **)&c) != napi_ok || !c || !c->ssl) {
    napi_throw_error(env, NULL, "closed or not a TLS connection");
    return NULL;
  }
  return c;
}

/** A call's connection (its first argument) and, when `data` is asked for, the Buffer after it. */
static Connection *connection_call(napi_env env, napi_callback_info info, void **data, size_t *length) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) {
    napi_throw_error(env, NULL, "eap-tls native: bad call");
    return NULL;
  }
  Connection *c = connection_arg(env, argv[0]);
  if (!c || !data) return c;
  if (napi_get_buffer_info(env, argv[1], data, length) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a Buffer");
    return NULL;
  }
  return c;
}

/* --- contexts --------------------------------------------------------------------------------- */

static void free_context(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  SSL_CTX_free((SSL_CTX *)data);
}

/** Reads every certificate of `pem`, handing each to `use` (which takes ownership); the count. */
static int each_certificate(const char *pem, SSL_CTX *ctx, int (*use)(SSL_CTX *, X509 *)) {
  BIO *bio = BIO_new_mem_buf(pem, -1);
  int count = 0;
  X509 *cert;
  while (bio && (cert = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
    if (!use(ctx, cert)) {
      BIO_free(bio);
      return -1;
    }
    count++;
  }
  BIO_free(bio);
  ERR_clear_error(); /* the end of the PEM text is reported as an error */
  return count;
}

static int use_leaf(SSL_CTX *ctx, X509 *cert) {
  int ok = SSL_CTX_use_certificate(ctx, cert);
  X509_free(cert);
  return ok;
}

static int use_chain(SSL_CTX *ctx, X509 *cert) {
  /* The first certificate is the server's own; the rest are sent as its chain. */
  if (SSL_CTX_get0_certificate(ctx) == NULL) return use_leaf(ctx, cert);
  return SSL_CTX_add0_chain_cert(ctx, cert); /* takes ownership */
}

static int use_ca(SSL_CTX *ctx, X509 *cert) {
  /* Trusted for client certificates, and named in the CertificateRequest (RFC 5246 7.4.4). */
  int ok = X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), cert) && SSL_CTX_add_client_CA(ctx, cert);
  X509_free(cert);
  return ok;
}

static int accept_any_chain(int preverify, X509_STORE_CTX *store) {
  /* The chain's verdict is read after the handshake (verifyError), so it can be recorded. */
  (void)preverify;
  (void)store;
  return 1;
}

/**
 * createContext(certificateChainPem, keyPem, caPem | null, sessionIdContext, tickets,
 * ticketKeys (80 octets: name, HMAC key, AES key), cipherList (TLS 1.2), cipherSuites (TLS 1.3))
 * -> context
 */
static napi_value create_context(napi_env env, napi_callback_info info) {
  size_t argc = 8;
  napi_value argv[8];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 8) {
    napi_throw_type_error(env, NULL, "createContext takes 8 arguments");
    return NULL;
  }
  char *chain = string_arg(env, argv[0]), *key = string_arg(env, argv[1]), *ca = string_arg(env, argv[2]);
  char *sid = string_arg(env, argv[3]), *ciphers = string_arg(env, argv[6]), *suites = string_arg(env, argv[7]);
  bool tickets = false;
  napi_get_value_bool(env, argv[4], &tickets);
  void *ticket_keys = NULL;
  size_t ticket_keys_length = 0;
  napi_get_buffer_info(env, argv[5], &ticket_keys, &ticket_keys_length);
  const char *error = NULL;
  SSL_CTX *ctx = NULL;
  if (!chain || !key || !sid || !ciphers || !suites || ticket_keys_length != 80) {
    error = "createContext: bad arguments";
    goto done;
  }
  ERR_clear_error();
  ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) {
    error = last_reason("SSL_CTX_new failed");
    goto done;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
  /* No renegotiation (a client could start handshakes at will), no compression (CRIME). */
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
  /*
   * No SSL_MODE_RELEASE_BUFFERS: with it OpenSSL frees a connection's 16 KiB read and write buffers
   * after every call and allocates them again at the next, four large malloc/free pairs per round
   * trip. A half-open PEAP conversation holds 58 KiB of RSS without it (48 KiB with it;
   * bench/eap-memory.ts), within the 64 KiB TLS_TUNNEL_BYTES charges.
   */
  /* Resumption by ticket only (EAP-TLS); no server-side session cache. */
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  if (tickets) {
    if (!SSL_CTX_set_tlsext_ticket_keys(ctx, ticket_keys, 80)) {
      error = last_reason("the ticket keys were refused");
      goto done;
    }
  } else {
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_num_tickets(ctx, 0); /* TLS 1.3 would otherwise still send (stateful) tickets */
  }
  if (!SSL_CTX_set_session_id_context(ctx, (const unsigned char *)sid, strlen(sid)) ||
      !SSL_CTX_set_cipher_list(ctx, ciphers) || !SSL_CTX_set_ciphersuites(ctx, suites)) {
    error = last_reason("bad session id context or ciphers");
    goto done;
  }
  if (each_certificate(chain, ctx, use_chain) < 1) {
    error = last_reason("no server certificate");
    goto done;
  }
  BIO *key_bio = BIO_new_mem_buf(key, -1);
  EVP_PKEY *pkey = key_bio ? PEM_read_bio_PrivateKey(key_bio, NULL, NULL, NULL) : NULL;
  BIO_free(key_bio);
  int key_ok = pkey && SSL_CTX_use_PrivateKey(ctx, pkey) && SSL_CTX_check_private_key(ctx);
  EVP_PKEY_free(pkey);
  if (!key_ok) {
    error = last_reason("the private key does not load or match the certificate");
    goto done;
  }
  if (ca && each_certificate(ca, ctx, use_ca) < 0) {
    error = last_reason("a CA certificate does not load");
    goto done;
  }
done:
  free(chain);
  free(key);
  free(ca);
  free(sid);
  free(ciphers);
  free(suites);
  if (error) {
    SSL_CTX_free(ctx);
    napi_throw_error(env, NULL, error);
    return NULL;
  }
  napi_value result;
  if (napi_create_external(env, ctx, free_context, NULL, &result) != napi_ok) {
    SSL_CTX_free(ctx);
    return NULL;
  }
  return result;
}

/* --- connections ------------------------------------------------------------------------------ */

static void free_connection(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  Connection *c = data;
  if (c->ssl) SSL_free(c->ssl); /* frees both BIOs */
  free(c);
}

/** open(context, requestClientCertificate) -> connection */
static napi_value open_connection(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  SSL_CTX *ctx = NULL;
  bool request_certificate = false;
  CHECK(napi_get_value_external(env, argv[0], (void **)&ctx));
  CHECK(napi_get_value_bool(env, argv[1], &request_certificate));
  Connection *c = calloc(1, sizeof(Connection));
  if (!c) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  ERR_clear_error();
  c->ssl = SSL_new(ctx);
  c->in = BIO_new(BIO_s_mem());
  c->out = BIO_new(BIO_s_mem());
  if (!c->ssl || !c->in || !c->out) {
    if (c->ssl) SSL_free(c->ssl);
    BIO_free(c->in);
    BIO_free(c->out);
    free(c);
    napi_throw_error(env, NULL, last_reason("SSL_new failed"));
    return NULL;
  }
  /* An empty memory BIO answers "retry later", not end of file: the next packet brings more. */
  BIO_set_mem_eof_return(c->in, -1);
  SSL_set_bio(c->ssl, c->in, c->out);
  SSL_set_accept_state(c->ssl);
  if (request_certificate) SSL_set_verify(c->ssl, SSL_VERIFY_PEER, accept_any_chain);
  napi_value result;
  if (napi_create_external(env, c, free_connection, NULL, &result) != napi_ok) {
    free_connection(env, c, NULL);
    return NULL;
  }
  return result;
}

/** SSL_read until TLS wants more records; appended to *data. 0, or -1 on a fatal error. */
static int read_application_data(SSL *ssl, char **data, size_t *length) {
  for (;;) {
    char *grown = realloc(*data, *length + READ_CHUNK);
    if (!grown) return -1;
    *data = grown;
    int n = SSL_read(ssl, *data + *length, READ_CHUNK);
    if (n > 0) {
      *length += (size_t)n;
      continue;
    }
    int reason = SSL_get_error(ssl, n);
    /* WANT_READ: all read. ZERO_RETURN: the peer's close_notify, nothing more to read. */
    return reason == SSL_ERROR_WANT_READ || reason == SSL_ERROR_ZERO_RETURN ? 0 : -1;
  }
}

/**
 * receive(connection, records) -> [records to send, application data, secure, failure | null].
 * Runs the handshake while it is not done, then reads what the records carry.
 */
static napi_value receive(napi_env env, napi_callback_info info) {
  void *records;
  size_t length;
  Connection *c = connection_call(env, info, &records, &length);
  if (!c) return NULL;
  ERR_clear_error();
  const char *failure = NULL;
  if (length > 0 && BIO_write(c->in, records, (int)length) != (int)length) failure = "out of memory";
  if (!failure && !SSL_is_init_finished(c->ssl)) {
    int r = SSL_do_handshake(c->ssl);
    int reason = r == 1 ? SSL_ERROR_NONE : SSL_get_error(c->ssl, r);
    if (reason != SSL_ERROR_NONE && reason != SSL_ERROR_WANT_READ && reason != SSL_ERROR_WANT_WRITE) {
      failure = last_reason("handshake failed");
    }
  }
  char *data = NULL;
  size_t data_length = 0;
  if (!failure && SSL_is_init_finished(c->ssl) && read_application_data(c->ssl, &data, &data_length) < 0) {
    failure = last_reason("bad TLS record");
  }
  ERR_clear_error();
  napi_value result, secure, reason_value;
  CHECK(napi_create_array_with_length(env, 4, &result));
  CHECK(napi_set_element(env, result, 0, take_output(env, c)));
  napi_value app = make_buffer(env, data, data_length);
  free(data);
  CHECK(napi_set_element(env, result, 1, app));
  CHECK(napi_get_boolean(env, SSL_is_init_finished(c->ssl), &secure));
  CHECK(napi_set_element(env, result, 2, secure));
  if (failure) CHECK(napi_create_string_utf8(env, failure, NAPI_AUTO_LENGTH, &reason_value));
  else CHECK(napi_get_null(env, &reason_value));
  CHECK(napi_set_element(env, result, 3, reason_value));
  return result;
}

/** send(connection, cleartext) -> records to send; throws OpenSSL's reason when it cannot. */
static napi_value send_data(napi_env env, napi_callback_info info) {
  void *plain;
  size_t length;
  Connection *c = connection_call(env, info, &plain, &length);
  if (!c) return NULL;
  ERR_clear_error();
  if (length > 0 && SSL_write(c->ssl, plain, (int)length) != (int)length) {
    napi_throw_error(env, NULL, last_reason("TLS write failed"));
    return NULL;
  }
  return take_output(env, c);
}

/** protocol(connection) -> "TLSv1.2" | "TLSv1.3" | null before the handshake. */
static napi_value protocol(napi_env env, napi_callback_info info) {
  napi_value result;
  Connection *c = connection_call(env, info, NULL, NULL);
  if (!c) return NULL;
  if (!SSL_is_init_finished(c->ssl)) CHECK(napi_get_null(env, &result));
  else CHECK(napi_create_string_utf8(env, SSL_get_version(c->ssl), NAPI_AUTO_LENGTH, &result));
  return result;
}

/** resumed(connection) -> whether the handshake resumed a session (a ticket). */
static napi_value resumed(napi_env env, napi_callback_info info) {
  napi_value result;
  Connection *c = connection_call(env, info, NULL, NULL);
  if (!c) return NULL;
  CHECK(napi_get_boolean(env, SSL_session_reused(c->ssl) == 1, &result));
  return result;
}

/**
 * exportKeyingMaterial(connection, length, label, context | null) -> octets: RFC 5705's exporter
 * (RFC 8446 section 7.5 on TLS 1.3); without a context, TLS 1.2's PRF over the randoms alone.
 */
static napi_value export_keying_material(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  Connection *c = connection_arg(env, argv[0]);
  if (!c) return NULL;
  uint32_t length;
  CHECK(napi_get_value_uint32(env, argv[1], &length));
  char *label = string_arg(env, argv[2]);
  void *context = NULL;
  size_t context_length = 0;
  bool has_context = false;
  napi_is_buffer(env, argv[3], &has_context);
  if (has_context) napi_get_buffer_info(env, argv[3], &context, &context_length);
  unsigned char *out = malloc(length ? length : 1);
  int ok = label && out &&
           SSL_export_keying_material(c->ssl, out, length, label, strlen(label), context, context_length,
                                      has_context) == 1;
  free(label);
  napi_value result = ok ? make_buffer(env, out, length) : NULL;
  free(out);
  if (!ok) napi_throw_error(env, NULL, last_reason("keying material export failed"));
  return result;
}

/** peerCertificate(connection) -> the client certificate's DER, or null. */
static napi_value peer_certificate(napi_env env, napi_callback_info info) {
  napi_value result;
  Connection *c = connection_call(env, info, NULL, NULL);
  if (!c) return NULL;
  X509 *cert = SSL_get1_peer_certificate(c->ssl);
  unsigned char *der = NULL;
  int length = cert ? i2d_X509(cert, &der) : -1;
  X509_free(cert);
  if (length < 0) {
    ERR_clear_error();
    CHECK(napi_get_null(env, &result));
    return result;
  }
  result = make_buffer(env, der, (size_t)length);
  OPENSSL_free(der);
  return result;
}

/** A UTF-8 string value, or null when the text cannot be made. */
static napi_value utf8_value(napi_env env, const unsigned char *text, int length) {
  napi_value value;
  if (length < 0 || napi_create_string_utf8(env, (const char *)text, (size_t)length, &value) != napi_ok) {
    napi_get_null(env, &value);
  }
  return value;
}

/** Milliseconds since the epoch of an ASN1_TIME (UTCTime or GeneralizedTime), or NaN. */
static double time_ms(const ASN1_TIME *time) {
  int days = 0, seconds = 0;
  ASN1_TIME *epoch = ASN1_TIME_set(NULL, 0);
  int ok = epoch && time && ASN1_TIME_diff(&days, &seconds, epoch, time);
  ASN1_TIME_free(epoch);
  return ok ? ((double)days * 86400.0 + seconds) * 1000.0 : 0.0 / 0.0;
}

/**
 * peerCertificateFacts(connection) -> [der, serialHex, notBeforeMs, notAfterMs, firstCommonName,
 * names] or null without a client certificate. Read from the certificate OpenSSL parsed during the
 * handshake: building node's X509Certificate from its DER again cost about 97 µs per EAP-TLS login
 * here, most of it OpenSSL 3 decoding the public key, which none of these checks read. `names` are
 * the subject's CNs, then the subjectAltName's DNS names, email addresses and URIs, as UTF-8 text
 * (node writes them RFC 2253-escaped; the two agree for names without , + " \\ < > ; =).
 */
static napi_value peer_certificate_facts(napi_env env, napi_callback_info info) {
  napi_value result, names, value;
  Connection *c = connection_call(env, info, NULL, NULL);
  if (!c) return NULL;
  X509 *cert = SSL_get1_peer_certificate(c->ssl);
  unsigned char *der = NULL;
  int der_length = cert ? i2d_X509(cert, &der) : -1;
  if (der_length < 0) {
    X509_free(cert);
    ERR_clear_error();
    CHECK(napi_get_null(env, &result));
    return result;
  }
  CHECK(napi_create_array_with_length(env, 6, &result));
  value = make_buffer(env, der, (size_t)der_length);
  OPENSSL_free(der);
  if (!value) {
    X509_free(cert);
    return NULL;
  }
  CHECK(napi_set_element(env, result, 0, value));
  BIGNUM *serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), NULL);
  char *serial_hex = serial ? BN_bn2hex(serial) : NULL;
  BN_free(serial);
  if (serial_hex) CHECK(napi_create_string_utf8(env, serial_hex, NAPI_AUTO_LENGTH, &value));
  else CHECK(napi_get_null(env, &value));
  OPENSSL_free(serial_hex);
  CHECK(napi_set_element(env, result, 1, value));
  CHECK(napi_create_double(env, time_ms(X509_get0_notBefore(cert)), &value));
  CHECK(napi_set_element(env, result, 2, value));
  CHECK(napi_create_double(env, time_ms(X509_get0_notAfter(cert)), &value));
  CHECK(napi_set_element(env, result, 3, value));
  CHECK(napi_create_array(env, &names));
  uint32_t count = 0;
  napi_value first;
  CHECK(napi_get_null(env, &first));
  const X509_NAME *subject = X509_get_subject_name(cert);
  for (int at = -1; (at = X509_NAME_get_index_by_NID(subject, NID_commonName, at)) >= 0;) {
    unsigned char *text = NULL;
    int length = ASN1_STRING_to_UTF8(&text, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at)));
    value = utf8_value(env, text, length);
    OPENSSL_free(text);
    if (count == 0) first = value;
    CHECK(napi_set_element(env, names, count++, value));
  }
  GENERAL_NAMES *alt = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
  for (int i = 0; alt && i < sk_GENERAL_NAME_num(alt); i++) {
    const GENERAL_NAME *name = sk_GENERAL_NAME_value(alt, i);
    if (name->type != GEN_DNS && name->type != GEN_EMAIL && name->type != GEN_URI) continue;
    const ASN1_IA5STRING *text = name->d.ia5;
    CHECK(napi_set_element(env, names, count++, utf8_value(env, ASN1_STRING_get0_data(text), ASN1_STRING_length(text))));
  }
  GENERAL_NAMES_free(alt);
  X509_free(cert);
  ERR_clear_error();
  CHECK(napi_set_element(env, result, 4, first));
  CHECK(napi_set_element(env, result, 5, names));
  return result;
}

/** The names node gives X509_V_ERR codes (its crypto_common.cc), so both engines say the same. */
static const char *verify_error_name(long code) {
#define NAMED(name) \
  case X509_V_ERR_##name: return #name;
  switch (code) {
    NAMED(UNABLE_TO_GET_ISSUER_CERT)
    NAMED(UNABLE_TO_GET_CRL)
    NAMED(UNABLE_TO_DECRYPT_CERT_SIGNATURE)
    NAMED(UNABLE_TO_DECRYPT_CRL_SIGNATURE)
    NAMED(UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY)
    NAMED(CERT_SIGNATURE_FAILURE)
    NAMED(CRL_SIGNATURE_FAILURE)
    NAMED(CERT_NOT_YET_VALID)
    NAMED(CERT_HAS_EXPIRED)
    NAMED(CRL_NOT_YET_VALID)
    NAMED(CRL_HAS_EXPIRED)
    NAMED(ERROR_IN_CERT_NOT_BEFORE_FIELD)
    NAMED(ERROR_IN_CERT_NOT_AFTER_FIELD)
    NAMED(ERROR_IN_CRL_LAST_UPDATE_FIELD)
    NAMED(ERROR_IN_CRL_NEXT_UPDATE_FIELD)
    NAMED(OUT_OF_MEM)
    NAMED(DEPTH_ZERO_SELF_SIGNED_CERT)
    NAMED(SELF_SIGNED_CERT_IN_CHAIN)
    NAMED(UNABLE_TO_GET_ISSUER_CERT_LOCALLY)
    NAMED(UNABLE_TO_VERIFY_LEAF_SIGNATURE)
    NAMED(CERT_CHAIN_TOO_LONG)
    NAMED(CERT_REVOKED)
    NAMED(INVALID_CA)
    NAMED(PATH_LENGTH_EXCEEDED)
    NAMED(INVALID_PURPOSE)
    NAMED(CERT_UNTRUSTED)
    NAMED(CERT_REJECTED)
    NAMED(HOSTNAME_MISMATCH)
    default:
      return "UNSPECIFIED";
  }
#undef NAMED
}

/** verifyError(connection) -> why the client's chain does not verify, or null when it does. */
static napi_value verify_error(napi_env env, napi_callback_info info) {
  napi_value result;
  Connection *c = connection_call(env, info, NULL, NULL);
  if (!c) return NULL;
  long code = SSL_get_verify_result(c->ssl);
  if (code == X509_V_OK) CHECK(napi_get_null(env, &result));
  else CHECK(napi_create_string_utf8(env, verify_error_name(code), NAPI_AUTO_LENGTH, &result));
  return result;
}

/** close(connection): frees OpenSSL's state now rather than at garbage collection. */
static napi_value close_connection(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  Connection *c = NULL;
  if (napi_get_value_external(env, argv[0], (void **)&c) == napi_ok && c && c->ssl) {
    SSL_free(c->ssl);
    c->ssl = NULL;
  }
  return NULL;
}

/* --- RADIUS authenticators -------------------------------------------------------------------- */
/*
 * MD5 over a RADIUS packet as its authenticators take it: the Response Authenticator and the
 * Request Authenticator of accounting and CoA requests (RFC 2865 section 3, RFC 2866 section 3,
 * RFC 5176 section 3.5), and Message-Authenticator, HMAC-MD5 (RFC 3579 section 3.2, RFC 2104).
 * Through node's crypto.hash a digest cost a JS call, a copy of its parts into one buffer, OpenSSL
 * 3's lookup of MD5 by name at every EVP_Digest (an implicit fetch) and a string back: about
 * 9,000 instructions (callgrind) for a 1 KB packet whose MD5 blocks take 8,000. MD5 is fetched
 * once here, and a packet's parts are hashed where they lie. src/radius/packet/crypto.ts falls
 * back to crypto.hash when the addon is not built.
 */
static EVP_MD *md5_method = NULL;
static _Thread_local EVP_MD_CTX *md5_context = NULL;
static const unsigned char ZERO16[16] = {0};

/** MD5 fetched once per process (a fetched method may be shared by threads). */
static const EVP_MD *md5(void) {
  EVP_MD *method = __atomic_load_n(&md5_method, __ATOMIC_ACQUIRE);
  if (method) return method;
  method = EVP_MD_fetch(NULL, "MD5", NULL);
  if (!method) return NULL;
  EVP_MD *expected = NULL;
  if (!__atomic_compare_exchange_n(&md5_method, &expected, method, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    EVP_MD_free(method);
    return expected;
  }
  return method;
}

/** This thread's digest context, started for MD5; NULL when OpenSSL cannot. */
static EVP_MD_CTX *md5_start(void) {
  const EVP_MD *method = md5();
  if (!method) return NULL;
  if (!md5_context) md5_context = EVP_MD_CTX_new();
  if (!md5_context || !EVP_DigestInit_ex2(md5_context, method, NULL)) return NULL;
  return md5_context;
}

/** A Buffer argument of exactly `want` octets (any length when want is 0). */
static unsigned char *bytes_arg(napi_env env, napi_value value, size_t want, size_t *length) {
  void *data = NULL;
  size_t size = 0;
  if (napi_get_buffer_info(env, value, &data, &size) != napi_ok) return NULL;
  if (want && size != want) return NULL;
  if (length) *length = size;
  return data ? data : (unsigned char *)ZERO16; /* an empty Buffer may have no memory */
}

static int int_arg(napi_env env, napi_value value, int32_t *out) {
  return napi_get_value_int32(env, value, out) == napi_ok;
}

/**
 * radiusHmac(out, at, ipad, opad, packet, length, maAt, authenticator): HMAC-MD5 of
 * packet[0, length) with `authenticator` in the Authenticator field and, when maAt >= 0, the
 * Message-Authenticator attribute at maAt holding 16 zeros; written to out[at, at + 16).
 * ipad and opad are the key's 64-octet pads. `out` may be the packet itself.
 */
static napi_value radius_hmac(napi_env env, napi_callback_info info) {
  size_t argc = 8;
  napi_value argv[8];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  size_t out_length = 0, packet_length = 0;
  int32_t at = -1, length = -1, ma_at = -2;
  unsigned char *out = argc == 8 ? bytes_arg(env, argv[0], 0, &out_length) : NULL;
  unsigned char *ipad = out ? bytes_arg(env, argv[2], 64, NULL) : NULL;
  unsigned char *opad = ipad ? bytes_arg(env, argv[3], 64, NULL) : NULL;
  unsigned char *packet = opad ? bytes_arg(env, argv[4], 0, &packet_length) : NULL;
  unsigned char *auth = packet ? bytes_arg(env, argv[7], 16, NULL) : NULL;
  if (!auth || !int_arg(env, argv[1], &at) || !int_arg(env, argv[5], &length) || !int_arg(env, argv[6], &ma_at) ||
      at < 0 || (size_t)at + 16 > out_length || length < 20 || (size_t)length > packet_length ||
      (ma_at != -1 && (ma_at < 20 || ma_at + 18 > length))) {
    napi_throw_type_error(env, NULL, "radiusHmac: bad arguments");
    return NULL;
  }
  unsigned char inner[16];
  EVP_MD_CTX *ctx = md5_start();
  int ok = ctx && EVP_DigestUpdate(ctx, ipad, 64) && EVP_DigestUpdate(ctx, packet, 4) &&
           EVP_DigestUpdate(ctx, auth, 16);
  if (ok && ma_at < 0) ok = EVP_DigestUpdate(ctx, packet + 20, (size_t)length - 20);
  else if (ok) {
    ok = EVP_DigestUpdate(ctx, packet + 20, (size_t)ma_at + 2 - 20) && EVP_DigestUpdate(ctx, ZERO16, 16) &&
         EVP_DigestUpdate(ctx, packet + ma_at + 18, (size_t)(length - ma_at - 18));
  }
  ok = ok && EVP_DigestFinal_ex(ctx, inner, NULL) && (ctx = md5_start()) && EVP_DigestUpdate(ctx, opad, 64) &&
       EVP_DigestUpdate(ctx, inner, 16) && EVP_DigestFinal_ex(ctx, out + at, NULL);
  if (!ok) napi_throw_error(env, NULL, last_reason("MD5 failed"));
  return NULL;
}

/**
 * radiusDigest(out, at, packet, length, authenticator, secret): MD5(Code + Identifier + Length +
 * authenticator + packet[20, length) + secret), written to out[at, at + 16) (the packet's own
 * Authenticator field may be the target).
 */
static napi_value radius_digest(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  size_t out_length = 0, packet_length = 0, secret_length = 0;
  int32_t at = -1, length = -1;
  unsigned char *out = argc == 6 ? bytes_arg(env, argv[0], 0, &out_length) : NULL;
  unsigned char *packet = out ? bytes_arg(env, argv[2], 0, &packet_length) : NULL;
  unsigned char *auth = packet ? bytes_arg(env, argv[4], 16, NULL) : NULL;
  unsigned char *secret = auth ? bytes_arg(env, argv[5], 0, &secret_length) : NULL;
  if (!secret || !int_arg(env, argv[1], &at) || !int_arg(env, argv[3], &length) || at < 0 ||
      (size_t)at + 16 > out_length || length < 20 || (size_t)length > packet_length) {
    napi_throw_type_error(env, NULL, "radiusDigest: bad arguments");
    return NULL;
  }
  EVP_MD_CTX *ctx = md5_start();
  int ok = ctx && EVP_DigestUpdate(ctx, packet, 4) && EVP_DigestUpdate(ctx, auth, 16) &&
           EVP_DigestUpdate(ctx, packet + 20, (size_t)length - 20) &&
           EVP_DigestUpdate(ctx, secret, secret_length) && EVP_DigestFinal_ex(ctx, out + at, NULL);
  if (!ok) napi_throw_error(env, NULL, last_reason("MD5 failed"));
  return NULL;
}

/* --- MS-CHAP's DES ---------------------------------------------------------------------------- */
/*
 * ChallengeResponse of RFC 2759 section 8.5: an 8-octet challenge encrypted with DES under each of
 * three 7-octet keys (a password hash padded to 21 octets). OpenSSL 3 keeps single DES in its
 * legacy provider; DES-EDE3 with one key three times is the same cipher (E(K) D(K) E(K) = E(K)) and
 * is in the default provider. des.js, the fallback, cost about 45,000 instructions per login here.
 */
static EVP_CIPHER *des3_method = NULL;
static _Thread_local EVP_CIPHER_CTX *des3_context = NULL;

static const EVP_CIPHER *des3(void) {
  EVP_CIPHER *method = __atomic_load_n(&des3_method, __ATOMIC_ACQUIRE);
  if (method) return method;
  method = EVP_CIPHER_fetch(NULL, "DES-EDE3-ECB", NULL);
  if (!method) return NULL;
  EVP_CIPHER *expected = NULL;
  if (!__atomic_compare_exchange_n(&des3_method, &expected, method, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    EVP_CIPHER_free(method);
    return expected;
  }
  return method;
}

/** mschapChallengeResponse(out, challenge, keys): out[0, 24) = DES(challenge) under keys[0..7), [7..14), [14..21). */
static napi_value mschap_challenge_response(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  unsigned char *out = argc == 3 ? bytes_arg(env, argv[0], 24, NULL) : NULL;
  unsigned char *challenge = out ? bytes_arg(env, argv[1], 8, NULL) : NULL;
  unsigned char *keys = challenge ? bytes_arg(env, argv[2], 21, NULL) : NULL;
  if (!keys) {
    napi_throw_type_error(env, NULL, "mschapChallengeResponse: bad arguments");
    return NULL;
  }
  const EVP_CIPHER *method = des3();
  if (!des3_context) des3_context = EVP_CIPHER_CTX_new();
  int ok = method && des3_context;
  for (int i = 0; ok && i < 3; i++) {
    /* The 56 key bits, 7 to an octet in the high bits (RFC 2759 section 8.6); DES ignores the low bit. */
    const unsigned char *k = keys + 7 * i;
    unsigned char key[24];
    key[0] = k[0];
    key[1] = (unsigned char)(k[0] << 7 | k[1] >> 1);
    key[2] = (unsigned char)(k[1] << 6 | k[2] >> 2);
    key[3] = (unsigned char)(k[2] << 5 | k[3] >> 3);
    key[4] = (unsigned char)(k[3] << 4 | k[4] >> 4);
    key[5] = (unsigned char)(k[4] << 3 | k[5] >> 5);
    key[6] = (unsigned char)(k[5] << 2 | k[6] >> 6);
    key[7] = (unsigned char)(k[6] << 1);
    memcpy(key + 8, key, 8);
    memcpy(key + 16, key, 8);
    int length = 0;
    ok = EVP_EncryptInit_ex2(des3_context, method, key, NULL, NULL) &&
         EVP_CIPHER_CTX_set_padding(des3_context, 0) &&
         EVP_EncryptUpdate(des3_context, out + 8 * i, &length, challenge, 8) && length == 8;
    OPENSSL_cleanse(key, sizeof key);
  }
  if (!ok) napi_throw_error(env, NULL, last_reason("DES failed"));
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"createContext", NULL, create_context, NULL, NULL, NULL, napi_enumerable, NULL},
      {"open", NULL, open_connection, NULL, NULL, NULL, napi_enumerable, NULL},
      {"receive", NULL, receive, NULL, NULL, NULL, napi_enumerable, NULL},
      {"send", NULL, send_data, NULL, NULL, NULL, napi_enumerable, NULL},
      {"protocol", NULL, protocol, NULL, NULL, NULL, napi_enumerable, NULL},
      {"resumed", NULL, resumed, NULL, NULL, NULL, napi_enumerable, NULL},
      {"exportKeyingMaterial", NULL, export_keying_material, NULL, NULL, NULL, napi_enumerable, NULL},
      {"peerCertificate", NULL, peer_certificate, NULL, NULL, NULL, napi_enumerable, NULL},
      {"peerCertificateFacts", NULL, peer_certificate_facts, NULL, NULL, NULL, napi_enumerable, NULL},
      {"verifyError", NULL, verify_error, NULL, NULL, NULL, napi_enumerable, NULL},
      {"close", NULL, close_connection, NULL, NULL, NULL, napi_enumerable, NULL},
      {"radiusHmac", NULL, radius_hmac, NULL, NULL, NULL, napi_enumerable, NULL},
      {"radiusDigest", NULL, radius_digest, NULL, NULL, NULL, napi_enumerable, NULL},
      {"mschapChallengeResponse", NULL, mschap_challenge_response, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  if (napi_define_properties(env, exports, sizeof(functions) / sizeof(functions[0]), functions) != napi_ok) {
    return NULL;
  }
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
