// The part EAP-TLS, PEAP and EAP-TTLS share: the Start packet, fragments both ways with their
// ACKs (RFC 5216 section 2.1.5), the TLS handshake in a TlsTunnel, then the tunnel's application
// data handed to the method (`inner`). The MSK comes from the tunnel (./keys.ts).

import type { LoginOutcome } from "../../../core/aaa/service.ts";
import { Flags, FragmentError, Fragmenter, parseFragment, Reassembler } from "../fragments.ts";
import { TLS_TUNNEL_BYTES, type Tunnel } from "../tunnel.ts";
import { type EapMethod, failure, type LoginJudge, type MethodContext, type MethodStep } from "./method.ts";

export interface TunnelEvent {
  /** This packet completed the TLS handshake. */
  handshakeDone: boolean;
  /** The supplicant sent an empty packet (an ACK of our last flight). */
  ack: boolean;
  /** Decrypted application data (inner method packets). */
  data: Buffer;
  /** TLS has records to send (our Finished, session tickets) whatever the method adds. */
  pending: boolean;
  judge: LoginJudge;
}

export type InnerStep =
  /** Send what TLS has pending plus, encrypted, `plain` (nothing more: an empty request). */
  | { kind: "send"; plain?: Buffer }
  | { kind: "success"; outcome: LoginOutcome; identity: string }
  | { kind: "failure"; reason: string; outcome?: LoginOutcome; identity?: string };

export abstract class TlsBasedMethod implements EapMethod {
  protected tunnel: Tunnel | undefined;
  private readonly reassembler = new Reassembler();
  private readonly fragmenter: Fragmenter;
  identity: string | undefined;

  constructor(
    protected readonly context: MethodContext,
    /** EAP Type (13, 21, 25): the TLS 1.3 exporter context. */
    private readonly type: number,
    /** Version bits of the Flags octet (PEAPv0, TTLSv0: 0). */
    private readonly version: number,
    private readonly requestClientCertificate: boolean,
  ) {
    this.fragmenter = new Fragmenter(context.fragmentSize);
  }

  /** What the method does with the tunnel once the handshake is done. */
  protected abstract inner(event: TunnelEvent): Promise<InnerStep>;

  start(): Buffer {
    return Buffer.of(Flags.Start | this.version);
  }

  protected get tls13(): boolean {
    return this.tunnel?.protocol === "TLSv1.3";
  }

  async handle(typeData: Buffer, judge: LoginJudge): Promise<MethodStep> {
    let fragment: ReturnType<typeof parseFragment>;
    let whole: Buffer | undefined;
    try {
      fragment = parseFragment(typeData);
      if (this.fragmenter.pending) {
        // RFC 5216 section 2.1.5: while we send fragments, the peer only acknowledges them.
        if (fragment.data.length > 0 || fragment.flags & Flags.More) {
          return failure("the supplicant sent data instead of acknowledging a fragment");
        }
        return this.request(this.fragmenter.next(this.version));
      }
      whole = this.reassembler.add(fragment);
    } catch (error) {
      if (error instanceof FragmentError) return failure(`bad TLS fragment: ${error.message}`);
      throw error;
    }
    // More fragments to come: acknowledge this one (an empty request).
    if (whole === undefined) return this.request(Buffer.of(this.version));

    let pending: Buffer = Buffer.alloc(0);
    let handshakeDone = false;
    if (whole.length > 0) {
      this.tunnel ??= this.context.openTunnel(this.requestClientCertificate);
      const before = this.tunnel.secure;
      const answer = this.tunnel.receive(whole);
      pending = answer instanceof Promise ? await answer : answer;
      if (this.tunnel.failure) return failure(`TLS: ${this.tunnel.failure}`);
      handshakeDone = !before && this.tunnel.secure;
      if (!this.tunnel.secure) {
        if (pending.length === 0) return failure("TLS had no answer to the supplicant's data");
        return this.sendRecords(pending);
      }
    } else if (!this.tunnel?.secure) {
      return failure("an empty packet where the TLS handshake was expected");
    }
    const step = await this.inner({
      handshakeDone,
      ack: whole.length === 0,
      data: this.tunnel!.takeApplicationData(),
      pending: pending.length > 0,
      judge,
    });
    if (step.kind === "failure") return failure(step.reason, step.outcome, step.identity);
    if (step.kind === "success") {
      return {
        kind: "success",
        outcome: step.outcome,
        msk: this.tunnel!.masterSessionKey(this.type),
        identity: step.identity,
      };
    }
    if (step.plain) {
      const sealed = this.tunnel!.send(step.plain);
      pending = Buffer.concat([pending, sealed instanceof Promise ? await sealed : sealed]);
    }
    if (this.tunnel!.failure) return failure(`TLS: ${this.tunnel!.failure}`);
    return this.sendRecords(pending);
  }

  private sendRecords(records: Buffer): MethodStep {
    if (records.length === 0) return this.request(Buffer.of(this.version));
    this.fragmenter.load(records);
    return this.request(this.fragmenter.next(this.version));
  }

  private request(typeData: Buffer): MethodStep {
    return { kind: "request", typeData };
  }

  heldBytes(): number {
    return (this.tunnel ? TLS_TUNNEL_BYTES : 0) + this.reassembler.heldBytes + this.fragmenter.heldBytes;
  }

  close(): void {
    this.tunnel?.destroy();
    this.tunnel = undefined;
    this.reassembler.reset();
  }
}
