// Numbers and dates for people.

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return "–";
  let v = Math.abs(n);
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  // A whole number of units as people write it ("2 GiB"), as the report's own sentences say it
  const whole = Math.abs(v - Math.round(v)) <= 1e-9;
  const s =
    u === 0 || whole ? String(Math.round(v)) : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
  return `${n < 0 ? "-" : ""}${s} ${UNITS[u] ?? "B"}`;
}

export function seconds(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) return "–";
  const a = Math.abs(s);
  if (a === 0) return "0 s";
  if (a < 1e-3) return `${(s * 1e6).toFixed(0)} µs`;
  if (a < 1) return `${(s * 1e3).toFixed(a < 0.01 ? 2 : 1)} ms`;
  if (a < 120) return `${s.toFixed(a < 10 ? 2 : 1)} s`;
  if (a < 7200) return `${(s / 60).toFixed(1)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

export function percent(r: number | null | undefined, digits = 0): string {
  if (r === null || r === undefined || !Number.isFinite(r)) return "–";
  return `${(r * 100).toFixed(digits)} %`;
}

export function count(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return "–";
  return n.toLocaleString("en-US");
}

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return "–";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (x: number) => String(x).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A metric value with its unit (the Metric.unit values of the report schema). */
export function metric(value: number | string, unit: string): string {
  if (typeof value === "string") return value;
  switch (unit) {
    case "bytes":
      return bytes(value);
    case "seconds":
      return seconds(value);
    case "ratio":
      return percent(value, value < 0.1 ? 1 : 0);
    case "bytes/s":
      return `${bytes(value)}/s`;
    case "count":
      return count(value);
    default:
      return String(value);
  }
}

/** Axis tick label for a plot axis unit ("s", "B", "rank", "OST"). */
export function tick(v: number, unit: string, step: number): string {
  if (unit === "B") return bytes(v);
  if (unit === "s") {
    if (step >= 1) return `${v.toFixed(0)} s`;
    const d = Math.min(6, Math.max(0, -Math.floor(Math.log10(step))));
    return `${v.toFixed(d)} s`;
  }
  if (Math.abs(step) >= 1) return String(Math.round(v));
  return v.toFixed(Math.min(6, -Math.floor(Math.log10(step))));
}

/** Seconds exactly as the backend's human_seconds writes them (µs, ms, s, min, h): costs and verdict numbers. */
export function humanSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) return "–";
  if (s < 1e-3) return `${(s * 1e6).toFixed(0)} µs`;
  if (s < 1) return `${(s * 1e3).toFixed(1)} ms`;
  if (s < 120) return `${s.toFixed(2)} s`;
  if (s < 7200) return `${(s / 60).toFixed(1)} min`;
  return `${(s / 3600).toFixed(2)} h`;
}

/** A share as whole percent that never rounds a non-zero share to 0 % or a partial one to 100 % (as the backend's verdict does). */
export function share(r: number | null | undefined): string {
  if (r === null || r === undefined || !Number.isFinite(r)) return "–";
  const pct = r * 100;
  if (pct > 0 && pct < 1) return "<1 %";
  if (pct > 99 && pct < 100) return ">99 %";
  return `${pct.toFixed(0)} %`;
}

/** "≈ 7.2 min (59 % of the run)": what a cause or a finding costs. */
export function cost(seconds: number, shareOfRuntime: number | null | undefined): string {
  const of = shareOfRuntime === null || shareOfRuntime === undefined ? "" : ` (${share(shareOfRuntime)} of the run)`;
  return `≈ ${humanSeconds(seconds)}${of}`;
}
