// Bench page: uPlot drawing the same N scattered points (points only, log y), timed like plotcanvas.tsx.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { drawn, points } from "./data";

const n = window.__bench.n;
const { xs, ys } = points(n);
// uPlot wants x in order: the same points, sorted by time
const order = Array.from(xs.keys()).sort((i, j) => (xs[i] ?? 0) - (xs[j] ?? 0));

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
        drawn(started);
      },
    ],
  },
};
const plot = new uPlot(opts, [order.map((i) => xs[i] ?? 0), order.map((i) => ys[i] ?? 1)], document.getElementById("root") ?? document.body);

(window as unknown as { zoom: () => void }).zoom = () => {
  window.__bench.zooming = true;
  started = performance.now();
  plot.setScale("x", { min: 25, max: 75 });
};
