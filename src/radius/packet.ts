// RADIUS packet codec (RFC 2865/2866/2868/2869/3579/5176) that reads and writes packets the way
// FreeRADIUS 3.2 does: same structural checks, same raw fallbacks, same text forms for values.
// A door: it translates bytes <-> attribute lists and checks authenticators; it decides nothing.
//
// Decisions (FreeRADIUS 3.2's src/lib/radius.c is the reference):
// - decodePacket throws RadiusDecodeError only for what rad_packet_ok() drops: bad sizes, unknown
//   code, attribute 0, attribute lengths < 2 or overrunning, Message-Authenticator not 18 octets,
//   Status-Server or EAP-Message without Message-Authenticator, EAP-Message with a password
//   attribute, more than maxAttributes (FreeRADIUS's stock max_attributes, 200).
// - Contents that do not parse never fail the packet: like data2vp(), a malformed Vendor-Specific
//   becomes the raw attribute "Attr-26", a value of the wrong size becomes "Attr-<n>" (or
//   "Attr-26.<vendor>.<n>") with octets. Zero-length attributes are dropped (except
//   Chargeable-User-Identity). Consecutive `concat` attributes (EAP-Message) are joined.
// - String text form: the text itself when it is valid UTF-8 without control characters (one
//   trailing NUL dropped, as FreeRADIUS never prints it); otherwise the escaped form radclient
//   prints between its quotes (\" \\ \r \n \t, \ooo for other bytes). `raw` always has the bytes.
// - TLV, extended (241-246) and Ascend-filter values are kept as 0x hex under their dictionary
//   name: the dictionary does not index their children.
//
// RADIUS/1.1 (RFC 9765, ALPN "radius/1.1" on RadSec): decodePacket(buf, { radius11: true }) and
// encodePacket(packet, "", { radius11: { token } }) speak its header (Token + 12 reserved octets)
// with no MD5 anywhere: no authenticators, no hidden values, no Message-Authenticator
// (./packet/radius11.ts has the rest: tokenOf, tokenCounter, the ALPN names).
//
// The code lives in ./packet/; this module is its public face.

export {
  isResponseCode,
  PacketCode,
  packetCode,
  packetCodeName,
  type RadiusAttribute,
  RadiusDecodeError,
  RadiusEncodeError,
  type RadiusPacket,
} from "./packet/codes.ts";
export {
  chapPassword,
  computeMessageAuthenticator,
  decryptTunnelPassword,
  decryptUserPassword,
  encryptTunnelPassword,
  encryptUserPassword,
  hasMessageAuthenticator,
  verifyChap,
  verifyMessageAuthenticator,
  verifyRequestAuthenticator,
  verifyResponse,
} from "./packet/crypto.ts";
export { DEFAULT_MAX_ATTRIBUTES, type DecodeOptions, decodePacket, getAttribute } from "./packet/decode.ts";
export {
  type AttributeInput,
  type AttributeValue,
  type EncodeOptions,
  encodePacket,
  type PacketInput,
} from "./packet/encode.ts";
export {
  ALPN_RADIUS_1_0,
  ALPN_RADIUS_1_1,
  TOKEN_LENGTH,
  tokenCounter,
  tokenOf,
} from "./packet/radius11.ts";
