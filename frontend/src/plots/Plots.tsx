// The report's plots, drawn from GET /analyses/{id}/plots (at most 20k points each, exact totals).
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { type ReactNode, useCallback, useMemo, useState } from "react";
import { api, call, type Schemas } from "../api/client";
import { useDebounced } from "../lib/debounce";
import { bytes, count, percent, seconds } from "../lib/format";
import { ScrollBox } from "../lib/scroll";
import { type DrawCtx, PlotCanvas, type XLink } from "./PlotCanvas";
import { asApiError } from "../lib/query";

export interface Highlight {
  key: string;
  code: string;
  title: string;
  ranks: number[];
  window: [number, number] | null;
}

type Op = "write" | "read";

/**
 * Options for drawing two runs' plots on the same axes (the compare view): `uid` keeps element ids and
 * radio groups apart when a plot kind is shown twice; `xMax` is the time extent both panels share,
 * `yRange` the y extent (raw values) where both runs' y axes mean the same (request sizes, offsets),
 * and `xLink` keeps their zoom in step; `run` ("Run A") goes into the plot's heading, so that the two
 * panels' names differ.
 */
export interface Shared {
  uid?: string;
  run?: string;
  xMax?: number;
  yRange?: [number, number];
  xLink?: XLink | null;
}

/** A plot card's heading (it names the card); in the compare view it says which run it shows, to screen readers. */
function PlotTitle({ id, run, children }: { id: string; run?: string; children: ReactNode }) {
  return (
    <h3 id={id}>
      {run && <span className="sr-only">{run}: </span>}
      {children}
    </h3>
  );
}

function maxOf(xs: readonly number[]): number {
  let m = 0;
  for (const x of xs) if (x > m) m = x;
  return m;
}

/** The y extent the transfer-size plot gives a run's request sizes: a quarter of the smallest to four times the largest. */
export function sizeRange(p: Schemas["TransferSizePlot"]): [number, number] {
  let lo = Infinity;
  let hi = 1;
  for (const s of p.size) {
    lo = Math.min(lo, s);
    hi = Math.max(hi, s);
  }
  return [Math.max(1, Number.isFinite(lo) ? lo / 4 : 1), Math.max(2, hi * 4)];
}

/** The largest file offset (plus length) the spatiality plot shows. */
export function offsetMax(p: Schemas["SpatialityPlot"]): number {
  let m = 1;
  for (let i = 0; i < p.offset.length; i++) m = Math.max(m, (p.offset[i] ?? 0) + (p.length[i] ?? 0));
  return m;
}

/** The time extent of a run's time-based plots (what each plot's x axis spans on its own). */
export function timeExtent(p: Schemas["PlotData"], runtime: number): number {
  return Math.max(
    runtime,
    p.timeline ? maxOf(p.timeline.end) : 0,
    p.transfer_sizes ? maxOf(p.transfer_sizes.time) : 0,
    p.spatiality ? maxOf(p.spatiality.time) : 0,
    p.phases ? Math.max(maxOf(p.phases.end), maxOf(p.phases.last_end)) : 0,
  );
}

function opColor(d: DrawCtx, op: Op): string {
  return op === "write" ? d.colors.write : d.colors.read;
}

function drawWindow(d: DrawCtx, hl: Highlight | null) {
  if (!hl?.window) return;
  const { ctx, area } = d;
  const a = d.x(hl.window[0]);
  const b = Math.max(d.x(hl.window[1]), a + 2);
  ctx.fillStyle = d.colors.hlBand;
  ctx.fillRect(a, area.top, b - a, area.height);
  ctx.strokeStyle = d.colors.hl;
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  ctx.moveTo(a, area.top);
  ctx.lineTo(a, area.top + area.height);
  ctx.moveTo(b, area.top);
  ctx.lineTo(b, area.top + area.height);
  ctx.stroke();
  ctx.lineWidth = 1;
}

function drawRankRows(d: DrawCtx, ranks: Set<number> | null) {
  if (!ranks?.size) return;
  const { ctx, area } = d;
  ctx.fillStyle = d.colors.hlBand;
  const h = Math.max(2, Math.abs(d.y(0) - d.y(1)));
  for (const r of ranks) {
    const py = d.y(r + 0.5);
    if (py > area.top + area.height + h || py < area.top - h) continue;
    ctx.fillRect(area.left, py, area.width, h);
  }
}

function Legend({ items }: { items: { label: string; color: string }[] }) {
  return (
    <ul className="legend">
      {items.map((it) => (
        <li key={it.label}>
          <span className="swatch" style={{ background: it.color }} aria-hidden="true" />
          {it.label}
        </li>
      ))}
    </ul>
  );
}

function Shown({ shown, total, what }: { shown: number; total: number; what: string }) {
  return (
    <span className="muted small">
      {shown === total ? `${count(total)} ${what}` : `${count(shown)} of ${count(total)} ${what} shown (sampled)`}
    </span>
  );
}

function LayerPicker({
  layers,
  value,
  onChange,
  name,
}: {
  layers: string[];
  value: string;
  onChange: (v: string) => void;
  name: string;
}) {
  if (layers.length < 2) return null;
  return (
    <fieldset className="segmented">
      <legend className="sr-only">{name} layer</legend>
      {["all", ...layers].map((l) => (
        <label key={l} className={value === l ? "on" : ""}>
          <input
            type="radio"
            name={name}
            value={l}
            checked={value === l}
            onChange={() => {
              onChange(l);
            }}
          />
          {l === "all" ? "All layers" : l === "MPIIO" ? "MPI-IO" : l}
        </label>
      ))}
    </fieldset>
  );
}

const OP_LEGEND = (write: string, read: string) => [
  { label: "write", color: write },
  { label: "read", color: read },
];
const WRITE_CSS = "var(--plot-write)";
const READ_CSS = "var(--plot-read)";

/** The transfer-size plot in words: how many requests, the smallest and largest size, the bytes. */
function sizeSummary(p: Schemas["TransferSizePlot"]): string {
  let lo = Infinity;
  let hi = 0;
  for (const s of p.size) {
    lo = Math.min(lo, s);
    hi = Math.max(hi, s);
  }
  const range = Number.isFinite(lo) ? `, sizes from ${bytes(lo)} to ${bytes(hi)}` : "";
  return `${count(p.totals.ops)} requests${range}, ${bytes(p.totals.bytes)} in all`;
}

