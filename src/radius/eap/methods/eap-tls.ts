// EAP-TLS (RFC 5216; RFC 9190 for TLS 1.3): the client certificate is the credential. Once the
// handshake is done the certificate must chain to a trusted CA, name the EAP identity (as
// FreeRADIUS's check_cert_cn does), pass checkClientCertificate (revocation), and then the login
// is decided like any other login of that user ("proven by certificate").
import type { LoginOutcome } from "../../../core/aaa/service.ts";
import type { PresentedCertificate } from "../../../core/certs/presented.ts";
import { REFUSALS } from "../../../core/certs/rules.ts";
import { EapType } from "../packet.ts";
import type { MethodContext } from "./method.ts";
import { type InnerStep, TlsBasedMethod, type TunnelEvent } from "./tls-based.ts";

export class EapTlsMethod extends TlsBasedMethod {
  private accepted: LoginOutcome | undefined;

  constructor(context: MethodContext) {
    super(context, EapType.Tls, 0, true);
    this.identity = context.outerIdentity;
  }

  protected async inner(event: TunnelEvent): Promise<InnerStep> {
    const identity = this.context.outerIdentity;
    if (event.handshakeDone) {
      const tunnel = this.tunnel!;
      const chainError = tunnel.clientCertificateError();
      if (chainError)
        return { kind: "failure", reason: `client certificate not trusted: ${chainError}`, identity };
      // Read once for both checks below.
      let certificate: PresentedCertificate | undefined;
      try {
        certificate = tunnel.clientCertificate();
      } catch {
        return { kind: "failure", reason: `client certificate refused: ${REFUSALS.unreadable}`, identity };
      }
      if (!certificate) return { kind: "failure", reason: "no client certificate", identity };
      if (!certificate.names.includes(identity)) {
        return { kind: "failure", reason: REFUSALS.identity, identity };
      }
      const refusal = await this.context.checkClientCertificate(this.context.client, certificate, identity);
      if (refusal) return { kind: "failure", reason: `client certificate refused: ${refusal}`, identity };
      const outcome = await event.judge.decide(identity, { certificate: true });
      if (!outcome.result.accepted) {
        return { kind: "failure", reason: outcome.result.reason ?? "rejected", outcome, identity };
      }
      this.accepted = outcome;
      // RFC 9190 section 2.5: on TLS 1.3 one octet 0x00 of application data commits to success.
      if (this.tls13) return { kind: "send", plain: Buffer.of(0) };
      // TLS 1.2 full handshake: our Finished goes first; the peer's ACK of it ends the method.
      // A resumed one ended with the peer's Finished: success at once (RFC 5216 section 2.1.3).
      if (event.pending) return { kind: "send" };
      return { kind: "success", outcome, identity };
    }
    if (event.ack && this.accepted && event.data.length === 0) {
      return { kind: "success", outcome: this.accepted, identity };
    }
    return { kind: "failure", reason: "unexpected data after the EAP-TLS handshake", identity };
  }
}
