// Wisp's RadSec client CA: made once per deployment and kept in the database like the EAP CA
// (core/certs/authority.ts), its key sealed at rest, but a separate CA with its own key, so that no
// certificate issued for a user's EAP-TLS login can ever pass as a NAS, nor the other way round.
import { X509Certificate } from "node:crypto";
import { isoNow } from "../shared/time.ts";
import type { SecretBox } from "../webhooks/crypto.ts";
import type { RadsecRepo } from "./repo.ts";
import { RADSEC_AUTHORITY_DAYS, RADSEC_AUTHORITY_NAME } from "./rules.ts";

/** Certificate making, loaded when first needed (see core/certs/pem.ts). */
const making = () => import("../certs/x509.ts");

/** Authenticated with the sealed key, so a key copied from another column does not open. */
const CA_KEY = "radsec_authority:ca_key";

export interface LoadedRadsecAuthority {
  /** PEM. */
  pem: string;
  cert: X509Certificate;
}

export class RadsecAuthority {
  private loaded: Promise<LoadedRadsecAuthority> | undefined;

  constructor(
    private readonly repo: RadsecRepo,
    private readonly box: SecretBox,
    private readonly now: () => Date,
  ) {}

  /** The CA certificate, read (or made) once per process. */
  get(): Promise<LoadedRadsecAuthority> {
    this.loaded ??= this.load().catch((error) => {
      this.loaded = undefined; // a failure (database away) is retried by the next call
      throw error;
    });
    return this.loaded;
  }

  /** The CA's key, ready to sign a network certificate. */
  async signer() {
    const row = await this.repo.authority();
    if (!row) throw new Error("the RadSec CA row is missing");
    return (await making()).signerOf({ cert: row.ca_cert, key: this.box.open(row.ca_key, CA_KEY) });
  }

  /** Instances starting together each make one; the first insert wins and all read the winner. */
  private async load(): Promise<LoadedRadsecAuthority> {
    let row = await this.repo.authority();
    if (!row) {
      const now = this.now();
      const ca = await (await making()).createAuthority(RADSEC_AUTHORITY_NAME, RADSEC_AUTHORITY_DAYS, now);
      await this.repo.insertAuthorityIfAbsent({
        ca_cert: ca.cert,
        ca_key: this.box.seal(ca.key, CA_KEY),
        created: isoNow(now),
      });
      row = await this.repo.authority();
      if (!row) throw new Error("the RadSec CA row vanished after it was written");
    }
    return { pem: row.ca_cert, cert: new X509Certificate(row.ca_cert) };
  }
}
