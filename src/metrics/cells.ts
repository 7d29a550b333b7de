// Series counted on hot paths (RADIUS, every HTTP request, every database statement) in plain
// number fields, handed to prom-client only when /metrics is scraped. prom-client's own inc() and
// observe() hash and validate the label object on every call, bound children included (lib/util.js
// hashObject); here a path holds the cell for its labels and adds to a number.
import { Counter, type Metric, type Registry } from "prom-client";

export type Labels = Record<string, string>;

export interface CounterCell {
  value: number;
}

/** A prom-client Counter whose values are read from cells at scrape time (public API only). */
export class CounterCells {
  private readonly cells: { labels: Labels; cell: CounterCell }[] = [];

  constructor(registry: Registry, name: string, help: string, labelNames: readonly string[]) {
    const cells = this.cells;
    new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        for (const { labels, cell } of cells) this.inc(labels, cell.value);
      },
    });
  }

  /** A new cell for these labels: call once per label set and keep it. */
  cell(labels: Labels): CounterCell {
    const cell = { value: 0 };
    this.cells.push({ labels, cell });
    return cell;
  }
}

/** One label set of a histogram: counts per bucket (not cumulative), sum and count. */
export class HistogramCell {
  readonly buckets: number[];
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.buckets = new Array(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.buckets[i]!++;
    this.sum += value;
    this.count++;
  }
}

interface SampleValue {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/**
 * A histogram in the exposition format (name_bucket{le=...} cumulative, name_sum, name_count),
 * registered as a prom-client metric object: the registry formats what get() returns.
 */
export class HistogramCells {
  private readonly cells: { labels: Labels; cell: HistogramCell }[] = [];
  readonly type = "histogram";
  readonly aggregator = "sum";

  constructor(
    registry: Registry,
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  cell(labels: Labels): HistogramCell {
    const cell = new HistogramCell(this.bounds);
    this.cells.push({ labels, cell });
    return cell;
  }

  async get() {
    const values: SampleValue[] = [];
    for (const { labels, cell } of this.cells) {
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += cell.buckets[i]!;
        const le = i < this.bounds.length ? this.bounds[i]! : "+Inf";
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels, value: cell.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: cell.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** prom-client's Registry.resetMetrics() calls this on every metric. */
  reset(): void {
    for (const { cell } of this.cells) {
      cell.buckets.fill(0);
      cell.sum = 0;
      cell.count = 0;
    }
  }
}
