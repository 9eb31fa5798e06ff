// An interactive canvas plot: wheel to zoom (shift: y axis), drag to pan, double-click or "Reset"
// to see everything, keyboard (arrows, + and -, 0) when focused. Each plot supplies a draw
// function working in data coordinates and, optionally, a pick function for the tooltip.
import { type KeyboardEvent, type PointerEvent, type ReactNode, useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { tick as tickLabel } from "../lib/format";

export interface View {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

export interface Palette {
  write: string;
  read: string;
  grid: string;
  axis: string;
  text: string;
  hl: string;
  hlBand: string;
  straggler: string;
  bg: string;
  series: string[];
}

export interface DrawCtx {
  ctx: CanvasRenderingContext2D;
  /** Data x to canvas px. */
  x: (v: number) => number;
  /** Data y (raw, not log) to canvas px. */
  y: (v: number) => number;
  view: View;
  area: { left: number; top: number; width: number; height: number };
  colors: Palette;
}

/** Plots that share an x axis (two runs stacked in the compare view): the x range shown, kept in step. */
export interface XLink {
  /** The x range the linked plots show; null: all of it. */
  range: [number, number] | null;
  /** Called when this plot's x range changes (zoom, pan, reset). */
  onRange: (r: [number, number] | null) => void;
}

export interface PlotProps {
  label: string;
  /** What the data shows, in words (the canvas's accessible name): "1,024 requests by 32 ranks over 14 s". */
  summary?: string;
  xLabel: string;
  yLabel: string;
  xUnit: string;
  yUnit: string;
  /** Data domain, raw values. */
  domain: View;
  yLog?: boolean;
  zoomY?: boolean;
  height?: number;
  draw: (d: DrawCtx) => void;
  pick?: (x: number, y: number, d: DrawCtx) => string | null;
  xTick?: (v: number) => string | null;
  yTick?: (v: number) => string | null;
  /** Integer ticks only (ranks, OSTs). */
  yInteger?: boolean;
  xInteger?: boolean;
  /** Zoom to this x range whenever focusKey changes. */
  focus?: { key: string; x: [number, number] | null } | null;
  /** Keep the x range in step with other plots on the same axes. */
  xLink?: XLink | null;
  /** Told the range shown (raw y values, not log) after every zoom, pan or reset; `zoomed` is false at the full domain. */
  onView?: (view: View, zoomed: boolean) => void;
  children?: ReactNode;
  testId?: string;
}

const MARGIN = { left: 64, right: 12, top: 20, bottom: 34 };
/** Below this width (px) a plot's ticks and marks get hard to read: say how to read it better. */
const NARROW = 480;

function readPalette(el: Element): Palette {
  const cs = getComputedStyle(el);
  const v = (n: string, d: string) => cs.getPropertyValue(n).trim() || d;
  return {
    write: v("--plot-write", "#d9480f"),
    read: v("--plot-read", "#1971c2"),
    grid: v("--plot-grid", "#e9ecef"),
    axis: v("--plot-axis", "#868e96"),
    text: v("--text-muted", "#555"),
    hl: v("--plot-hl", "#f59f00"),
    hlBand: v("--plot-hl-band", "rgba(245,159,0,0.15)"),
    straggler: v("--plot-straggler", "#e03131"),
    bg: v("--surface", "#fff"),
    series: [0, 1, 2, 3, 4, 5, 6, 7].map((i) => v(`--series-${i}`, "#888")),
  };
}

function niceStep(span: number, target: number): number {
  const raw = span / Math.max(1, target);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const m = raw / p;
  return (m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10) * p;
}

function linearTicks(lo: number, hi: number, target: number, integer: boolean, binary = false): { ticks: number[]; step: number } {
  if (!(hi > lo)) return { ticks: [lo], step: 1 };
  // Bytes: steps of 1, 2 or 5 times a power of 1024, so ticks read 256 MiB rather than 238.4 MiB.
  const base = binary ? Math.pow(1024, Math.max(0, Math.floor(Math.log((hi - lo) / target) / Math.log(1024)))) : 1;
  let step = niceStep((hi - lo) / base, target) * base;
  if (integer) step = Math.max(1, Math.round(step));
  const first = Math.ceil(lo / step) * step;
  const ticks: number[] = [];
  for (let t = first; t <= hi + step * 1e-9 && ticks.length < 50; t += step) ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return { ticks, step };
}

/** Log ticks at powers of two (bytes) spaced to about `target` ticks; lo/hi are log10 values. */
function logTicks(lo: number, hi: number, target: number): number[] {
  const l2lo = lo / Math.log10(2);
  const l2hi = hi / Math.log10(2);
  const every = Math.max(1, Math.ceil((l2hi - l2lo) / target));
  const step = every <= 1 ? 1 : every <= 2 ? 2 : every <= 5 ? 5 : 10 * Math.ceil(every / 10);
  const out: number[] = [];
  for (let e = Math.ceil(l2lo / step) * step; e <= l2hi; e += step) out.push(Math.pow(2, e));
  return out;
}

export function PlotCanvas(props: PlotProps) {
  const { domain, yLog = false, zoomY = true, height = 260 } = props;
  const ty = useCallback((v: number) => (yLog ? Math.log10(Math.max(v, 1)) : v), [yLog]);
  const full: View = { x0: domain.x0, x1: domain.x1, y0: ty(domain.y0), y1: ty(domain.y1) };
  const fullKey = `${full.x0},${full.x1},${full.y0},${full.y1}`;
  const [view, setView] = useState<View>(full);
  const viewRef = useRef(view);
  useLayoutEffect(() => {
    viewRef.current = view;
  }, [view]);
  const wrapRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(600);
  const [tip, setTip] = useState<{ x: number; y: number; text: string } | null>(null);
  const [themeTick, setThemeTick] = useState(0);
  const drag = useRef<{ px: number; py: number; view: View; moved: boolean } | null>(null);
  const drawCtxRef = useRef<DrawCtx | null>(null);

  // A new data set (another analysis, layer filter): show all of it.
  const [shownKey, setShownKey] = useState(fullKey);
  if (shownKey !== fullKey) {
    setShownKey(fullKey);
    setView(full);
  }

  const clamp = useCallback(
    (v: View): View => {
      const [fx0, fx1, fy0, fy1] = fullKey.split(",").map(Number) as [number, number, number, number];
      const fit = (a: number, b: number, lo: number, hi: number, minSpan: number): [number, number] => {
        let span = Math.min(Math.max(b - a, minSpan), hi - lo);
        if (!(span > 0)) span = hi - lo || 1;
        let s = a;
        if (s < lo) s = lo;
        if (s + span > hi) s = hi - span;
        return [s, s + span];
      };
      const [x0, x1] = fit(v.x0, v.x1, fx0, fx1, (fx1 - fx0) * 1e-6 || 1e-9);
      const [y0, y1] = fit(v.y0, v.y1, fy0, fy1, (fy1 - fy0) * 1e-6 || 1e-9);
      return { x0, x1, y0, y1 };
    },
    [fullKey],
  );

  // A newly selected finding: zoom to its time window (or show everything).
  const focusKey = props.focus?.key ?? "";
  const [focusedKey, setFocusedKey] = useState(focusKey);
  if (focusedKey !== focusKey) {
    setFocusedKey(focusKey);
    const fx = props.focus?.x;
    if (fx) {
      const pad = Math.max((fx[1] - fx[0]) * 0.25, (full.x1 - full.x0) * 0.01);
      setView(clamp({ x0: fx[0] - pad, x1: fx[1] + pad, y0: full.y0, y1: full.y1 }));
    } else setView(full);
  }

  // Another plot on the same axes moved: show the same x range (keeping this plot's y zoom).
  const linkRange = props.xLink?.range ?? null;
  const linkKey = linkRange ? `${String(linkRange[0])},${String(linkRange[1])}` : "";
  const [linkedKey, setLinkedKey] = useState(linkKey);
  if (linkedKey !== linkKey) {
    setLinkedKey(linkKey);
    setView((v) => (linkRange ? clamp({ ...v, x0: linkRange[0], x1: linkRange[1] }) : { ...v, x0: full.x0, x1: full.x1 }));
  }
  // This plot moved: tell the others.
  const onLinkRange = props.xLink?.onRange;
  useEffect(() => {
    if (!onLinkRange) return;
    onLinkRange(view.x0 === full.x0 && view.x1 === full.x1 ? null : [view.x0, view.x1]);
  }, [onLinkRange, view.x0, view.x1, full.x0, full.x1]);

  // The plot's owner may want more detail for the range shown (the timeline asks the API for the window).
  const onView = props.onView;
  useEffect(() => {
    if (!onView) return;
    const isFull = view.x0 === full.x0 && view.x1 === full.x1 && view.y0 === full.y0 && view.y1 === full.y1;
    const raw = yLog ? { ...view, y0: Math.pow(10, view.y0), y1: Math.pow(10, view.y1) } : view;
    onView(raw, !isFull);
  }, [onView, view, full.x0, full.x1, full.y0, full.y1, yLog]);

  useLayoutEffect(() => {
    const el = wrapRef.current;
    if (!el) return;
    const ro = new ResizeObserver(() => {
      setWidth(Math.max(200, Math.floor(el.clientWidth)));
    });
    ro.observe(el);
    const onTheme = () => {
      setThemeTick((t) => t + 1);
    };
    window.addEventListener("iodiag-theme", onTheme);
    return () => {
      ro.disconnect();
      window.removeEventListener("iodiag-theme", onTheme);
    };
  }, []);

  const area = { left: MARGIN.left, top: MARGIN.top, width: width - MARGIN.left - MARGIN.right, height: height - MARGIN.top - MARGIN.bottom };

  // Draw.
  const { draw, xUnit, yUnit, xTick, yTick, yInteger = false, xInteger = false } = props;
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    const ctx = canvas.getContext("2d");
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const colors = readPalette(canvas);
    const v = view;
    const sx = area.width / (v.x1 - v.x0 || 1);
    const sy = area.height / (v.y1 - v.y0 || 1);
    const x = (d: number) => area.left + (d - v.x0) * sx;
    const y = (d: number) => area.top + area.height - (ty(d) - v.y0) * sy;
    const d: DrawCtx = { ctx, x, y, view: v, area, colors };
    drawCtxRef.current = d;
    ctx.clearRect(0, 0, width, height);
    ctx.font = "11px system-ui, sans-serif";
    // Grid and ticks.
    ctx.strokeStyle = colors.grid;
    ctx.fillStyle = colors.text;
    ctx.lineWidth = 1;
    const xt = linearTicks(v.x0, v.x1, Math.max(2, Math.floor(area.width / 90)), xInteger, xUnit === "B");
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (const t of xt.ticks) {
      const px = Math.round(x(t)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(px, area.top);
      ctx.lineTo(px, area.top + area.height);
      ctx.stroke();
      const s = xTick ? xTick(t) : tickLabel(t, xUnit, xt.step);
      if (s !== null) ctx.fillText(s, px, area.top + area.height + 5);
    }
    const target = Math.max(2, Math.floor(area.height / 40));
    const yt = yLog
      ? { ticks: logTicks(v.y0, v.y1, target), step: 1 }
      : linearTicks(v.y0, v.y1, target, yInteger, yUnit === "B");
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    // The tick labels, also on the canvas element (what a test reads: the canvas's pixels say nothing).
    const yLabels: string[] = [];
    for (const t of yt.ticks) {
      const py = Math.round(y(t)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(area.left, py);
      ctx.lineTo(area.left + area.width, py);
      ctx.stroke();
      const s = yTick ? yTick(t) : tickLabel(t, yUnit, yt.step);
      if (s !== null) {
        ctx.fillText(s, area.left - 6, py);
        yLabels.push(s);
      }
    }
    canvas.dataset.yTicks = yLabels.join("|");
    // Marks, clipped to the plot area.
    ctx.save();
    ctx.beginPath();
    ctx.rect(area.left, area.top, area.width, area.height);
    ctx.clip();
    draw(d);
    ctx.restore();
    ctx.strokeStyle = colors.axis;
    ctx.strokeRect(area.left + 0.5, area.top + 0.5, area.width, area.height);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- area derives from width and height
  }, [view, width, height, draw, themeTick, xUnit, yUnit, xTick, yTick, yLog, yInteger, xInteger, ty]);

  const zoom = useCallback(
    (factor: number, cx: number | null, cy: number | null, axes: "x" | "y" | "xy") => {
      setView((v) => {
        const ax = cx ?? (v.x0 + v.x1) / 2;
        const ay = cy ?? (v.y0 + v.y1) / 2;
        const n = { ...v };
        if (axes !== "y") {
          n.x0 = ax - (ax - v.x0) * factor;
          n.x1 = ax + (v.x1 - ax) * factor;
        }
        if (axes !== "x" && zoomY) {
          n.y0 = ay - (ay - v.y0) * factor;
          n.y1 = ay + (v.y1 - ay) * factor;
        }
        return clamp(n);
      });
    },
    [clamp, zoomY],
  );

  const pan = useCallback(
    (fx: number, fy: number) => {
      setView((v) => {
        const dx = (v.x1 - v.x0) * fx;
        const dy = zoomY ? (v.y1 - v.y0) * fy : 0;
        return clamp({ x0: v.x0 + dx, x1: v.x1 + dx, y0: v.y0 + dy, y1: v.y1 + dy });
      });
    },
    [clamp, zoomY],
  );

  const reset = useCallback(() => {
    const [x0, x1, y0, y1] = fullKey.split(",").map(Number) as [number, number, number, number];
    setView({ x0, x1, y0, y1 });
  }, [fullKey]);

  const toData = (px: number, py: number): [number, number] => {
    const v = viewRef.current;
    return [v.x0 + ((px - area.left) / area.width) * (v.x1 - v.x0), v.y0 + ((area.top + area.height - py) / area.height) * (v.y1 - v.y0)];
  };

  // Wheel needs a non-passive listener to keep the page from scrolling while zooming.
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    const onWheel = (e: WheelEvent) => {
      const r = canvas.getBoundingClientRect();
      const px = e.clientX - r.left;
      const py = e.clientY - r.top;
      if (px < MARGIN.left || py > height - MARGIN.bottom) return;
      e.preventDefault();
      const v = viewRef.current;
      const cx = v.x0 + ((px - MARGIN.left) / (width - MARGIN.left - MARGIN.right)) * (v.x1 - v.x0);
      const h = height - MARGIN.top - MARGIN.bottom;
      const cy = v.y0 + ((MARGIN.top + h - py) / h) * (v.y1 - v.y0);
      const factor = Math.exp(Math.max(-1, Math.min(1, (e.deltaY || e.deltaX) * 0.002)));
      zoom(factor, cx, cy, e.shiftKey ? "y" : e.ctrlKey || e.altKey ? "xy" : "x");
    };
    canvas.addEventListener("wheel", onWheel, { passive: false });
    return () => {
      canvas.removeEventListener("wheel", onWheel);
    };
  }, [zoom, width, height]);

  const onPointerDown = (e: PointerEvent<HTMLCanvasElement>) => {
    if (e.button !== 0) return;
    e.currentTarget.setPointerCapture(e.pointerId);
    drag.current = { px: e.clientX, py: e.clientY, view: viewRef.current, moved: false };
    setTip(null);
  };
  const onPointerMove = (e: PointerEvent<HTMLCanvasElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    const px = e.clientX - r.left;
    const py = e.clientY - r.top;
    const dg = drag.current;
    if (dg) {
      const dxp = e.clientX - dg.px;
      const dyp = e.clientY - dg.py;
      if (Math.abs(dxp) + Math.abs(dyp) > 2) dg.moved = true;
      const v = dg.view;
      const dx = (-dxp / area.width) * (v.x1 - v.x0);
      const dy = zoomY ? (dyp / area.height) * (v.y1 - v.y0) : 0;
      setView(clamp({ x0: v.x0 + dx, x1: v.x1 + dx, y0: v.y0 + dy, y1: v.y1 + dy }));
      return;
    }
    const dc = drawCtxRef.current;
    if (!props.pick || !dc || px < area.left || px > area.left + area.width || py < area.top || py > area.top + area.height) {
      setTip(null);
      return;
    }
    const [dx, dyT] = toData(px, py);
    const dy = yLog ? Math.pow(10, dyT) : dyT;
    const text = props.pick(dx, dy, dc);
    setTip(text ? { x: px, y: py, text } : null);
  };
  const onPointerUp = (e: PointerEvent<HTMLCanvasElement>) => {
    if (drag.current) e.currentTarget.releasePointerCapture(e.pointerId);
    drag.current = null;
  };
  const onKey = (e: KeyboardEvent<HTMLCanvasElement>) => {
    const k = e.key;
    if (k === "ArrowLeft") pan(-0.1, 0);
    else if (k === "ArrowRight") pan(0.1, 0);
    else if (k === "ArrowUp") pan(0, 0.1);
    else if (k === "ArrowDown") pan(0, -0.1);
    else if (k === "+" || k === "=") zoom(0.7, null, null, e.shiftKey ? "xy" : "x");
    else if (k === "-" || k === "_") zoom(1 / 0.7, null, null, e.shiftKey ? "xy" : "x");
    else if (k === "0" || k === "Home") reset();
    else return;
    e.preventDefault();
  };

  const zoomed = view.x0 !== full.x0 || view.x1 !== full.x1 || view.y0 !== full.y0 || view.y1 !== full.y1;
  const tipWidth = Math.min(320, width);
  return (
    <div className="plot" data-testid={props.testId}>
      <div className="plot-tools" role="toolbar" aria-label={`${props.label} zoom`}>
        <button type="button" className="btn small" onClick={() => { zoom(0.7, null, null, "x"); }} aria-label="Zoom in">
          +
        </button>
        <button type="button" className="btn small" onClick={() => { zoom(1 / 0.7, null, null, "x"); }} aria-label="Zoom out">
          −
        </button>
        <button type="button" className="btn small" onClick={reset} disabled={!zoomed}>
          Reset
        </button>
        <span className="muted small hint">
          <span className="hint-mouse">wheel: zoom · shift+wheel: zoom y · drag: pan · double-click: reset</span>
          <span className="hint-touch">+ / −: zoom · drag sideways: pan · double-tap: reset</span>
        </span>
      </div>
      {width < NARROW && (
        <p className="plot-narrow small" role="note" data-testid="plot-narrow">
          Small screen: rotate your device or zoom in (+) to read this plot.
        </p>
      )}
      <div className="plot-body" ref={wrapRef}>
        <span className="axis-label y">{props.yLabel}</span>
        <canvas
          ref={canvasRef}
          style={{ width: `${width}px`, height: `${height}px` }}
          tabIndex={0}
          role="img"
          aria-label={`${props.label}${props.summary ? `: ${props.summary}` : ""}. Arrow keys pan, plus and minus zoom, 0 resets.`}
          onPointerDown={onPointerDown}
          onPointerMove={onPointerMove}
          onPointerUp={onPointerUp}
          onPointerCancel={onPointerUp}
          onPointerLeave={() => { setTip(null); }}
          onDoubleClick={reset}
          onKeyDown={onKey}
        />
        {tip && (
          <div
            className="plot-tip"
            aria-hidden="true"
            style={{ left: Math.max(0, Math.min(tip.x + 12, width - tipWidth)), top: Math.max(0, tip.y - 10), maxWidth: tipWidth }}
          >
            {tip.text}
          </div>
        )}
        <span className="axis-label x">{props.xLabel}</span>
      </div>
      {props.children}
    </div>
  );
}
