// What both bench pages draw: the same N seeded points (time, request size), and the timings they report.
declare global {
  interface Window {
    __bench: { n: number; first?: number; redraw?: number; draws: number; zooming?: boolean; perPoint?: boolean };
  }
}

export function points(n: number): { xs: Float64Array; ys: Float64Array } {
  const xs = new Float64Array(n);
  const ys = new Float64Array(n);
  let seed = 7;
  const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  for (let i = 0; i < n; i++) {
    xs[i] = rnd() * 100;
    ys[i] = Math.pow(2, 9 + Math.floor(rnd() * 14));
  }
  return { xs, ys };
}

/** Record a finished draw: the first one, then the first after a zoom, in ms since `started`. */
export function drawn(started: number): void {
  const b = window.__bench;
  b.draws += 1;
  const t = performance.now() - started;
  if (b.first === undefined) b.first = t;
  else if (b.zooming && b.redraw === undefined) b.redraw = t;
}
