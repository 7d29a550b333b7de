// Passkeys and security keys (W3C Web Authentication Level 3) through @simplewebauthn/server. The
// relying party is PUBLIC_URL: its host name is the RP ID (section 5.1.2), its origin the one
// clientDataJSON must name (section 7.1 step 9, 7.2 step 13). No attestation is asked for
// (attestation "none"): Wisp trusts the admin who registers the key, not the key's maker.
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import type { PasskeyRow } from "./factors-repo.ts";

/**
 * @simplewebauthn/server, loaded with the first passkey page or sign-in rather than at start: with
 * the attestation formats' certificate code it brings (@peculiar/x509, asn1js, tsyringe) it is about
 * 0.9 MB of code, a few MB of a server's idle memory that most consoles never use (bench/startup.ts).
 */
const library = () => import("@simplewebauthn/server");

export type { AuthenticationResponseJSON, RegistrationResponseJSON };
export type CreationOptions = PublicKeyCredentialCreationOptionsJSON;
export type RequestOptions = PublicKeyCredentialRequestOptionsJSON;

/** How long the browser may take (section 5.4 timeout), in ms. */
const TIMEOUT_MS = 120_000;

export interface RelyingParty {
  id: string;
  origin: string;
}

export function relyingParty(publicUrl: string): RelyingParty {
  const url = new URL(publicUrl);
  return { id: url.hostname, origin: url.origin };
}

const transportsOf = (row: PasskeyRow): string[] => JSON.parse(row.transports) as string[];

/**
 * Options for navigator.credentials.create. A discoverable credential is preferred (section
 * 5.4.6 residentKey), so the key can sign in alone later; the admin's other keys are excluded.
 */
export async function registrationOptions(
  rp: RelyingParty,
  user: { handle: string; email: string },
  existing: PasskeyRow[],
): Promise<CreationOptions> {
  const { generateRegistrationOptions } = await library();
  return generateRegistrationOptions({
    rpName: "Wisp console",
    rpID: rp.id,
    userName: user.email,
    userID: Buffer.from(user.handle, "base64url"),
    attestationType: "none",
    timeout: TIMEOUT_MS,
    excludeCredentials: existing.map((row) => ({ id: row.credential_id, transports: transportsOf(row) })),
    authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" },
  });
}

export interface NewCredential {
  id: string;
  publicKey: string;
  counter: number;
  transports: string[];
  backedUp: boolean;
}

/** Checks a registration against the challenge given; null when it does not verify. */
export async function verifyRegistration(
  rp: RelyingParty,
  response: RegistrationResponseJSON,
  challenge: string,
): Promise<NewCredential | null> {
  const { verifyRegistrationResponse } = await library();
  const result = await verifyRegistrationResponse({
    response,
    expectedChallenge: challenge,
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    requireUserVerification: false,
  });
  if (!result.verified) return null;
  const { credential, credentialBackedUp } = result.registrationInfo;
  return {
    id: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString("base64url"),
    counter: credential.counter,
    transports: credential.transports ?? [],
    backedUp: credentialBackedUp,
  };
}

/**
 * Options for navigator.credentials.get: the admin's own keys as a second factor, or none listed
 * for a passkey sign-in (the authenticator offers its discoverable credentials for this RP ID), where
 * user verification is required: the passkey alone then stands for two factors.
 */
export async function authenticationOptions(
  rp: RelyingParty,
  keys: PasskeyRow[] | null,
): Promise<RequestOptions> {
  const { generateAuthenticationOptions } = await library();
  return generateAuthenticationOptions({
    rpID: rp.id,
    timeout: TIMEOUT_MS,
    allowCredentials: keys?.map((row) => ({ id: row.credential_id, transports: transportsOf(row) })) ?? [],
    userVerification: keys ? "preferred" : "required",
  });
}

/** Checks an assertion by `row`'s public key; the new signature counter, or null. */
export async function verifyAssertion(
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  challenge: string,
  row: PasskeyRow,
  requireUserVerification: boolean,
): Promise<number | null> {
  const { verifyAuthenticationResponse } = await library();
  const result = await verifyAuthenticationResponse({
    response,
    expectedChallenge: challenge,
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    requireUserVerification,
    credential: {
      id: row.credential_id,
      publicKey: Buffer.from(row.public_key, "base64url"),
      counter: row.counter,
      transports: transportsOf(row),
    },
  });
  return result.verified ? result.authenticationInfo.newCounter : null;
}
