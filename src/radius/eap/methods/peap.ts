// PEAPv0 as Windows and wpa_supplicant speak it ([MS-PEAP]; draft-kamath-pppext-peapv0): after
// the handshake the server asks the inner Identity, runs the inner EAP method (EAP-MSCHAPv2),
// then sends a Result TLV ([MS-PEAP] section 2.2.8.1) which the peer echoes; then EAP-Success.
// Inner packets go without their 4-octet EAP header ([MS-PEAP] section 3.1.5.4: "compressed"),
// except EAP-TLV (Extensions, type 33) packets, which keep it.

import type { LoginOutcome } from "../../../core/aaa/service.ts";
import { decodeEap, EapCode, EapFormatError, EapType, encodeEap } from "../packet.ts";
import type { InnerEapMethod } from "./inner-eap.ts";
import type { MethodContext } from "./method.ts";
import { type InnerStep, TlsBasedMethod, type TunnelEvent } from "./tls-based.ts";

/** Result TLV: type 3 with the mandatory bit (0x8000), length 2, status 1 success / 2 failure. */
const RESULT_TLV = 0x8003;
const RESULT_SUCCESS = 1;

type Phase = "handshake" | "finished-sent" | "identity" | "inner" | "result";

export class PeapMethod extends TlsBasedMethod {
  private phase: Phase = "handshake";
  private innerEap: InnerEapMethod | undefined;
  private accepted: LoginOutcome | undefined;
  private tlvIdentifier = 0;

  constructor(
    context: MethodContext,
    private readonly makeInnerEap: (() => InnerEapMethod) | undefined,
  ) {
    super(context, EapType.Peap, 0, false);
  }

  protected async inner(event: TunnelEvent): Promise<InnerStep> {
    const fail = (reason: string, outcome?: LoginOutcome): InnerStep => ({
      kind: "failure",
      reason,
      ...(outcome ? { outcome } : {}),
      ...(this.identity === undefined ? {} : { identity: this.identity }),
    });
    if (event.handshakeDone) {
      if (event.pending) {
        this.phase = "finished-sent";
        return { kind: "send" };
      }
      // A resumed handshake ended with the peer's Finished: phase 2 starts at once.
      this.phase = "identity";
      return { kind: "send", plain: Buffer.of(EapType.Identity) };
    }
    switch (this.phase) {
      case "finished-sent":
        if (!event.ack) return fail("PEAP: data where the ACK of the server's Finished was expected");
        this.phase = "identity";
        return { kind: "send", plain: Buffer.of(EapType.Identity) };
      case "identity": {
        const data = event.data;
        if (data.length < 1 || data[0] !== EapType.Identity)
          return fail("PEAP: the inner Identity was expected");
        this.identity = data.subarray(1).toString("utf8");
        if (!this.makeInnerEap) return fail("inner EAP-MSCHAPv2 is not available");
        this.innerEap = this.makeInnerEap();
        this.phase = "inner";
        return {
          kind: "send",
          plain: Buffer.concat([Buffer.of(this.innerEap.type), this.innerEap.start(this.identity)]),
        };
      }
      case "inner": {
        const data = event.data;
        if (data.length < 1 || data[0] !== this.innerEap!.type)
          return fail("PEAP: inner method packet out of order");
        const step = await this.innerEap!.handle(
          { code: EapCode.Response, identifier: 0, type: data[0], data: data.subarray(1) },
          event.judge,
        );
        if (step.kind === "request")
          return { kind: "send", plain: Buffer.concat([Buffer.of(step.type), step.typeData]) };
        if (step.kind === "failure") return fail(step.reason, step.outcome);
        this.accepted = step.outcome;
        this.phase = "result";
        this.tlvIdentifier = (this.tlvIdentifier + 1) & 0xff;
        const tlv = Buffer.alloc(6);
        tlv.writeUInt16BE(RESULT_TLV, 0);
        tlv.writeUInt16BE(2, 2);
        tlv.writeUInt16BE(RESULT_SUCCESS, 4);
        return {
          kind: "send",
          plain: encodeEap({
            code: EapCode.Request,
            identifier: this.tlvIdentifier,
            type: EapType.Tlv,
            data: tlv,
          }),
        };
      }
      case "result": {
        let packet: ReturnType<typeof decodeEap>;
        try {
          packet = decodeEap(event.data);
        } catch (error) {
          if (error instanceof EapFormatError) return fail(`PEAP Result TLV: ${error.message}`);
          throw error;
        }
        if (packet.code !== EapCode.Response || packet.type !== EapType.Tlv)
          return fail("PEAP: Result TLV expected");
        if (!resultIsSuccess(packet.data)) return fail("PEAP: the supplicant did not confirm success");
        return { kind: "success", outcome: this.accepted!, identity: this.identity! };
      }
      default:
        return fail("PEAP: unexpected packet");
    }
  }
}

function resultIsSuccess(tlvs: Buffer): boolean {
  for (let at = 0; at + 4 <= tlvs.length; ) {
    const type = tlvs.readUInt16BE(at) & 0x3fff;
    const length = tlvs.readUInt16BE(at + 2);
    if (at + 4 + length > tlvs.length) return false;
    if (type === (RESULT_TLV & 0x3fff) && length === 2) return tlvs.readUInt16BE(at + 4) === RESULT_SUCCESS;
    at += 4 + length;
  }
  return false;
}