/** The OST plot in words: how many OSTs, the total, and the busiest one. */
function ostSummary(p: Schemas["OstPlot"], metric: OstMetric): string {
  const values = metric === "bytes" ? p.bytes : p.time;
  let top = -1;
  for (let i = 0; i < values.length; i++) if (top < 0 || (values[i] ?? 0) > (values[top] ?? 0)) top = i;
  const fmt = (v: number | undefined) => (metric === "bytes" ? bytes(v) : seconds(v));
  const busiest = top < 0 ? "" : `; the busiest is OST ${String(p.ost[top] ?? "?")} with ${fmt(values[top])}`;
  return `${count(p.ost.length)} OST(s), ${metric === "bytes" ? bytes(p.totals.bytes) : seconds(p.totals.time)} in all${busiest}`;
}

// --- timeline ---------------------------------------------------------------------------------

type Bars = Pick<Schemas["TimelinePlot"], "rank" | "start" | "end" | "op" | "layer" | "bytes" | "ops">;
type Density = Schemas["TimelineDensity"];
type Window = Schemas["TimelineWindow"];
type Range = { x0: number; x1: number; y0: number; y1: number };

const layerName = (l: string | undefined) => (l === "MPIIO" ? "MPI-IO" : (l ?? ""));

/** The segments (bars) of one layer, or of all. */
function barIndex(b: Bars, layer: string): number[] {
  return b.layer.flatMap((l, i) => (layer === "all" || l === layer ? [i] : []));
}

/** Where (layer, op) sits inside a rank row: `split` stripes, top first, as fractions of the row. */
function stripe(layers: string[], ops: string[], layer: string, op: string, shown: string): [number, number] {
  const ls = shown === "all" ? layers : [shown];
  const n = ls.length * ops.length;
  const k = Math.max(0, ls.indexOf(layer)) * ops.length + Math.max(0, ops.indexOf(op));
  return [k / n, (k + 1) / n];
}

function drawBars(d: DrawCtx, b: Bars, idx: number[], layers: string[], layer: string, hlRanks: Set<number> | null) {
  const { ctx } = d;
  const rowH = Math.abs(d.y(0) - d.y(1));
  // One layer: a bar per rank row. All layers: each row split, the first layer on top.
  const split = layer === "all" && layers.length > 1;
  const h = Math.max(1, rowH * (split ? 0.38 : 0.7));
  for (const i of idx) {
    const r = b.rank[i] ?? 0;
    const x0 = d.x(b.start[i] ?? 0);
    const x1 = d.x(b.end[i] ?? 0);
    if (x1 < d.area.left - 1 || x0 > d.area.left + d.area.width + 1) continue;
    const op = b.op[i] ?? "write";
    const lower = split && b.layer[i] !== layers[0];
    const top = d.y(r) - (split ? (lower ? -rowH * 0.02 : h + rowH * 0.02) : h / 2);
    ctx.globalAlpha = hlRanks && !hlRanks.has(r) ? 0.25 : lower ? 0.65 : 1;
    ctx.fillStyle = opColor(d, op);
    ctx.fillRect(x0, top, Math.max(1, x1 - x0), h);
  }
  ctx.globalAlpha = 1;
}

/** The density series shown for a layer choice. */
function densitySeries(g: Density, layer: string): Density["series"] {
  return g.series.filter((s) => layer === "all" || s.layer === layer);
}

function densityPeak(series: Density["series"]): number {
  let m = 0;
  for (const s of series) for (const v of s.bytes) if (v > m) m = v;
  return m;
}

function drawDensity(d: DrawCtx, g: Density, layers: string[], layer: string, hlRanks: Set<number> | null) {
  const { ctx } = d;
  const series = densitySeries(g, layer);
  const peak = densityPeak(series);
  if (peak <= 0) return;
  const ops = Array.from(new Set(g.series.map((s) => s.op))).sort((a, b) => (a === b ? 0 : a === "write" ? -1 : 1));
  const rowPx = Math.abs(d.y(0) - d.y(g.ranks_per_row));
  const lo = d.view.x0 - g.bin_width;
  const hi = d.view.x1;
  for (const s of series) {
    const [f0, f1] = stripe(layers, ops, s.layer, s.op, layer);
    ctx.fillStyle = opColor(d, s.op);
    for (let k = 0; k < s.cell.length; k++) {
      const cell = s.cell[k] ?? 0;
      const row = Math.floor(cell / g.bins);
      const bin = cell - row * g.bins;
      const t = g.t0 + bin * g.bin_width;
      if (t < lo || t > hi) continue;
      const first = g.rank0 + row * g.ranks_per_row;
      const top = d.y(first - 0.5 + g.ranks_per_row);
      const x0 = d.x(t);
      const x1 = d.x(t + g.bin_width);
      // Square root, as the heatmap: a cell with a quarter of the peak still shows at half strength.
      const v = s.bytes[k] ?? 0;
      const dim = hlRanks && !Array.from({ length: g.ranks_per_row }, (_, j) => first + j).some((r) => hlRanks.has(r));
      ctx.globalAlpha = (0.12 + 0.88 * Math.sqrt(v / peak)) * (dim ? 0.3 : 1);
      ctx.fillRect(x0, top + rowPx * f0, Math.max(1, x1 - x0), Math.max(0.5, rowPx * (f1 - f0)));
    }
  }
  ctx.globalAlpha = 1;
}

/** The cell of a density grid under (time, rank), in words. */
function densityPick(g: Density, layer: string, x: number, y: number): string | null {
  const bin = Math.floor((x - g.t0) / g.bin_width);
  const row = Math.floor((Math.round(y) - g.rank0) / g.ranks_per_row);
  if (bin < 0 || bin >= g.bins || row < 0 || row >= g.rows) return null;
  const cell = row * g.bins + bin;
  const first = g.rank0 + row * g.ranks_per_row;
  const who = g.ranks_per_row > 1 ? `ranks ${String(first)}–${String(first + g.ranks_per_row - 1)}` : `rank ${String(first)}`;
  const lines = [`${who} · ${seconds(g.t0 + bin * g.bin_width)} – ${seconds(g.t0 + (bin + 1) * g.bin_width)}`];
  for (const s of densitySeries(g, layer)) {
    let lo = 0;
    let hi = s.cell.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((s.cell[mid] ?? 0) < cell) lo = mid + 1;
      else hi = mid;
    }
    if (s.cell[lo] === cell) lines.push(`${layerName(s.layer)} ${s.op}: ${count(s.segments[lo])} segment(s) in flight, ${bytes(s.bytes[lo])}`);
  }
  if (lines.length === 1) lines.push("no I/O");
  return lines.join("\n");
}

