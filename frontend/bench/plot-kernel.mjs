// The plot-kernel decision, with numbers: our canvas kernel (src/plots/PlotCanvas.tsx) against uPlot, each
// drawing the same 100,000 scattered points (the transfer-size plot's shape, log y) in Debian's chromium.
// Prints bundle size (minified, gzip) and the median time to the end of the first draw and of a redraw after
// one zoom step, over RUNS fresh pages. Run from frontend/: `node bench/plot-kernel.mjs [points] [runs]`.
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { chromium } from "@playwright/test";

const N = Number(process.argv[2] ?? 100_000);
const RUNS = Number(process.argv[3] ?? 7);

async function bundle(entry, external = []) {
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: "iife",
    jsx: "automatic",
    write: false,
    outdir: "out",
    external,
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "silent",
  });
  const js = out.outputFiles.find((f) => f.path.endsWith(".js"))?.text ?? "";
  const css = out.outputFiles.find((f) => f.path.endsWith(".css"))?.text ?? "";
  return { js, css };
}

function size(text) {
  const b = Buffer.from(text);
  return `${(b.length / 1024).toFixed(1)} kB / ${(gzipSync(b).length / 1024).toFixed(1)} kB`;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

// What each kernel adds to the app (React is there already): the kernel alone, React left out.
const own = await bundle("src/plots/PlotCanvas.tsx", ["react", "react/jsx-runtime"]);
const lib = await bundle("node_modules/uplot/dist/uPlot.esm.js");
const ours = await bundle("bench/plot-kernel/plotcanvas.tsx");
const pages = {
  "PlotCanvas, one path per look": { ...ours, size: size(own.js) },
  "PlotCanvas, a fill per point": { ...ours, size: size(own.js), flags: "perPoint:true," },
  "uPlot 1.6.32": { ...(await bundle("bench/plot-kernel/uplot.ts")), size: size(lib.js + lib.css) },
};

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium" });
const rows = [];
for (const [name, p] of Object.entries(pages)) {
  const first = [];
  const redraw = [];
  for (let r = 0; r < RUNS; r++) {
    const page = await browser.newPage({ viewport: { width: 1000, height: 600 } });
    await page.setContent(
      `<!doctype html><html><head><style>${p.css}</style></head><body><div id="root" style="width:900px"></div>` +
        `<script>window.__bench={${p.flags ?? ""}n:${N},draws:0}</script><script>${p.js}</script></body></html>`,
    );
    await page.waitForFunction(() => window.__bench.first !== undefined, null, { timeout: 60_000 });
    await page.waitForTimeout(500); // the first layout's redraws (the measured width) are over
    await page.evaluate(() => window.zoom());
    await page.waitForFunction(() => window.__bench.redraw !== undefined, null, { timeout: 60_000 });
    const b = await page.evaluate(() => window.__bench);
    first.push(b.first);
    redraw.push(b.redraw);
    await page.close();
  }
  rows.push([name, p.size, median(first).toFixed(1), median(redraw).toFixed(1)]);
}
await browser.close();

const head = ["kernel", "bundle (min / gzip)", `first draw, ${N.toLocaleString()} pts (ms)`, "redraw after zoom (ms)"];
const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
const line = (r) => `| ${r.map((c, i) => String(c).padEnd(width[i])).join(" | ")} |`;
console.log(line(head));
console.log(`|${width.map((w) => "-".repeat(w + 2)).join("|")}|`);
for (const r of rows) console.log(line(r));
console.log(`median of ${RUNS} fresh pages each, chromium ${browser.version?.() ?? ""}`.trim());
