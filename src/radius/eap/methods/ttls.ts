// EAP-TTLSv0 (RFC 5281): after the handshake the supplicant sends AVPs in the tunnel. Inner PAP:
// User-Name + User-Password (section 11.2.5, the password NUL-padded to 16 octets). Inner EAP:
// EAP-Message AVPs (section 11.1) carrying whole EAP packets, here EAP-MSCHAPv2. The outer
// identity may be anonymous; the inner User-Name is the user.
import { decodeEap, EapCode, EapFormatError, EapType, encodeEap } from "../packet.ts";
import { AvpCode, AvpError, encodeAvp, findAvp, parseAvps } from "./avp.ts";
import type { InnerEapMethod } from "./inner-eap.ts";
import type { MethodContext } from "./method.ts";
import { type InnerStep, TlsBasedMethod, type TunnelEvent } from "./tls-based.ts";

export class TtlsMethod extends TlsBasedMethod {
  private innerEap: InnerEapMethod | undefined;
  private innerIdentifier = 0;

  constructor(
    context: MethodContext,
    private readonly makeInnerEap: (() => InnerEapMethod) | undefined,
  ) {
    super(context, EapType.Ttls, 0, false);
  }

  protected async inner(event: TunnelEvent): Promise<InnerStep> {
    if (event.data.length === 0) {
      // Our Finished (or tickets) still to go, or nothing yet: the supplicant speaks next.
      if (event.handshakeDone || event.ack) return { kind: "send" };
      return { kind: "failure", reason: "empty EAP-TTLS data after the handshake" };
    }
    let avps: ReturnType<typeof parseAvps>;
    try {
      avps = parseAvps(event.data);
    } catch (error) {
      if (error instanceof AvpError) return { kind: "failure", reason: `EAP-TTLS: ${error.message}` };
      throw error;
    }
    const userName = findAvp(avps, AvpCode.UserName);
    if (userName && this.identity === undefined) this.identity = userName.toString("utf8");
    const password = findAvp(avps, AvpCode.UserPassword);
    if (password && !this.innerEap) {
      if (this.identity === undefined) return { kind: "failure", reason: "EAP-TTLS PAP without User-Name" };
      const identity = this.identity;
      // RFC 5281 section 11.2.5: padded with NULs to a multiple of 16 octets.
      let end = password.length;
      while (end > 0 && password[end - 1] === 0) end--;
      const outcome = await event.judge.decide(identity, { password: password.subarray(0, end) });
      if (!outcome.result.accepted) {
        return { kind: "failure", reason: outcome.result.reason ?? "rejected", outcome, identity };
      }
      return { kind: "success", outcome, identity };
    }
    const eap = avps.filter((a) => a.code === AvpCode.EapMessage && a.vendorId === undefined);
    if (eap.length > 0) return this.innerEapStep(Buffer.concat(eap.map((a) => a.data)), event);
    return { kind: "failure", reason: "EAP-TTLS: no credentials in the tunnel (PAP or EAP expected)" };
  }

  private async innerEapStep(bytes: Buffer, event: TunnelEvent): Promise<InnerStep> {
    let packet: ReturnType<typeof decodeEap>;
    try {
      packet = decodeEap(bytes);
    } catch (error) {
      if (error instanceof EapFormatError) return { kind: "failure", reason: `inner EAP: ${error.message}` };
      throw error;
    }
    if (packet.code !== EapCode.Response)
      return { kind: "failure", reason: "inner EAP packet is no Response" };
    if (!this.innerEap) {
      if (packet.type !== EapType.Identity) {
        return { kind: "failure", reason: "inner EAP must start with an Identity response" };
      }
      if (!this.makeInnerEap) return { kind: "failure", reason: "inner EAP-MSCHAPv2 is not available" };
      this.identity = packet.data.toString("utf8");
      this.innerEap = this.makeInnerEap();
      return this.sendInner(this.innerEap.start(this.identity));
    }
    if (packet.identifier !== this.innerIdentifier) {
      return { kind: "failure", reason: "inner EAP identifier out of order" };
    }
    const step = await this.innerEap.handle(packet, event.judge);
    if (step.kind === "request") return this.sendInner(step.typeData, step.type);
    return { ...step, identity: this.identity ?? "" };
  }

  private sendInner(typeData: Buffer, type: number = EapType.MsChapV2): InnerStep {
    this.innerIdentifier = (this.innerIdentifier + 1) & 0xff;
    const packet = encodeEap({
      code: EapCode.Request,
      identifier: this.innerIdentifier,
      type,
      data: typeData,
    });
    return { kind: "send", plain: encodeAvp(AvpCode.EapMessage, packet) };
  }
}
