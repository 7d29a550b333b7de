// The EAP engine behind the RADIUS door (RFC 3579): one conversation per login, found again by
// the State attribute, each Access-Request's EAP-Message handed to the conversation's method.
// It answers with an Access-Challenge (the next EAP-Request), an Access-Accept (EAP-Success and
// the keys) or an Access-Reject (EAP-Failure), or asks the door to drop the packet. Logins are
// decided by the core through the `judge` the door passes in; the engine only proves identities.
import { randomBytes, randomInt } from "node:crypto";
import type { Credentials } from "../../core/aaa/decide.ts";
import type { LoginOutcome } from "../../core/aaa/service.ts";
import type { RadiusClient } from "../../core/networks/service.ts";
import { type Bound, Conversations } from "./conversations.ts";
import { EapTlsMethod } from "./methods/eap-tls.ts";
import type { InnerEapMethod } from "./methods/inner-eap.ts";
import type { EapMethod, LoginJudge, MethodContext } from "./methods/method.ts";
import { PeapMethod } from "./methods/peap.ts";
import { TtlsMethod } from "./methods/ttls.ts";
import { decodeEap, EapCode, EapFormatError, EapType, eapFailure, encodeEap } from "./packet.ts";
import { buildTunnels, type OpenTunnel, resolveTlsEngine, TLS_METHOD_TYPES } from "./tls-contexts.ts";
import { TlsPool } from "./tls-pool.ts";
import {
  DEFAULT_EAP_LIMITS,
  type EapLimits,
  type EapMethodName,
  type EapOptions,
  type TlsEngine,
} from "./types.ts";

export interface EapRequest {
  client: RadiusClient;
  address: string;
  /** The joined EAP-Message attributes (RFC 3579 section 3.1). */
  eapMessage: Buffer;
  state: Buffer | undefined;
  /** The core decision for the proven identity (the door puts it in User-Name). */
  judge(
    identity: string,
    credentials: Credentials,
    method: EapMethodName,
    outerIdentity: string,
  ): Promise<LoginOutcome>;
}

export type EapAnswer =
  | { kind: "challenge"; eap: Buffer; state: Buffer }
  | { kind: "accept"; eap: Buffer; outcome: LoginOutcome; msk: Buffer }
  | {
      kind: "reject";
      eap: Buffer;
      reason: string;
      /** The core's decision when it was made (recorded as is); else the door records `reason`. */
      outcome?: LoginOutcome;
      /** Set when a login had begun: the attempt to record. */
      attempt?: { identity: string; outerIdentity: string; method: EapMethodName };
    }
  | { kind: "drop"; reason: string };

const METHOD_TYPES: Record<EapMethodName, number> = {
  PEAP: EapType.Peap,
  TTLS: EapType.Ttls,
  TLS: EapType.Tls,
};
const METHOD_NAMES = new Map<number, EapMethodName>(
  Object.entries(METHOD_TYPES).map(([name, type]) => [type, name as EapMethodName]),
);
/** The order a NAK's proposals are considered in when several are served. */
const SERVED = TLS_METHOD_TYPES;
/** How long a built TLS context is used before the credentials are asked again. */
const CREDENTIALS_TTL_MS = 60_000;
/** RFC 3748 section 5.1 leaves the identity's length open; RADIUS User-Name holds 253 octets. */
const MAX_IDENTITY = 253;
/**
 * What a conversation holds besides its method's TLS state and buffers (the object, its State
 * keys, the method object): RSS grew 1.4-1.7 KiB per conversation that had only sent its identity
 * (0.9-1.1 KiB of it JS heap; bench/eap-memory.ts, 2,000 and 5,000 of them), rounded up.
 */
const CONVERSATION_BYTES = 2048;

interface Conversation extends Bound {
  /** Identifier of the last EAP-Request sent: the next Response must carry it. */
  identifier: number;
  outerIdentity: string;
  type: number;
  method: EapMethod;
  /** Whether the supplicant answered the proposed method (a NAK is accepted before that only). */
  started: boolean;
}

