// A client certificate, its key and the CA as one password-protected PKCS#12 file (RFC 7292), the
// form Windows, macOS, iOS, Android and wpa_supplicant (private_key="x.p12") import. Built with
// pkijs; the algorithms are OpenSSL 3's defaults, which every one of those reads: PBES2 with PBKDF2-
// HMAC-SHA256 and AES-256-CBC (RFC 8018 section 6.2) for the key and the certificates, and an
// HMAC-SHA256 MAC over the whole (RFC 7292 appendix B.2 key derivation, BMPString password).
import { createHash, webcrypto } from "node:crypto";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";

pkijs.setEngine("node", new pkijs.CryptoEngine({ name: "node", crypto: webcrypto as unknown as Crypto }));

/** RFC 7292 section 4.2 bag types and PKCS #9 attributes (RFC 2985 section 5.5.1, 5.5.2). */
const SHROUDED_KEY_BAG = "1.2.840.113549.1.12.10.1.2";
const CERT_BAG = "1.2.840.113549.1.12.10.1.3";
const FRIENDLY_NAME = "1.2.840.113549.1.9.20";
const LOCAL_KEY_ID = "1.2.840.113549.1.9.21";

/**
 * PBKDF2 and MAC iterations: five times OpenSSL's default of 2048. The MAC's key derivation runs in
 * JavaScript (pkijs), about 15 ms per thousand here, so 10,000 keeps issuing near 0.3 s. Guessing
 * the password offline costs the same through the MAC as through the key, so both use one count.
 */
export const PKCS12_ITERATIONS = 10_000;

export interface Pkcs12Content {
  /** The client certificate, DER. */
  certDer: Buffer;
  /** Its private key, PKCS#8 DER. */
  keyDer: Buffer;
  /** CA certificates the client may import to check the server, DER. */
  caDers: Buffer[];
  /** Shown by the importing system (friendlyName). */
  name: string;
  password: string;
}

function certBag(der: Buffer, attributes?: pkijs.Attribute[]): pkijs.SafeBag {
  return new pkijs.SafeBag({
    bagId: CERT_BAG,
    bagValue: new pkijs.CertBag({ parsedValue: pkijs.Certificate.fromBER(new Uint8Array(der)) }),
    ...(attributes ? { bagAttributes: attributes } : {}),
  });
}

export async function buildPkcs12(content: Pkcs12Content): Promise<Buffer> {
  const password = new TextEncoder().encode(content.password).buffer as ArrayBuffer;
  // localKeyID ties the key to its certificate (OpenSSL's PKCS12_parse matches them by it).
  const keyId = createHash("sha1").update(content.certDer).digest();
  const attributes = () => [
    new pkijs.Attribute({ type: LOCAL_KEY_ID, values: [new asn1js.OctetString({ valueHex: keyId })] }),
    new pkijs.Attribute({ type: FRIENDLY_NAME, values: [new asn1js.BmpString({ value: content.name })] }),
  ];
  const keyBag = new pkijs.SafeBag({
    bagId: SHROUDED_KEY_BAG,
    bagValue: new pkijs.PKCS8ShroudedKeyBag({
      parsedValue: pkijs.PrivateKeyInfo.fromBER(new Uint8Array(content.keyDer)),
    }),
    bagAttributes: attributes(),
  });
  const encryption = {
    password,
    // pkijs draws the IV itself.
    contentEncryptionAlgorithm: { name: "AES-CBC", length: 256 } as pkijs.ContentEncryptionAlgorithm,
    hmacHashAlgorithm: "SHA-256",
    iterationCount: PKCS12_ITERATIONS,
  };
  const pfx = new pkijs.PFX({
    parsedValue: {
      integrityMode: 0, // password integrity (RFC 7292 section 4)
      authenticatedSafe: new pkijs.AuthenticatedSafe({
        parsedValue: {
          safeContents: [
            // The key bag is shrouded itself, so its SafeContents goes unencrypted (privacy mode 0).
            { privacyMode: 0, value: new pkijs.SafeContents({ safeBags: [keyBag] }) },
            {
              privacyMode: 1,
              value: new pkijs.SafeContents({
                safeBags: [
                  certBag(content.certDer, attributes()),
                  ...content.caDers.map((der) => certBag(der)),
                ],
              }),
            },
          ],
        },
      }),
    },
  });
  await (keyBag.bagValue as pkijs.PKCS8ShroudedKeyBag).makeInternalValues(encryption);
  await pfx.parsedValue!.authenticatedSafe!.makeInternalValues({ safeContents: [{}, encryption] });
  await pfx.makeInternalValues({
    password,
    iterations: PKCS12_ITERATIONS,
    pbkdf2HashAlgorithm: { name: "SHA-256" },
    hmacHashAlgorithm: "SHA-256",
  });
  return Buffer.from(pfx.toSchema().toBER(false));
}
