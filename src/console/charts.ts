// Bar charts drawn on the server as inline SVG (no script, so the CSP stays default-src 'self'):
// the geometry is computed here, the dashboard template writes it out, with a table beside it.

export interface ChartSeries {
  name: string;
  /** CSS class of its bars (the colours are in console.css). */
  className: string;
  values: number[];
}

export interface ChartBar {
  x: number;
  y: number;
  width: number;
  height: number;
  className: string;
  title: string;
}

export interface ChartTick {
  y: number;
  label: string;
}

export interface ChartLabel {
  x: number;
  label: string;
}

export interface Chart {
  width: number;
  height: number;
  plot: { left: number; top: number; right: number; bottom: number };
  bars: ChartBar[];
  yTicks: ChartTick[];
  xLabels: ChartLabel[];
  title: string;
}

const WIDTH = 720;
const HEIGHT = 220;
const PLOT = { left: 48, top: 10, right: WIDTH - 8, bottom: HEIGHT - 28 };

/** 1, 2, 5, 10, 20, 50...: the smallest such step giving at most `count` ticks up to max. */
function niceStep(max: number, count: number): number {
  const rough = Math.max(1, max / count);
  const power = 10 ** Math.floor(Math.log10(rough));
  for (const factor of [1, 2, 5, 10]) if (factor * power >= rough) return factor * power;
  return 10 * power;
}

/** Stacked bars, one column per label; every `labelEvery`th label is written under the axis. */
export function stackedBars(title: string, labels: string[], series: ChartSeries[], labelEvery = 3): Chart {
  const totals = labels.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const step = niceStep(Math.max(1, ...totals), 4);
  const top = Math.max(step, Math.ceil(Math.max(1, ...totals) / step) * step);
  const plotHeight = PLOT.bottom - PLOT.top;
  const column = (PLOT.right - PLOT.left) / Math.max(1, labels.length);
  const barWidth = Math.max(2, column * 0.7);
  const scale = (value: number) => (value / top) * plotHeight;
  const bars: ChartBar[] = [];
  labels.forEach((label, i) => {
    let base = PLOT.bottom;
    for (const s of series) {
      const value = s.values[i] ?? 0;
      if (value <= 0) continue;
      const height = scale(value);
      base -= height;
      bars.push({
        x: round(PLOT.left + i * column + (column - barWidth) / 2),
        y: round(base),
        width: round(barWidth),
        height: round(height),
        className: s.className,
        title: `${label}: ${value.toLocaleString("en-US")} ${s.name}`,
      });
    }
  });
  const yTicks: ChartTick[] = [];
  for (let value = 0; value <= top; value += step) {
    yTicks.push({ y: round(PLOT.bottom - scale(value)), label: value.toLocaleString("en-US") });
  }
  const xLabels = labels
    .map((label, i) => ({ x: round(PLOT.left + i * column + column / 2), label }))
    .filter((_, i) => i % labelEvery === 0);
  return { width: WIDTH, height: HEIGHT, plot: PLOT, bars, yTicks, xLabels, title };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