export class EapEngine {
  private readonly conversations: Conversations<Conversation>;
  private tls: { openers: Map<number, OpenTunnel>; expires: number } | undefined;
  /** What runs the conversations' TLS (EAP_TLS_ENGINE). */
  readonly tlsEngine: TlsEngine;
  /** TLS on worker threads (limits.tlsWorkers > 0), else in this thread. */
  readonly pool: TlsPool | undefined;
  /** One set of session-ticket keys for every context this engine builds: resumption survives refreshes. */
  private readonly ticketKeys = randomBytes(48);

  constructor(
    private readonly options: EapOptions,
    private readonly innerMethods: { mschapv2?: () => InnerEapMethod } = {},
    limits: EapLimits = DEFAULT_EAP_LIMITS,
  ) {
    this.conversations = new Conversations(limits);
    const workers = limits.tlsWorkers ?? DEFAULT_EAP_LIMITS.tlsWorkers ?? 0;
    this.pool = workers > 0 ? new TlsPool(workers) : undefined;
    this.tlsEngine = resolveTlsEngine(limits.tlsEngine ?? "auto");
  }

  get openConversations(): number {
    return this.conversations.size;
  }

  get evictedConversations(): number {
    return this.conversations.evicted;
  }

  /** Bytes charged for every open conversation (the EAP memory budgets), or for one network's. */
  heldBytes(networkId?: number): number {
    return networkId === undefined ? this.conversations.bytes : this.conversations.bytesOf(networkId);
  }

  close(): void {
    this.conversations.close();
    void this.pool?.close();
  }

  /**
   * The TLS connections of a method: on the worker pool when there is one, else in this thread.
   * The credentials are asked again every CREDENTIALS_TTL_MS (a renewed certificate is used).
   */
  private async tunnels(type: number): Promise<OpenTunnel> {
    if (!this.tls || this.tls.expires <= Date.now()) {
      const credentials = await this.options.credentials();
      if (this.pool) {
        this.pool.setCredentials(credentials, this.ticketKeys, this.tlsEngine);
        this.tls = { openers: new Map(), expires: Date.now() + CREDENTIALS_TTL_MS };
      } else {
        this.tls = {
          openers: buildTunnels(credentials, this.ticketKeys, this.tlsEngine),
          expires: Date.now() + CREDENTIALS_TTL_MS,
        };
      }
    }
    const pool = this.pool;
    if (pool) return (requestClientCertificate) => pool.open(type, requestClientCertificate);
    return this.tls.openers.get(type)!;
  }

  async handle(request: EapRequest): Promise<EapAnswer> {
    const key = request.state?.toString("hex");
    const found =
      key === undefined ? undefined : this.conversations.find(key, request.client.id, request.address);
    if (found === "foreign") return { kind: "drop", reason: "State of another network's EAP conversation" };
    let packet: ReturnType<typeof decodeEap>;
    try {
      packet = decodeEap(request.eapMessage);
    } catch (error) {
      if (!(error instanceof EapFormatError)) throw error;
      if (found) this.conversations.remove(found);
      return { kind: "drop", reason: `malformed EAP-Message: ${error.message}` };
    }
    if (packet.code !== EapCode.Response) {
      if (found) this.conversations.remove(found);
      return { kind: "drop", reason: `EAP code ${packet.code} where a Response was expected` };
    }
    if (key !== undefined && !found) {
      return this.reject(packet.identifier, "unknown or expired EAP State");
    }
    if (!found) return this.begin(request, packet.identifier, packet.type!, packet.data);
    if (found.busy) return { kind: "drop", reason: "a packet of this EAP conversation is in progress" };
    if (packet.identifier !== found.identifier) {
      return { kind: "drop", reason: "EAP Identifier does not answer the last request" };
    }
    found.busy = true;
    try {
      return await this.continue(found, request, packet.identifier, packet.type!, packet.data);
    } catch (error) {
      this.conversations.remove(found);
      throw error;
    } finally {
      found.busy = false;
    }
  }

