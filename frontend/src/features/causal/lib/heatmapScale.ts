// The tracing heatmaps' colours: ColorBrewer's YlGnBu, a sequential scale whose lightness
// falls steadily from near white (no effect) to dark blue (the largest), so it reads for
// every kind of colour blindness and in grey (colorbrewer2.org marks it colour-blind safe).
const STOPS = [
  '#ffffd9',
  '#edf8b1',
  '#c7e9b4',
  '#7fcdbb',
  '#41b6c4',
  '#1d91c0',
  '#225ea8',
  '#253494',
  '#081d58',
] as const;

function rgb(hex: string): [number, number, number] {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function hex([r, g, b]: [number, number, number]): string {
  return `#${[r, g, b].map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;
}

/** The colour at `t` (0: none, 1: the scale's top), interpolated between the stops; clamped. */
export function heatColor(t: number): string {
  const x = Math.max(0, Math.min(1, Number.isFinite(t) ? t : 0)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const a = rgb(STOPS[i]!);
  const b = rgb(STOPS[i + 1]!);
  const f = x - i;
  return hex([a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f]);
}
