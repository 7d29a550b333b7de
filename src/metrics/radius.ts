// RADIUS counters (the door's RadiusObserver): requests by type, verdict, reason and network, and
// accounting packets by Acct-Status-Type. Each network's cells are made on its first packet; a
// packet then costs a Map lookup or two and an addition.
import type { Registry } from "prom-client";
import { papRejectReasons } from "../core/aaa/passwords/pap.ts";
import { PacketCode } from "../radius/packet.ts";
import type { DropReason, RadiusObserver } from "../radius/server.ts";
import { type CounterCell, CounterCells } from "./cells.ts";

/**
 * The reasons an Access-Reject gives (src/core/aaa/decide.ts, quotas.ts, service.ts,
 * src/core/vouchers/login.ts, src/radius/eap-door.ts): counted as written. Any other text (EAP
 * method failures, which carry details) is counted as "other", so the label stays bounded.
 */
export const REJECT_REASONS: readonly string[] = [
  "wrong password",
  "unknown user",
  "user disabled",
  "account expired",
  "account expired after first login",
  "maximum total session time reached",
  "rejected by Auth-Type",
  "no password configured for the user",
  "the NT-Password is not an NT hash",
  // Every reason the password check gives (a bounded set: one per password item and problem).
  ...papRejectReasons(),
  "no credentials in the request",
  "already logged in",
  "outside the allowed login time",
  "the allowed login time ends within a minute",
  "quota exhausted: daily time",
  "quota exhausted: monthly time",
  "quota exhausted: daily data",
  "quota exhausted: monthly data",
  "quota exhausted: total data",
  "quota exhausted: voucher data",
  "voucher disabled",
  "voucher expired",
  "voucher already used on its maximum number of devices",
  "the answer does not fit in a RADIUS packet",
  "EAP is not configured",
  "EAP failed",
];
const KNOWN_REASONS = new Set(REJECT_REASONS);

/** Acct-Status-Type values counted by name (RFC 2866 section 5.1); others are "other". */
const STATUS_TYPES = ["Start", "Stop", "Interim-Update", "Accounting-On", "Accounting-Off"];

/** The type label of a packet's code byte. */
function typeOf(code: number): string {
  switch (code) {
    case PacketCode.AccessRequest:
      return "Access-Request";
    case PacketCode.AccountingRequest:
      return "Accounting-Request";
    case PacketCode.StatusServer:
      return "Status-Server";
    default:
      return "other";
  }
}

interface NetworkCells {
  accept: CounterCell;
  challenge: CounterCell;
  status: CounterCell;
  accounting: CounterCell;
  rejects: Map<string, CounterCell>;
  drops: Map<string, CounterCell>;
  statusTypes: Map<string, CounterCell>;
}

export class RadiusMetrics implements RadiusObserver {
  private readonly requests: CounterCells;
  private readonly accountingPackets: CounterCells;
  private readonly networks = new Map<number, NetworkCells>();
  /** Drops from unknown clients (no network), by code byte and reason. */
  private readonly unknownDrops = new Map<string, CounterCell>();

  constructor(
    registry: Registry,
    private readonly transports: Record<"udp" | "radsec", CounterCell>,
  ) {
    this.requests = new CounterCells(
      registry,
      "wisp_radius_requests_total",
      "RADIUS requests by packet type, verdict (accept, reject, challenge, answered, dropped), reject or drop reason, and network id",
      ["type", "verdict", "reason", "network"],
    );
    this.accountingPackets = new CounterCells(
      registry,
      "wisp_radius_accounting_packets_total",
      "Accounting-Requests stored and answered, by Acct-Status-Type and network id",
      ["status_type", "network"],
    );
  }

  received(transport: "udp" | "radsec"): void {
    this.transports[transport].value++;
  }

  access(networkId: number, verdict: "accept" | "reject" | "challenge", reason: string | null): void {
    const cells = this.networks.get(networkId) ?? this.network(networkId);
    if (verdict === "accept") cells.accept.value++;
    else if (verdict === "challenge") cells.challenge.value++;
    else {
      const label = reason !== null && KNOWN_REASONS.has(reason) ? reason : "other";
      let cell = cells.rejects.get(label);
      if (!cell) {
        cell = this.requests.cell({
          type: "Access-Request",
          verdict: "reject",
          reason: label,
          network: String(networkId),
        });
        cells.rejects.set(label, cell);
      }
      cell.value++;
    }
  }

  accounting(networkId: number, statusType: string | undefined): void {
    const cells = this.networks.get(networkId) ?? this.network(networkId);
    cells.accounting.value++;
    const label = statusType !== undefined && STATUS_TYPES.includes(statusType) ? statusType : "other";
    let cell = cells.statusTypes.get(label);
    if (!cell) {
      cell = this.accountingPackets.cell({ status_type: label, network: String(networkId) });
      cells.statusTypes.set(label, cell);
    }
    cell.value++;
  }

  status(networkId: number): void {
    (this.networks.get(networkId) ?? this.network(networkId)).status.value++;
  }

  dropped(code: number, networkId: number | undefined, reason: DropReason): void {
    const type = typeOf(code);
    const drops =
      networkId === undefined
        ? this.unknownDrops
        : (this.networks.get(networkId) ?? this.network(networkId)).drops;
    // Drops are the unusual case: a key string here is acceptable.
    const key = `${type}|${reason}`;
    let cell = drops.get(key);
    if (!cell) {
      const network = networkId === undefined ? "" : String(networkId);
      cell = this.requests.cell({ type, verdict: "dropped", reason, network });
      drops.set(key, cell);
    }
    cell.value++;
  }

  private network(networkId: number): NetworkCells {
    const network = String(networkId);
    const request = (type: string, verdict: string) =>
      this.requests.cell({ type, verdict, reason: "", network });
    const cells: NetworkCells = {
      accept: request("Access-Request", "accept"),
      challenge: request("Access-Request", "challenge"),
      status: request("Status-Server", "answered"),
      accounting: request("Accounting-Request", "answered"),
      rejects: new Map(),
      drops: new Map(),
      statusTypes: new Map(),
    };
    this.networks.set(networkId, cells);
    return cells;
  }
}
