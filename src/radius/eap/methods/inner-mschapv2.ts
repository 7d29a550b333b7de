// EAP-MSCHAPv2 inside PEAP or EAP-TTLS (draft-kamath-pppext-eap-mschapv2-02 section 2, RFC 2759).
// Type-Data: OpCode, MS-CHAPv2-ID, MS-Length (octets from OpCode to the end), then per OpCode:
// 1 Challenge: Value-Size 16, the authenticator challenge, the server's name;
// 2 Response: Value-Size 49, Peer-Challenge(16) Reserved(8) NT-Response(24) Flags(1), the peer's name;
// 3 Success: the request carries "S=<authenticator response> M=<message>", the response only the OpCode.
// A wrong password ends the login at once (EAP-Failure), without the optional Failure round trip.
import { timingSafeEqual } from "node:crypto";
import type { LoginOutcome } from "../../../core/aaa/service.ts";
import { randomOctets } from "../../../core/shared/random-pool.ts";
import { generateAuthenticatorResponse, generateNtResponse } from "../../mschap/mschapv2.ts";
import { type EapPacket, EapType } from "../packet.ts";
import type { InnerEapMethod, InnerEapStep } from "./inner-eap.ts";
import type { LoginJudge } from "./method.ts";

const OP_CHALLENGE = 1;
const OP_RESPONSE = 2;
const OP_SUCCESS = 3;
const SERVER_NAME = Buffer.from("wisp", "ascii");

function message(opCode: number, id: number, body: Buffer): Buffer {
  const out = Buffer.alloc(4 + body.length);
  out[0] = opCode;
  out[1] = id;
  out.writeUInt16BE(out.length, 2);
  body.copy(out, 4);
  return out;
}

class InnerMsChapV2 implements InnerEapMethod {
  readonly type = EapType.MsChapV2;
  // From the shared pool: these two randomBytes() calls were 0.7 % of a PEAP profile (bench/eap.ts).
  private readonly challenge = randomOctets(16);
  private readonly id = randomOctets(1)[0]!;
  private phase: "challenge" | "success" = "challenge";
  private accepted: LoginOutcome | undefined;
  private identity = "";

  start(identity: string): Buffer {
    this.identity = identity;
    return message(OP_CHALLENGE, this.id, Buffer.concat([Buffer.of(16), this.challenge, SERVER_NAME]));
  }

  async handle(packet: EapPacket, judge: LoginJudge): Promise<InnerEapStep> {
    const data = packet.data;
    if (packet.type !== EapType.MsChapV2 || data.length < 1) {
      return { kind: "failure", reason: "EAP-MSCHAPv2 expected inside the tunnel" };
    }
    const opCode = data[0]!;
    if (this.phase === "success") {
      if (opCode !== OP_SUCCESS || !this.accepted) {
        return { kind: "failure", reason: "EAP-MSCHAPv2: the Success acknowledgement was expected" };
      }
      return { kind: "success", outcome: this.accepted };
    }
    // 4 header octets + Value-Size + 49-octet value.
    if (opCode !== OP_RESPONSE || data.length < 54 || data[4] !== 49) {
      return { kind: "failure", reason: "EAP-MSCHAPv2: a Response to the Challenge was expected" };
    }
    if (data[1] !== this.id) return { kind: "failure", reason: "EAP-MSCHAPv2: MS-CHAPv2-ID out of order" };
    const peerChallenge = Buffer.from(data.subarray(5, 21));
    const ntResponse = Buffer.from(data.subarray(29, 53));
    // RFC 2759 section 8.2 hashes the peer's user name: the Name it sent, else the inner identity.
    const name = data.length > 54 ? data.subarray(54).toString("utf8") : this.identity;
    let matched: Buffer | undefined;
    const verify = (ntPasswordHash: Buffer) => {
      const expected = generateNtResponse(this.challenge, peerChallenge, name, ntPasswordHash);
      if (!timingSafeEqual(expected, ntResponse)) return false;
      matched = ntPasswordHash;
      return true;
    };
    const outcome = await judge.decide(this.identity, { mschapv2: verify });
    if (!outcome.result.accepted) {
      return { kind: "failure", reason: outcome.result.reason ?? "rejected", outcome };
    }
    if (!matched) {
      // Auth-Type := Accept: no password was checked, so there is no authenticator response to
      // prove ours; EAP-MSCHAPv2 cannot complete without one.
      return {
        kind: "failure",
        reason: "EAP-MSCHAPv2 needs the user's password (Auth-Type Accept)",
        outcome,
      };
    }
    this.accepted = outcome;
    this.phase = "success";
    const proof = generateAuthenticatorResponse(matched, ntResponse, peerChallenge, this.challenge, name);
    return {
      kind: "request",
      type: EapType.MsChapV2,
      typeData: message(OP_SUCCESS, this.id, Buffer.from(`${proof} M=Authentication succeeded`, "ascii")),
    };
  }
}

export function createInnerMsChapV2(): InnerEapMethod {
  return new InnerMsChapV2();
}
