// An EAP method run inside a tunnel (PEAP phase 2, EAP-TTLS with EAP-Message AVPs).
import type { LoginOutcome } from "../../../core/aaa/service.ts";
import type { EapPacket } from "../packet.ts";
import type { LoginJudge } from "./method.ts";

export type InnerEapStep =
  | { kind: "request"; type: number; typeData: Buffer }
  | { kind: "success"; outcome: LoginOutcome }
  | { kind: "failure"; reason: string; outcome?: LoginOutcome };

export interface InnerEapMethod {
  readonly type: number;
  /** The first request's Type-Data, for the user `identity` (the inner EAP-Response/Identity). */
  start(identity: string): Buffer;
  /** A Response of this method (the whole packet, its header rebuilt for PEAPv0). */
  handle(packet: EapPacket, judge: LoginJudge): Promise<InnerEapStep>;
}
