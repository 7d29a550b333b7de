// What every EAP method of the engine shares: the step it answers with, and what it may use to
// judge a login. A method never decides a login itself: it proves who the user is, then hands
// the inner identity and credentials to the core decision through `LoginJudge`.
import type { Credentials } from "../../../core/aaa/decide.ts";
import type { LoginOutcome } from "../../../core/aaa/service.ts";
import type { RadiusClient } from "../../../core/networks/service.ts";
import type { Tunnel } from "../tunnel.ts";
import type { EapOptions } from "../types.ts";

export interface LoginJudge {
  /** The core decision (as for PAP/CHAP) for `identity` proven by `credentials`. */
  decide(identity: string, credentials: Credentials): Promise<LoginOutcome>;
}

export interface MethodContext {
  client: RadiusClient;
  /** The EAP-Response/Identity of the conversation (RFC 3748 section 5.1). */
  outerIdentity: string;
  /** A new TLS server connection of the method's context (asking for a client certificate or not). */
  openTunnel(requestClientCertificate: boolean): Tunnel;
  fragmentSize: number;
  checkClientCertificate: EapOptions["checkClientCertificate"];
}

export type MethodStep =
  /** Another EAP-Request of the method, with this Type-Data. */
  | { kind: "request"; typeData: Buffer }
  /** The user is proven and the core accepted: EAP-Success with these keys. */
  | { kind: "success"; outcome: LoginOutcome; msk: Buffer; identity: string }
  /** EAP-Failure; `outcome` when the core decided (a decided login is recorded as it was decided). */
  | { kind: "failure"; reason: string; outcome?: LoginOutcome; identity?: string };

export interface EapMethod {
  /** The identity being logged in once known (the inner identity for tunnelled methods). */
  readonly identity: string | undefined;
  /** The first EAP-Request's Type-Data (the Start packet). */
  start(): Buffer;
  /** The supplicant's EAP-Response Type-Data for this method. */
  handle(typeData: Buffer, judge: LoginJudge): Promise<MethodStep>;
  /** Bytes it holds between round trips (TLS state, buffered fragments), for the EAP memory budgets. */
  heldBytes(): number;
  close(): void;
}

export const failure = (reason: string, outcome?: LoginOutcome, identity?: string): MethodStep => ({
  kind: "failure",
  reason,
  ...(outcome ? { outcome } : {}),
  ...(identity === undefined ? {} : { identity }),
});