/** The density grid in words: who moved the bytes, and when. */
function densitySummary(g: Density, layer: string): string {
  const series = densitySeries(g, layer);
  const perRow = new Map<number, number>();
  let all = 0;
  let first = Infinity;
  let last = -Infinity;
  for (const s of series) {
    for (let k = 0; k < s.cell.length; k++) {
      const cell = s.cell[k] ?? 0;
      const row = Math.floor(cell / g.bins);
      const bin = cell - row * g.bins;
      const v = s.bytes[k] ?? 0;
      perRow.set(row, (perRow.get(row) ?? 0) + v);
      all += v;
      first = Math.min(first, bin);
      last = Math.max(last, bin);
    }
  }
  if (!(all > 0)) return "no bytes moved";
  let top = 0;
  let topV = -1;
  for (const [r, v] of perRow) if (v > topV) [top, topV] = [r, v];
  const a = g.rank0 + top * g.ranks_per_row;
  const who = g.ranks_per_row > 1 ? `ranks ${String(a)}–${String(a + g.ranks_per_row - 1)}` : `rank ${String(a)}`;
  const even = perRow.size > 1 ? `, an even share would be ${percent(1 / perRow.size, 1)}` : "";
  return `I/O between ${seconds(g.t0 + first * g.bin_width)} and ${seconds(g.t0 + (last + 1) * g.bin_width)} on ${count(perRow.size)} rank row(s); ${who} moved the most (${percent(topV / all, 1)} of the bytes${even})`;
}

/** Ask the API for the zoomed window's segments (debounced); null while not zoomed, or while the overview is exact. */
function useTimelineWindow(analysisId: string | undefined, needed: boolean, view: Range | null, maxRank: number, layer: string) {
  const req = useMemo(() => {
    if (!analysisId || !needed || !view) return null;
    const t0 = Math.max(0, view.x0);
    const t1 = Math.max(t0 + 1e-6, view.x1);
    const rank0 = Math.max(0, Math.ceil(view.y0));
    const rank1 = Math.max(rank0, Math.min(maxRank, Math.floor(view.y1)));
    const query: { t0: number; t1: number; rank0: number; rank1: number; layer?: "POSIX" | "MPIIO" } = { t0, t1, rank0, rank1 };
    if (layer === "POSIX" || layer === "MPIIO") query.layer = layer;
    return { key: `${String(t0)}:${String(t1)}:${String(rank0)}:${String(rank1)}:${layer}`, query };
  }, [analysisId, needed, view, maxRank, layer]);
  // Wait for the wheel or the drag to settle: one request per stop, not one per frame. A window asked before
  // is served from the cache (zooming back out and in again).
  const asked = useDebounced(req, 250);
  const settled = asked !== null && req !== null && asked.key === req.key;
  const win = useQuery({
    queryKey: ["analysis", analysisId, "timeline", asked?.key],
    queryFn: ({ signal }) =>
      call(api.GET("/api/v1/analyses/{analysis_id}/plots/timeline", { params: { path: { analysis_id: analysisId ?? "" }, query: asked?.query ?? { t0: 0, t1: 0 } }, signal })),
    enabled: settled && Boolean(analysisId),
    staleTime: Infinity,
    placeholderData: keepPreviousData,
  });
  if (!req) return { state: "overview" as const };
  if (!settled || win.isPlaceholderData || win.isPending) return { state: "loading" as const, last: win.data ?? null };
  if (win.isError) return { state: "error" as const, error: asApiError(win.error).message };
  return { state: "done" as const, data: win.data };
}

