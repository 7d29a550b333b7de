// The RADIUS side of EAP (RFC 3579): an Access-Request carrying EAP-Message goes to the EAP
// engine; its answer becomes an Access-Challenge (EAP-Message + State, section 2.6.1), an
// Access-Accept (EAP-Success, the core's reply items, MS-MPPE keys per RFC 2548 section 2.4) or
// an Access-Reject (EAP-Failure). Message-Authenticator is on every answer (section 3.2), and was
// required on the request by the codec. The login decision and its record go through the AAA
// service, as for PAP and CHAP; one radpostauth row per EAP login, written when it ends.
import type { Pair } from "../core/aaa/pairs.ts";
import type { AaaService, LoginOutcome } from "../core/aaa/service.ts";
import type { RadiusClient } from "../core/networks/service.ts";
import type { EapAnswer, EapEngine } from "./eap/engine.ts";
import { mppeKeys } from "./eap/keys.ts";
import { eapFailure } from "./eap/packet.ts";
import type { EapMethodName } from "./eap/types.ts";
import { type AttributeInput, PacketCode, type RadiusPacket } from "./packet.ts";

export interface EapDoorInput {
  engine: EapEngine | undefined;
  aaa: AaaService;
  client: RadiusClient;
  packet: RadiusPacket;
  /** The request's pairs, made only when a login is decided or recorded (not every round trip). */
  pairs(): Pair[];
  address: string;
  respond(code: number, attributes: AttributeInput[]): Buffer;
  /** Logs why a packet is not answered (rate-limited by the door). */
  drop(reason: string): void;
  /** Told why the request is answered with an Access-Reject (for the door's counters). */
  rejected?(reason: string): void;
  warn(detail: object, message: string): void;
}

const isUserName = (p: Pair) =>
  p.attribute === "User-Name" || (p.attribute.length === 9 && p.attribute.toLowerCase() === "user-name");

/** The request's pairs with User-Name set to the identity the EAP method proved. */
function asUser(pairs: readonly Pair[], identity: string): Pair[] {
  const user: Pair[] = [{ attribute: "User-Name", op: "=", value: identity }];
  for (const p of pairs) if (!isUserName(p)) user.push(p);
  return user;
}

function labelled(outcome: LoginOutcome, method: EapMethodName, outerIdentity: string): LoginOutcome {
  const outer = outerIdentity === outcome.attempt.username ? null : outerIdentity;
  return { ...outcome, attempt: { ...outcome.attempt, method, outerIdentity: outer } };
}

export async function answerEap(input: EapDoorInput): Promise<Buffer | null> {
  const { aaa, client, packet, pairs, respond } = input;
  const eapMessage = packet.attributes.find((a) => a.name === "EAP-Message")!.raw;
  const identifier = eapMessage.length >= 2 ? eapMessage[1]! : 0;
  if (!input.engine) {
    input.warn({ client: input.address }, "EAP request refused: EAP is not configured on this server");
    input.rejected?.("EAP is not configured");
    return respond(PacketCode.AccessReject, [
      ["EAP-Message", eapFailure(identifier)],
      ["Reply-Message", "EAP is not configured"],
    ]);
  }
  const state = packet.attributes.find((a) => a.name === "State")?.raw;
  let answer: EapAnswer;
  try {
    answer = await input.engine.handle({
      client,
      address: input.address,
      eapMessage,
      state,
      judge: async (identity, credentials, method, outerIdentity) =>
        labelled(
          // The EAP method is known before the decision: policies' method conditions see it.
          await aaa.decide(client, asUser(pairs(), identity), { ...credentials, method }),
          method,
          outerIdentity,
        ),
    });
  } catch (error) {
    input.warn({ err: error, client: input.address }, "EAP request failed; rejecting");
    input.rejected?.("EAP failed");
    return respond(PacketCode.AccessReject, [
      ["EAP-Message", eapFailure(identifier)],
      ["Reply-Message", "EAP failed"],
    ]);
  }
  switch (answer.kind) {
    case "drop":
      input.drop(answer.reason);
      return null;
    case "challenge":
      return respond(PacketCode.AccessChallenge, [
        ["EAP-Message", answer.eap],
        ["State", answer.state],
      ]);
    case "accept": {
      const keys = mppeKeys(answer.msk);
      let outcome = answer.outcome;
      let response: Buffer;
      // The inner identity as User-Name (RFC 2865 section 5.1: the NAS puts it in its accounting),
      // unless the reply names one: with an anonymous outer identity, this is how the sessions,
      // quotas and disconnects of the access point's accounting find the user (hostapd uses it).
      const named = outcome.result.reply.some((p) => p.attribute.toLowerCase() === "user-name");
      const userName = named ? [] : ([["User-Name", outcome.attempt.username]] as const);
      try {
        response = respond(PacketCode.AccessAccept, [
          ...outcome.result.reply.map((p) => [p.attribute, p.value] as const),
          ...userName,
          ["EAP-Message", answer.eap],
          ["MS-MPPE-Recv-Key", keys.recv],
          ["MS-MPPE-Send-Key", keys.send],
        ]);
      } catch (error) {
        input.warn({ err: error, client: input.address }, "the EAP answer cannot be encoded; rejecting");
        outcome = aaa.rejectInstead(outcome, "the answer does not fit in a RADIUS packet");
        input.rejected?.("the answer does not fit in a RADIUS packet");
        response = respond(PacketCode.AccessReject, [["EAP-Message", eapFailure(answer.eap[1]!)]]);
      }
      await aaa.record(outcome);
      return response;
    }
    case "reject": {
      input.warn(
        { client: input.address, reason: answer.reason, identity: answer.attempt?.identity },
        "EAP login rejected",
      );
      const reason = answer.outcome?.result.reason ?? answer.reason;
      input.rejected?.(reason);
      const response = respond(PacketCode.AccessReject, [
        ["EAP-Message", answer.eap],
        ["Reply-Message", reason],
      ]);
      const attempt = answer.attempt;
      if (answer.outcome) await aaa.record(answer.outcome);
      else if (attempt) {
        const refused = await aaa.refuse(
          client,
          asUser(pairs(), attempt.identity),
          answer.reason,
          attempt.method,
        );
        await aaa.record(labelled(refused, attempt.method, attempt.outerIdentity));
      }
      return response;
    }
  }
}
