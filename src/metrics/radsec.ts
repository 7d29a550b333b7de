// RadSec counters (the listener's RadsecObserver): connections open now and opened by protocol,
// connections refused by reason (the gate's caps, handshake and certificate failures), and RADIUS
// requests by transport (UDP or RadSec), which the UDP server and the RadSec connections report.
import { Gauge, type Registry } from "prom-client";
import type { GateRefusal } from "../radius/radsec/gate.ts";
import type { RadsecObserver } from "../radius/radsec/listener.ts";
import type { RefusalLabel } from "../radius/radsec/refusals.ts";
import type { Protocol } from "../radius/radsec/wire.ts";
import { type CounterCell, CounterCells } from "./cells.ts";

export class RadsecMetrics implements RadsecObserver {
  private open = 0;
  private readonly opens: CounterCells;
  private readonly openedBy = new Map<Protocol, CounterCell>();
  private readonly refusals: CounterCells;
  private readonly refusedBy = new Map<string, CounterCell>();
  /** Requests received, by transport (RadiusObserver.received). */
  readonly transports: Record<"udp" | "radsec", CounterCell>;

  constructor(registry: Registry) {
    const self = this;
    new Gauge({
      name: "wisp_radsec_connections",
      help: "RadSec connections open now (after a successful handshake and identification)",
      registers: [registry],
      collect() {
        this.set(self.open);
      },
    });
    this.opens = new CounterCells(
      registry,
      "wisp_radsec_connections_total",
      "RadSec connections opened, by protocol (radius/1.0, radius/1.1)",
      ["protocol"],
    );
    this.refusals = new CounterCells(
      registry,
      "wisp_radsec_refused_total",
      "RadSec connections refused, by reason (connection or handshake caps, no/untrusted/expired/revoked certificate, no network, TLS version, ALPN, timeout)",
      ["reason"],
    );
    const byTransport = new CounterCells(
      registry,
      "wisp_radius_transport_requests_total",
      "RADIUS packets received, by transport (udp, radsec)",
      ["transport"],
    );
    this.transports = {
      udp: byTransport.cell({ transport: "udp" }),
      radsec: byTransport.cell({ transport: "radsec" }),
    };
  }

  opened(protocol: Protocol): void {
    this.open++;
    let cell = this.openedBy.get(protocol);
    if (!cell) {
      cell = this.opens.cell({ protocol });
      this.openedBy.set(protocol, cell);
    }
    cell.value++;
  }

  closed(): void {
    this.open--;
  }

  refused(reason: RefusalLabel | GateRefusal): void {
    let cell = this.refusedBy.get(reason);
    if (!cell) {
      cell = this.refusals.cell({ reason });
      this.refusedBy.set(reason, cell);
    }
    cell.value++;
  }
}