export function TimelineView({
  p,
  hl,
  runtime,
  uid = "",
  run,
  xMax: sharedX = 0,
  xLink,
  analysisId,
}: { p: Schemas["TimelinePlot"]; hl: Highlight | null; runtime: number; analysisId?: string } & Shared) {
  const layers = useMemo(() => Array.from(new Set(p.layer)), [p.layer]);
  const [layer, setLayer] = useState(layers[0] ?? "all");
  const maxRank = useMemo(() => {
    let m = p.rank.reduce((a, r) => Math.max(a, r), 0);
    const g = p.density;
    if (g) m = Math.max(m, g.rank0 + g.rows * g.ranks_per_row - 1);
    return m;
  }, [p.rank, p.density]);
  const xMax = useMemo(() => Math.max(runtime, sharedX, p.end.reduce((m, e) => Math.max(m, e), 0)) || 1, [p.end, runtime, sharedX]);
  // Highlight a finding's ranks only when they are some of the ranks, not all of them.
  const hlRanks = useMemo(() => (hl?.ranks.length && new Set(hl.ranks).size <= maxRank ? new Set(hl.ranks) : null), [hl, maxRank]);
  const [view, setView] = useState<Range | null>(null);
  const onView = useCallback((v: Range, zoomed: boolean) => {
    setView(zoomed ? { x0: v.x0, x1: v.x1, y0: v.y0, y1: v.y1 } : null);
  }, []);
  // The overview is exact when every segment is its own bar: zooming then needs nothing new.
  const exact = p.points_shown === p.points_total && !p.density;
  const win = useTimelineWindow(analysisId, !exact, view, maxRank, layer);
  // While the next window loads, the last one stays drawn (no flash back to the density view at every pan).
  const shownWindow = win.state === "done" ? win.data : win.state === "loading" ? win.last : null;
  const full = shownWindow && !shownWindow.sampled ? shownWindow : null;
  const grid: Density | null = shownWindow?.sampled && shownWindow.density ? shownWindow.density : (p.density ?? null);
  const mode: "bars" | "window" | "density" = full ? "window" : grid ? "density" : "bars";
  const idx = useMemo(() => barIndex(full ?? p, layer), [full, p, layer]);
  const draw = useCallback(
    (d: DrawCtx) => {
      drawWindow(d, hl);
      drawRankRows(d, hlRanks);
      if (mode === "density" && grid) drawDensity(d, grid, layers, layer, hlRanks);
      else drawBars(d, full ?? p, idx, layers, layer, hlRanks);
    },
    [p, full, grid, mode, idx, hl, hlRanks, layer, layers],
  );
  const pick = useCallback(
    (x: number, y: number, d: DrawCtx) => {
      if (mode === "density" && grid) return densityPick(grid, layer, x, y);
      const b: Bars = full ?? p;
      const r = Math.round(y);
      const tol = ((d.view.x1 - d.view.x0) / d.area.width) * 3;
      for (const i of idx) {
        if (b.rank[i] !== r) continue;
        if ((b.start[i] ?? 0) - tol <= x && x <= (b.end[i] ?? 0) + tol)
          return `rank ${r} · ${layerName(b.layer[i])} ${b.op[i] ?? ""}\n${seconds(b.start[i])} – ${seconds(b.end[i])}\n${bytes(b.bytes[i])} in ${count(b.ops[i])} op(s)`;
      }
      return `rank ${r}`;
    },
    [p, full, grid, mode, idx, layer],
  );
  const overall = `${count(p.totals.ops)} operations moving ${bytes(p.totals.bytes)} on ${count(maxRank + 1)} rank(s) over ${seconds(xMax)}; ${seconds(p.totals.time)} of I/O summed over ranks`;
  const where = (w: Window) => `${seconds(w.t0)} – ${seconds(w.t1)}, ranks ${String(w.rank0)}–${String(w.rank1)}`;
  const summary =
    mode === "window" && full
      ? `zoomed to ${where(full)}: full resolution, ${count(full.points_total)} segment(s) moving ${bytes(full.totals.bytes)}; whole job: ${overall}`
      : mode === "density" && grid
        ? `density view of ${shownWindow?.sampled ? `the zoomed window ${where(shownWindow)}, ${count(shownWindow.points_total)} segments` : `${count(p.points_total)} segments`}: ${densitySummary(grid, layer)}; whole job: ${overall}`
        : overall;
  const status =
    win.state === "loading"
      ? "loading this window at full resolution…"
      : win.state === "error"
        ? `could not load this window at full resolution: ${win.error}`
        : win.state === "done"
          ? win.data.sampled
            ? `${count(win.data.points_total)} segments in this window, over the ${count(win.data.limit)}-segment budget: still a density view, zoom in further for single segments`
            : `full resolution: ${count(win.data.points_total)} segment${win.data.points_total === 1 ? "" : "s"} in this window`
          : null;
  return (
    <section className="plot-card" aria-labelledby={`plot-timeline${uid}`} tabIndex={-1} data-highlights>
      <header>
        <PlotTitle id={`plot-timeline${uid}`} run={run}>Per-rank timeline</PlotTitle>
        <LayerPicker layers={layers} value={layer} onChange={setLayer} name={`timeline-layer${uid}`} />
      </header>
      <PlotCanvas
        testId="plot-timeline"
        xLink={xLink}
        label={mode === "density" ? "Per-rank I/O timeline, density view" : "Per-rank I/O timeline"}
        summary={summary}
        xLabel="time since job start"
        yLabel="rank"
        xUnit="s"
        yUnit="rank"
        yInteger
        domain={{ x0: 0, x1: xMax, y0: -0.5, y1: maxRank + 0.5 }}
        height={Math.min(420, Math.max(200, 60 + (maxRank + 1) * 6))}
        draw={draw}
        pick={pick}
        onView={onView}
        focus={hl ? { key: hl.key, x: hl.window } : null}
      >
        <div className="plot-foot" data-mode={mode}>
          {mode === "density" && grid ? (
            <>
              <Legend
                items={[
                  { label: "write: darker = more bytes", color: WRITE_CSS },
                  { label: "read: darker = more bytes", color: READ_CSS },
                ]}
              />
              <span className="muted small" data-testid="timeline-density-legend">
                Density view (over {count(grid.budget)} segments): bytes moved per {grid.ranks_per_row > 1 ? `run of ${count(grid.ranks_per_row)} ranks` : "rank"} and{" "}
                {seconds(grid.bin_width)} bin; darkest cell {bytes(densityPeak(densitySeries(grid, layer)))}, up to {count(grid.peak_segments)} segments in flight · zoom in for single segments
              </span>
            </>
          ) : (
            <Legend items={OP_LEGEND(WRITE_CSS, READ_CSS)} />
          )}
          {layer === "all" && layers.length > 1 && (
            <span className="muted small">
              each rank: {layerName(layers[0])} above, {layerName(layers[1])} below{mode === "density" ? "" : " (lighter)"}
            </span>
          )}
          {status !== null ? (
            <span className="muted small" role="status" data-testid="timeline-resolution">
              {status}
            </span>
          ) : mode === "density" ? (
            <span className="muted small">{count(p.points_total)} segments, every one counted in the grid</span>
          ) : (
            <Shown shown={p.points_shown} total={p.points_total} what="segments" />
          )}
          {mode === "bars" && p.quantum > 0 && <span className="muted small">bars merge gaps up to {seconds(p.quantum)}</span>}
          <span className="muted small">
            {Object.entries((full ?? p).layer_totals)
              .map(([l, t]) => `${layerName(l)}: ${bytes(t.bytes)}, ${count(t.ops)} ops, ${seconds(t.time)}`)
              .join(" · ")}
            {full ? " (this window)" : ""}
          </span>
        </div>
      </PlotCanvas>
    </section>
  );
}

// --- transfer sizes ---------------------------------------------------------------------------

