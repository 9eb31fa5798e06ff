// Bench page: uPlot drawing the same N scattered points (points only, log y), timed like plotcanvas.tsx.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

declare global {
  interface Window {
    __bench: { n: number; first?: number; redraw?: number; draws: number; zooming?: boolean; perPoint?: boolean };
  }
}

const n = window.__bench.n;
const xs = new Float64Array(n);
const ys = new Float64Array(n);
let seed = 7;
const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
for (let i = 0; i < n; i++) xs[i] = rnd() * 100;
xs.sort();
for (let i = 0; i < n; i++) ys[i] = Math.pow(2, 9 + Math.floor(rnd() * 14));

let started = performance.now();
const opts: uPlot.Options = {
  width: 900,
  height: 260,
  // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- uPlot's Distr is a const enum, which esbuild cannot inline: 3 is its Logarithmic
  scales: { x: { time: false }, y: { distr: 3, log: 2 } },
  series: [{}, { stroke: "#d9480f", width: 0, points: { show: true, size: 3, fill: "#d9480f" }, paths: () => null }],
  hooks: {
    draw: [
      () => {
        const b = window.__bench;
        b.draws += 1;
        const t = performance.now() - started;
        if (b.first === undefined) b.first = t;
        else if (b.zooming && b.redraw === undefined) b.redraw = t;
      },
    ],
  },
};
const plot = new uPlot(opts, [Array.from(xs), Array.from(ys)], document.getElementById("root") ?? document.body);

(window as unknown as { zoom: () => void }).zoom = () => {
  window.__bench.zooming = true;
  started = performance.now();
  plot.setScale("x", { min: 25, max: 75 });
};