  private async begin(
    request: EapRequest,
    identifier: number,
    type: number,
    data: Buffer,
  ): Promise<EapAnswer> {
    if (type !== EapType.Identity) {
      return this.reject(identifier, "an EAP conversation must begin with an Identity response");
    }
    if (data.length > MAX_IDENTITY) return this.reject(identifier, "EAP identity longer than 253 octets");
    const outerIdentity = data.toString("utf8");
    const proposed = METHOD_TYPES[defaultMethod(request.client)];
    const conversation: Conversation = {
      key: "",
      networkId: request.client.id,
      address: request.address,
      expires: 0,
      busy: false,
      charged: 0,
      identifier: randomInt(256),
      outerIdentity,
      type: proposed,
      method: await this.makeMethod(proposed, request.client, outerIdentity),
      started: false,
      heldBytes() {
        return CONVERSATION_BYTES + this.outerIdentity.length + this.method.heldBytes();
      },
      close() {
        this.method.close();
      },
    };
    conversation.key = Conversations.newState().toString("hex");
    this.conversations.add(conversation);
    return this.challenge(conversation, conversation.method.start());
  }

  private async continue(
    conversation: Conversation,
    request: EapRequest,
    identifier: number,
    type: number,
    data: Buffer,
  ): Promise<EapAnswer> {
    const name = METHOD_NAMES.get(conversation.type)!;
    const attempt = {
      identity: conversation.outerIdentity,
      outerIdentity: conversation.outerIdentity,
      method: name,
    };
    if (type === EapType.Nak && !conversation.started) {
      // RFC 3748 section 5.3.1: the Type-Data lists the methods the peer would rather use.
      const wanted = SERVED.find((t) => data.includes(t));
      if (wanted === undefined) {
        this.conversations.remove(conversation);
        return this.reject(identifier, "no EAP method in common with the supplicant", undefined, attempt);
      }
      conversation.method.close();
      conversation.type = wanted;
      conversation.method = await this.makeMethod(wanted, request.client, conversation.outerIdentity);
      return this.challenge(conversation, conversation.method.start());
    }
    if (type !== conversation.type) {
      this.conversations.remove(conversation);
      return this.reject(identifier, `EAP type ${type} where ${name} was expected`, undefined, attempt);
    }
    conversation.started = true;
    const judge: LoginJudge = {
      decide: (identity, credentials) =>
        request.judge(identity, credentials, name, conversation.outerIdentity),
    };
    const step = await conversation.method.handle(data, judge);
    if (step.kind === "request") return this.challenge(conversation, step.typeData);
    this.conversations.remove(conversation);
    if (step.kind === "success") {
      return {
        kind: "accept",
        eap: encodeEap({ code: EapCode.Success, identifier, data: Buffer.alloc(0) }),
        outcome: step.outcome,
        msk: step.msk,
      };
    }
    const identity = step.identity ?? conversation.method.identity ?? conversation.outerIdentity;
    return this.reject(identifier, step.reason, step.outcome, { ...attempt, identity });
  }

  private challenge(conversation: Conversation, typeData: Buffer): EapAnswer {
    conversation.identifier = (conversation.identifier + 1) & 0xff;
    const state = Conversations.newState();
    this.conversations.rekey(conversation, state.toString("hex"));
    const eap = encodeEap({
      code: EapCode.Request,
      identifier: conversation.identifier,
      type: conversation.type,
      data: typeData,
    });
    return { kind: "challenge", eap, state };
  }

  private reject(
    identifier: number,
    reason: string,
    outcome?: LoginOutcome,
    attempt?: { identity: string; outerIdentity: string; method: EapMethodName },
  ): EapAnswer {
    return {
      kind: "reject",
      eap: eapFailure(identifier),
      reason,
      ...(outcome ? { outcome } : {}),
      ...(attempt ? { attempt } : {}),
    };
  }

  private async makeMethod(type: number, client: RadiusClient, outerIdentity: string): Promise<EapMethod> {
    const context: MethodContext = {
      client,
      outerIdentity,
      openTunnel: await this.tunnels(type),
      fragmentSize: this.options.fragmentSize,
      checkClientCertificate: this.options.checkClientCertificate,
    };
    if (type === EapType.Tls) return new EapTlsMethod(context);
    if (type === EapType.Ttls) return new TtlsMethod(context, this.innerMethods.mschapv2);
    return new PeapMethod(context, this.innerMethods.mschapv2);
  }
}

/** The network's default EAP method (proposed first), PEAP unless set. */
function defaultMethod(client: RadiusClient): EapMethodName {
  const chosen = client.eap_method;
  return chosen === "TTLS" || chosen === "TLS" ? chosen : "PEAP";
}