export function TransferSizesView({
  p,
  hl,
  runtime,
  uid = "",
  run,
  xMax: sharedX = 0,
  yRange,
  xLink,
}: { p: Schemas["TransferSizePlot"]; hl: Highlight | null; runtime: number } & Shared) {
  const layers = useMemo(() => Array.from(new Set(p.layer)), [p.layer]);
  const [layer, setLayer] = useState("all");
  const idx = useMemo(() => p.layer.flatMap((l, i) => (layer === "all" || l === layer ? [i] : [])), [p.layer, layer]);
  const xMax = useMemo(() => Math.max(runtime, sharedX, p.time.reduce((m, e) => Math.max(m, e), 0)) || 1, [p.time, runtime, sharedX]);
  const [yMin, yMax] = useMemo(() => {
    const [lo, hi] = sizeRange(p);
    return yRange ? [Math.min(lo, yRange[0]), Math.max(hi, yRange[1])] : [lo, hi];
  }, [p, yRange]);
  const draw = useCallback(
    (d: DrawCtx) => {
      drawWindow(d, hl);
      const { ctx, view, area } = d;
      // One path per look (inside the highlight or not, the operation's colour, a POSIX square or an MPI-IO
      // dot), filled once, and only the points in the x range shown: 100,000 points redraw in half the time
      // of a fill per point, and faster than uPlot (bench/plot-kernel.mjs, docs/plot-kernel.md).
      const margin = ((view.x1 - view.x0) / Math.max(area.width, 1)) * 3;
      const paths = new Map<string, { path: Path2D; op: Op; inside: boolean }>();
      for (const i of idx) {
        const t = p.time[i] ?? 0;
        if (t < view.x0 - margin || t > view.x1 + margin) continue;
        const inside = !hl?.window || (t >= hl.window[0] && t <= hl.window[1]);
        const dot = p.layer[i] === "MPIIO";
        const op = p.op[i] ?? "write";
        const key = `${inside ? "in" : "out"}|${dot ? "dot" : "square"}|${op}`;
        let group = paths.get(key);
        if (!group) {
          group = { path: new Path2D(), op, inside };
          paths.set(key, group);
        }
        const { path } = group;
        const px = d.x(t);
        const py = d.y(Math.max(1, p.size[i] ?? 1));
        if (dot) {
          path.moveTo(px + 2.5, py);
          path.arc(px, py, 2.5, 0, Math.PI * 2);
        } else path.rect(px - 2, py - 2, 4, 4);
      }
      for (const { path, op, inside } of paths.values()) {
        ctx.globalAlpha = inside ? 0.85 : 0.25;
        ctx.fillStyle = opColor(d, op);
        ctx.fill(path);
      }
      ctx.globalAlpha = 1;
    },
    [p, idx, hl],
  );
  const pick = useCallback(
    (x: number, y: number, d: DrawCtx) => {
      let best = -1;
      let bd = 64;
      for (const i of idx) {
        const dx = d.x(p.time[i] ?? 0) - d.x(x);
        const dy = d.y(Math.max(1, p.size[i] ?? 1)) - d.y(y);
        const dist = dx * dx + dy * dy;
        if (dist < bd) {
          bd = dist;
          best = i;
        }
      }
      if (best < 0) return null;
      return `${p.layer[best] === "MPIIO" ? "MPI-IO" : (p.layer[best] ?? "")} ${p.op[best] ?? ""} of ${bytes(p.size[best])}\nat ${seconds(p.time[best])}`;
    },
    [p, idx],
  );
  const h = p.histogram;
  const binMax = Math.max(1, ...h.counts.flat());
  return (
    <section className="plot-card" aria-labelledby={`plot-sizes${uid}`} tabIndex={-1} data-highlights>
      <header>
        <PlotTitle id={`plot-sizes${uid}`} run={run}>Transfer sizes over time</PlotTitle>
        <LayerPicker layers={layers} value={layer} onChange={setLayer} name={`sizes-layer${uid}`} />
      </header>
      <PlotCanvas
        testId="plot-sizes"
        xLink={xLink}
        label="Transfer size over time"
        summary={sizeSummary(p)}
        xLabel="time since job start"
        yLabel="request size"
        xUnit="s"
        yUnit="B"
        yLog
        domain={{ x0: 0, x1: xMax, y0: yMin, y1: yMax }}
        draw={draw}
        pick={pick}
        focus={hl ? { key: hl.key, x: hl.window } : null}
      >
        <div className="plot-foot">
          <Legend items={OP_LEGEND(WRITE_CSS, READ_CSS)} />
          <span className="muted small">■ POSIX · ● MPI-IO</span>
          <Shown shown={p.points_shown} total={p.points_total} what="requests" />
        </div>
      </PlotCanvas>
      <details className="histogram">
        <summary>Exact request-size histogram (all {count(p.totals.ops)} requests)</summary>
        <ScrollBox label="Exact request-size histogram">
          <table className="data compact">
            <thead>
              <tr>
                <th scope="col">size bin</th>
                {h.layer.map((l, i) => (
                  <th key={i} scope="col">
                    {l === "MPIIO" ? "MPI-IO" : l} {h.op[i]}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {h.bins.map((b, bi) => (
                <tr key={b}>
                  <th scope="row">{b.replace("_", "–").replace("PLUS", "+")}</th>
                  {h.counts.map((row, i) => (
                    <td key={i} className="num">
                      <span className="bar" style={{ width: `${((row[bi] ?? 0) / binMax) * 60}px` }} aria-hidden="true" />
                      {count(row[bi] ?? 0)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      </details>
    </section>
  );
}

// --- spatiality -------------------------------------------------------------------------------

export function SpatialityView({
  p,
  hl,
  runtime,
  uid = "",
  run,
  xMax: sharedX = 0,
  yRange,
  xLink,
}: { p: Schemas["SpatialityPlot"]; hl: Highlight | null; runtime: number } & Shared) {
  const [hidden, setHidden] = useState<Set<number>>(new Set());
  const xMax = useMemo(() => Math.max(runtime, sharedX, p.time.reduce((m, e) => Math.max(m, e), 0)) || 1, [p.time, runtime, sharedX]);
  const yMax = useMemo(() => Math.max(offsetMax(p), yRange?.[1] ?? 0), [p, yRange]);
  const draw = useCallback(
    (d: DrawCtx) => {
      drawWindow(d, hl);
      const { ctx } = d;
      ctx.lineWidth = 2;
      for (let i = 0; i < p.time.length; i++) {
        const f = p.file[i] ?? 0;
        if (hidden.has(f)) continue;
        const t = p.time[i] ?? 0;
        const inside = !hl?.window || (t >= hl.window[0] && t <= hl.window[1]);
        ctx.globalAlpha = inside ? 0.9 : 0.25;
        ctx.strokeStyle = d.colors.series[f % d.colors.series.length] ?? "#888";
        const px = d.x(t);
        const y0 = d.y(p.offset[i] ?? 0);
        const y1 = Math.min(y0 - 2, d.y((p.offset[i] ?? 0) + (p.length[i] ?? 0)));
        ctx.beginPath();
        ctx.moveTo(px, y0);
        ctx.lineTo(px, y1);
        if (p.op[i] === "read") {
          ctx.moveTo(px - 2, y1);
          ctx.lineTo(px + 2, y1);
        }
        ctx.stroke();
      }
      ctx.globalAlpha = 1;
      ctx.lineWidth = 1;
    },
    [p, hl, hidden],
  );
  const pick = useCallback(
    (x: number, y: number, d: DrawCtx) => {
      let best = -1;
      let bd = 64;
      for (let i = 0; i < p.time.length; i++) {
        if (hidden.has(p.file[i] ?? 0)) continue;
        const dx = d.x(p.time[i] ?? 0) - d.x(x);
        const o = p.offset[i] ?? 0;
        const l = p.length[i] ?? 0;
        const dy = y < o ? d.y(o) - d.y(y) : y > o + l ? d.y(o + l) - d.y(y) : 0;
        const dist = dx * dx + dy * dy;
        if (dist < bd) {
          bd = dist;
          best = i;
        }
      }
      if (best < 0) return null;
      const f = p.files[p.file[best] ?? 0];
      return `${f?.path ?? "?"}\n${p.op[best] ?? ""} ${bytes(p.length[best])} at offset ${bytes(p.offset[best])}\nat ${seconds(p.time[best])}`;
    },
    [p, hidden],
  );
  return (
    <section className="plot-card" aria-labelledby={`plot-spatial${uid}`} tabIndex={-1} data-highlights>
      <header>
        <PlotTitle id={`plot-spatial${uid}`} run={run}>Spatiality: file offset over time</PlotTitle>
      </header>
      <PlotCanvas
        testId="plot-spatiality"
        xLink={xLink}
        label="File offset over time for the busiest files"
        summary={`${count(p.points_total)} requests to the ${count(p.files.length)} busiest of ${count(p.files_total)} traced file(s), ${bytes(p.totals.bytes)} in all`}
        xLabel="time since job start"
        yLabel="file offset"
        xUnit="s"
        yUnit="B"
        domain={{ x0: 0, x1: xMax, y0: 0, y1: yMax * 1.02 }}
        draw={draw}
        pick={pick}
        focus={hl ? { key: hl.key, x: hl.window } : null}
      >
        <div className="plot-foot">
          <Shown shown={p.points_shown} total={p.points_total} what="requests" />
          <span className="muted small">
            {p.files.length} busiest of {count(p.files_total)} traced files · reads have a tick
          </span>
        </div>
        <ul className="legend files">
          {p.files.map((f, i) => (
            <li key={f.record_id}>
              <label>
                <input
                  type="checkbox"
                  checked={!hidden.has(i)}
                  onChange={() => {
                    setHidden((h) => {
                      const n = new Set(h);
                      if (n.has(i)) n.delete(i);
                      else n.add(i);
                      return n;
                    });
                  }}
                />
                <span className="swatch" style={{ background: `var(--series-${i % 8})` }} aria-hidden="true" />
                <span className="path">{f.path}</span>
                <span className="muted small">
                  {" "}
                  {bytes(f.bytes)} · {count(f.ops)} ops
                </span>
              </label>
            </li>
          ))}
        </ul>
      </PlotCanvas>
    </section>
  );
}

// --- phases -----------------------------------------------------------------------------------

export function PhasesView({
  p,
  hl,
  runtime,
  nprocs,
  uid = "",
  run,
  xMax: sharedX = 0,
  xLink,
}: { p: Schemas["PhasesPlot"]; hl: Highlight | null; runtime: number; nprocs: number } & Shared) {
  const xMax = useMemo(() => Math.max(runtime, sharedX, maxOf(p.end), maxOf(p.last_end)) || 1, [p.end, p.last_end, runtime, sharedX]);
  const maxRank = Math.max(nprocs - 1, ...p.last_rank, ...p.slowest_rank, 0);
  const hlRanks = useMemo(() => (hl?.ranks.length && new Set(hl.ranks).size < nprocs ? new Set(hl.ranks) : null), [hl, nprocs]);
  const stragglers = useMemo(() => p.alone.map((a, i) => a > 0 && a >= 0.1 * ((p.end[i] ?? 0) - (p.start[i] ?? 0))), [p]);
  const draw = useCallback(
    (d: DrawCtx) => {
      drawWindow(d, hl);
      drawRankRows(d, hlRanks);
      const { ctx, area } = d;
      for (let i = 0; i < p.start.length; i++) {
        const a = d.x(p.start[i] ?? 0);
        const b = Math.max(a + 1, d.x(p.end[i] ?? 0));
        ctx.fillStyle = d.colors.series[i % 2 === 0 ? 0 : 1] ?? "#888";
        ctx.globalAlpha = 0.18;
        ctx.fillRect(a, area.top, b - a, area.height);
        ctx.globalAlpha = 1;
        // Straggler: the last rank alone from the second-to-last finish to its own.
        const lr = p.last_rank[i] ?? 0;
        const y = d.y(lr);
        const s0 = d.x(p.second_end[i] ?? 0);
        const s1 = Math.max(s0 + 2, d.x(p.last_end[i] ?? 0));
        ctx.fillStyle = stragglers[i] ? d.colors.straggler : d.colors.axis;
        ctx.fillRect(s0, y - 3, s1 - s0, 6);
        ctx.beginPath();
        ctx.arc(s1, y, stragglers[i] ? 5 : 3, 0, Math.PI * 2);
        ctx.fill();
        // Slowest (busiest) and fastest ranks of the phase.
        ctx.fillStyle = d.colors.write;
        ctx.fillRect(a - 3, d.y(p.slowest_rank[i] ?? 0) - 3, 6, 6);
        ctx.fillStyle = d.colors.read;
        ctx.fillRect(a - 3, d.y(p.fastest_rank[i] ?? 0) - 3, 6, 6);
      }
    },
    [p, hl, hlRanks, stragglers],
  );
  const pick = useCallback(
    (x: number) => {
      for (let i = 0; i < p.start.length; i++) {
        if ((p.start[i] ?? 0) <= x && x <= Math.max(p.end[i] ?? 0, p.last_end[i] ?? 0))
          return `phase ${i + 1}: ${seconds(p.start[i])} – ${seconds(p.end[i])}\n${bytes(p.bytes[i])}, ${count(p.ops[i])} ops, ${count(p.ranks[i])} ranks\nlast: rank ${p.last_rank[i] ?? "?"}, alone ${seconds(p.alone[i])}${stragglers[i] ? " (straggler)" : ""}\nbusiest: rank ${p.slowest_rank[i] ?? "?"} (${seconds(p.slowest_busy[i])}) · least busy: rank ${p.fastest_rank[i] ?? "?"} (${seconds(p.fastest_busy[i])})`;
      }
      return null;
    },
    [p, stragglers],
  );
  const nStrag = stragglers.filter(Boolean).length;
  return (
    <section className="plot-card" aria-labelledby={`plot-phases${uid}`} tabIndex={-1} data-highlights>
      <header>
        <PlotTitle id={`plot-phases${uid}`} run={run}>I/O phases and stragglers</PlotTitle>
        <span className={nStrag ? "badge warning" : "badge ok"}>{nStrag ? `${count(nStrag)} straggler phase(s)` : "no stragglers"}</span>
      </header>
      <PlotCanvas
        testId="plot-phases"
        xLink={xLink}
        label="I/O phases with the last rank to finish each"
        summary={`${count(p.start.length)} I/O phase(s) over ${seconds(xMax)}, ${nStrag ? `${count(nStrag)} with a straggler rank` : "none with a straggler"}`}
        xLabel="time since job start"
        yLabel="rank"
        xUnit="s"
        yUnit="rank"
        yInteger
        domain={{ x0: 0, x1: xMax, y0: -0.5, y1: maxRank + 0.5 }}
        draw={draw}
        pick={pick}
        focus={hl ? { key: hl.key, x: hl.window } : null}
      >
        <div className="plot-foot">
          <Legend
            items={[
              { label: "phase", color: "var(--series-0)" },
              { label: "last rank alone (straggler)", color: "var(--plot-straggler)" },
              { label: "busiest rank", color: WRITE_CSS },
              { label: "least busy rank", color: READ_CSS },
            ]}
          />
          <Shown shown={p.points_shown} total={p.points_total} what="phases" />
          <span className="muted small">gaps under {seconds(p.threshold)} lie inside a phase</span>
        </div>
      </PlotCanvas>
    </section>
  );
}

// --- OSTs -------------------------------------------------------------------------------------

export type OstMetric = "bytes" | "time";

/**
 * Bytes or I/O time per OST. Two runs on the same axes (the compare view) pass `osts`, the OST ids both
 * panels place bars at (the union of both runs'), `yMax`, the shared scale of each metric, and the
 * metric with its setter so both panels switch together.
 */
export function OstView({
  p,
  uid = "",
  run,
  osts,
  yMax: sharedY,
  metric: metricProp,
  onMetric,
  xLink,
}: {
  p: Schemas["OstPlot"];
  osts?: number[];
  yMax?: Record<OstMetric, number>;
  metric?: OstMetric;
  onMetric?: (m: OstMetric) => void;
} & Shared) {
  const [ownMetric, setOwnMetric] = useState<OstMetric>("bytes");
  const metric = metricProp ?? ownMetric;
  const setMetric = onMetric ?? setOwnMetric;
  const values = metric === "bytes" ? p.bytes : p.time;
  const yMax = Math.max(1e-9, sharedY?.[metric] ?? 0, ...values) * 1.08;
  const ids = useMemo(() => osts ?? p.ost, [osts, p.ost]);
  // Where each of this run's OSTs sits on the x axis.
  const at = useMemo(() => {
    const pos = new Map(ids.map((o, i) => [o, i]));
    return p.ost.map((o, i) => pos.get(o) ?? i);
  }, [ids, p.ost]);
  const n = ids.length;
  const draw = useCallback(
    (d: DrawCtx) => {
      const { ctx } = d;
      const mean = values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
      const w = Math.min(48, Math.max(1, (d.x(1) - d.x(0)) * 0.7));
      for (let i = 0; i < values.length; i++) {
        const v = values[i] ?? 0;
        ctx.fillStyle = v > 2 * mean && values.length > 1 ? d.colors.straggler : metric === "bytes" ? d.colors.read : d.colors.write;
        const y = d.y(v);
        const x = d.x(at[i] ?? i);
        ctx.fillRect(x - w / 2, y, w, d.y(0) - y);
      }
      ctx.strokeStyle = d.colors.axis;
      ctx.setLineDash([4, 4]);
      ctx.beginPath();
      ctx.moveTo(d.area.left, d.y(mean));
      ctx.lineTo(d.area.left + d.area.width, d.y(mean));
      ctx.stroke();
      ctx.setLineDash([]);
    },
    [values, at, metric],
  );
  const pick = useCallback(
    (x: number) => {
      const k = Math.round(x);
      if (k < 0 || k >= n) return null;
      const i = at.indexOf(k);
      if (i < 0) return `OST ${ids[k] ?? "?"}\nnot used by this run`;
      return `OST ${p.ost[i] ?? "?"}\n${bytes(p.bytes[i])} · ${seconds(p.time[i])} · ${count(p.files[i])} file(s)`;
    },
    [p, n, at, ids],
  );
  const xTick = useCallback((v: number) => (Number.isInteger(v) && v >= 0 && v < n ? String(ids[v] ?? "") : null), [ids, n]);
  return (
    <section className="plot-card" aria-labelledby={`plot-osts${uid}`} tabIndex={-1} data-testid="ost-card" data-metric={metric}>
      <header>
        <PlotTitle id={`plot-osts${uid}`} run={run}>Load per Lustre OST</PlotTitle>
        <fieldset className="segmented">
          <legend className="sr-only">OST metric</legend>
          {(["bytes", "time"] as const).map((m) => (
            <label key={m} className={metric === m ? "on" : ""}>
              <input
                type="radio"
                name={`ost-metric${uid}`}
                checked={metric === m}
                onChange={() => {
                  setMetric(m);
                }}
              />
              {m === "bytes" ? "Bytes" : "I/O time"}
            </label>
          ))}
        </fieldset>
      </header>
      <PlotCanvas
        testId="plot-osts"
        xLink={xLink}
        label={`${metric === "bytes" ? "Bytes" : "I/O time"} per OST`}
        summary={ostSummary(p, metric)}
        xLabel="OST"
        yLabel={metric === "bytes" ? "bytes" : "I/O time"}
        xUnit="OST"
        yUnit={metric === "bytes" ? "B" : "s"}
        xInteger
        zoomY={false}
        domain={{ x0: -0.5, x1: n - 0.5, y0: 0, y1: yMax }}
        draw={draw}
        pick={pick}
        xTick={xTick}
      >
        <div className="plot-foot">
          <span className="muted small">
            {count(p.ost.length)} OST{p.ost.length === 1 ? "" : "s"}
            {n > p.ost.length ? ` (of ${count(n)} on the axis)` : ""} · {bytes(p.totals.bytes)} · {seconds(p.totals.time)} · dashed line: mean · red: over
            twice the mean
          </span>
        </div>
      </PlotCanvas>
    </section>
  );
}

// --- heatmap ----------------------------------------------------------------------------------

type HeatOp = "write" | "read" | "both";

/** The heatmap in words: who moved the bytes, when. */
function heatmapSummary(p: Schemas["HeatmapPlot"]): string {
  const rows = p.rank.length;
  const totals = p.rank.map((_, i) => (p.read[i] ?? []).reduce((a, b) => a + b, 0) + (p.write[i] ?? []).reduce((a, b) => a + b, 0));
  const all = totals.reduce((a, b) => a + b, 0);
  let busiest = 0;
  totals.forEach((v, i) => {
    if (v > (totals[busiest] ?? 0)) busiest = i;
  });
  const cols = p.time.length;
  let first = -1;
  let last = -1;
  for (let j = 0; j < cols; j++) {
    const any = p.rank.some((_, i) => (p.read[i]?.[j] ?? 0) + (p.write[i]?.[j] ?? 0) > 0);
    if (any) {
      if (first < 0) first = j;
      last = j;
    }
  }
  const who = (i: number) => {
    const a = p.rank[i] ?? 0;
    const b = p.rank_last[i] ?? a;
    return a === b ? `rank ${String(a)}` : `ranks ${String(a)}–${String(b)}`;
  };
  const when = first < 0 ? "" : ` between ${seconds(p.time[first])} and ${seconds((p.time[last] ?? 0) + p.bin_width)}`;
  const share = all > 0 ? `; ${who(busiest)} moved ${percent((totals[busiest] ?? 0) / all)} of the bytes` : "";
  return `${count(p.ranks_total)} rank(s) in ${count(rows)} row(s) read ${bytes(p.read_bytes)} and wrote ${bytes(p.write_bytes)}${when}${share} (${p.source === "HEATMAP" ? "Darshan heatmap" : "from the DXT trace"}, ${seconds(p.bin_width)} bins)`;
}

export function HeatmapView({ p, hl, runtime, uid = "" }: { p: Schemas["HeatmapPlot"]; hl: Highlight | null; runtime: number; uid?: string }) {
  const [op, setOp] = useState<HeatOp>(p.write_bytes >= p.read_bytes ? "write" : "read");
  const rows = p.rank.length;
  const xMax = Math.max(runtime, (p.time[p.time.length - 1] ?? 0) + p.bin_width) || 1;
  const cell = useCallback(
    (i: number, j: number) =>
      op === "write" ? (p.write[i]?.[j] ?? 0) : op === "read" ? (p.read[i]?.[j] ?? 0) : (p.write[i]?.[j] ?? 0) + (p.read[i]?.[j] ?? 0),
    [p, op],
  );
  const peak = useMemo(() => {
    let m = 0;
    for (let i = 0; i < rows; i++) for (let j = 0; j < p.time.length; j++) m = Math.max(m, cell(i, j));
    return m;
  }, [rows, p.time.length, cell]);
  const rowOf = useCallback((rank: number) => p.rank.findIndex((a, i) => a <= rank && rank <= (p.rank_last[i] ?? a)), [p]);
  const hlRows = useMemo(() => {
    if (!hl?.ranks.length) return null;
    const set = new Set(hl.ranks.map(rowOf).filter((i) => i >= 0));
    return set.size && set.size < rows ? set : null;
  }, [hl, rowOf, rows]);
  const draw = useCallback(
    (d: DrawCtx) => {
      drawWindow(d, hl);
      drawRankRows(d, hlRows);
      const { ctx } = d;
      const color = op === "read" ? d.colors.read : d.colors.write;
      const rowH = Math.abs(d.y(0) - d.y(1));
      for (let i = 0; i < rows; i++) {
        for (let j = 0; j < p.time.length; j++) {
          const v = cell(i, j);
          if (v <= 0 || peak <= 0) continue;
          const x0 = d.x(p.time[j] ?? 0);
          const x1 = d.x((p.time[j] ?? 0) + p.bin_width);
          // Square root: a bin with a quarter of the peak still shows at half strength.
          ctx.globalAlpha = 0.12 + 0.88 * Math.sqrt(v / peak);
          ctx.fillStyle = color;
          ctx.fillRect(x0, d.y(i) - rowH / 2, Math.max(1, x1 - x0), Math.max(1, rowH));
        }
      }
      ctx.globalAlpha = 1;
    },
    [p, rows, cell, peak, op, hl, hlRows],
  );
  const pick = useCallback(
    (x: number, y: number) => {
      const i = Math.round(y);
      const j = Math.floor(x / p.bin_width);
      if (i < 0 || i >= rows || j < 0 || j >= p.time.length) return null;
      const a = p.rank[i] ?? 0;
      const b = p.rank_last[i] ?? a;
      const who = a === b ? `rank ${String(a)}` : `ranks ${String(a)}–${String(b)}`;
      return `${who} · ${seconds(p.time[j])} – ${seconds((p.time[j] ?? 0) + p.bin_width)}\nwrote ${bytes(p.write[i]?.[j] ?? 0)}, read ${bytes(p.read[i]?.[j] ?? 0)}`;
    },
    [p, rows],
  );
  // Rows hold ranks_per_row ranks each: a tick names the first rank of its row, so the axis counts ranks.
  const yTick = useCallback(
    (v: number) => (Number.isInteger(v) && v >= 0 && v < rows ? String(p.rank[v] ?? v) : null),
    [p.rank, rows],
  );
  const summary = heatmapSummary(p);
  return (
    <section className="plot-card" aria-labelledby={`plot-heatmap${uid}`} tabIndex={-1} data-highlights>
      <header>
        <h3 id={`plot-heatmap${uid}`}>Heatmap: bytes by rank and time</h3>
        <fieldset className="segmented">
          <legend className="sr-only">heatmap operation</legend>
          {(["write", "read", "both"] as const).map((o) => (
            <label key={o} className={op === o ? "on" : ""}>
              <input
                type="radio"
                name={`heatmap-op${uid}`}
                value={o}
                checked={op === o}
                onChange={() => {
                  setOp(o);
                }}
              />
              {o === "both" ? "read + write" : o}
            </label>
          ))}
        </fieldset>
      </header>
      <PlotCanvas
        testId="plot-heatmap"
        label="Heatmap of bytes by rank and time"
        summary={summary}
        xLabel="time since job start"
        yLabel={p.ranks_per_row > 1 ? `rank (rows of ${String(p.ranks_per_row)}, ${count(p.ranks_total)} ranks)` : "rank"}
        xUnit="s"
        yUnit="rank"
        yInteger
        yTick={yTick}
        domain={{ x0: 0, x1: xMax, y0: -0.5, y1: rows - 0.5 }}
        height={Math.min(420, Math.max(200, 60 + rows * 6))}
        draw={draw}
        pick={pick}
        focus={hl ? { key: hl.key, x: hl.window } : null}
      >
        <div className="plot-foot">
          <Legend items={[{ label: op === "read" ? "read: darker = more bytes" : `${op === "both" ? "read + write" : "write"}: darker = more bytes`, color: op === "read" ? READ_CSS : WRITE_CSS }]} />
          <span className="muted small">darkest bin: {bytes(peak)} · {seconds(p.bin_width)} per bin</span>
          {p.notes.map((n) => (
            <span key={n} className="muted small">
              {n}
            </span>
          ))}
        </div>
      </PlotCanvas>
    </section>
  );
}
