// Bench page: our canvas kernel (PlotCanvas) drawing N scattered points, as the transfer-size plot does.
// It reports the time from render to the end of the first draw, and of a redraw after one zoom step.
import { createRoot } from "react-dom/client";
import { PlotCanvas, type DrawCtx } from "../../src/plots/PlotCanvas";
import { drawn, points } from "./data";

const n = window.__bench.n;
const { xs, ys } = points(n);

let started = 0;
/** One path filled once, as uPlot does and as the app's transfer-size plot now does. */
function drawBatched(d: DrawCtx) {
  const { ctx, x, y, view } = d;
  ctx.beginPath();
  for (let i = 0; i < n; i++) {
    const xv = xs[i] ?? 0;
    if (xv < view.x0 || xv > view.x1) continue;
    ctx.rect(x(xv) - 2, y(ys[i] ?? 1) - 2, 4, 4);
  }
  ctx.fill();
}

function draw(d: DrawCtx) {
  const { ctx, x, y, colors, view } = d;
  ctx.fillStyle = colors.write;
  if (window.__bench.perPoint) {
    // How the transfer-size plot drew before: a fill per point
    for (let i = 0; i < n; i++) {
      const xv = xs[i] ?? 0;
      if (xv >= view.x0 && xv <= view.x1) ctx.fillRect(x(xv) - 2, y(ys[i] ?? 1) - 2, 4, 4);
    }
  } else {
    drawBatched(d);
  }
  drawn(started);
}

function Plot({ focus }: { focus: { key: string; x: [number, number] | null } | null }) {
  return (
    <PlotCanvas
      label="bench"
      xLabel="time"
      yLabel="size"
      xUnit="s"
      yUnit="B"
      yLog
      domain={{ x0: 0, x1: 100, y0: 512, y1: 1 << 23 }}
      draw={draw}
      focus={focus}
      testId="plot"
    />
  );
}

const el = document.getElementById("root");
const root = el ? createRoot(el) : null;
started = performance.now();
root?.render(<Plot focus={null} />);

/** Zoom to the middle half of the x range (as the uPlot page does), timed to the end of its redraw. */
(window as unknown as { zoom: () => void }).zoom = () => {
  window.__bench.zooming = true;
  started = performance.now();
  root?.render(<Plot focus={{ key: "half", x: [25, 75] }} />);
};
