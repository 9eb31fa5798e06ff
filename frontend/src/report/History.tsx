// The job page's "Runs of this application" card: the owner's runs of the same executable, oldest
// first from GET /analyses/{id}/history, as a small trend of run time and I/O time and a table with
// a "Compare with…" link to each other run.
import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { type AnalysisOut, api, call, type HistoryOut, type RunPoint } from "../api/client";
import { ErrorNote, SeverityBadge, Spinner } from "../components/badges";
import { count, dateTime, humanSeconds, share } from "../lib/format";
import { Link } from "../lib/router";
import { ScrollBox } from "../lib/scroll";
import { useSession } from "../session";
import { WithCode } from "./Header";
import { asApiError } from "../lib/query";

const ROWS_SHOWN = 10;

/** The compare view of two runs: run A is the earlier start, B the later. */
export function compareLink(x: RunPoint, y: RunPoint, runs: readonly RunPoint[]): string {
  const tx = Date.parse(x.when);
  const ty = Date.parse(y.when);
  const xFirst = tx !== ty ? tx < ty : runs.indexOf(x) < runs.indexOf(y);
  const [a, b] = xFirst ? [x, y] : [y, x];
  return `/compare/${encodeURIComponent(a.id)}/${encodeURIComponent(b.id)}`;
}

export function RunHistory({ a }: { a: AnalysisOut }) {
  const executable = a.run?.executable ?? null;
  const q = useQuery({
    queryKey: ["analysis", a.id, "history"],
    queryFn: () => call(api.GET("/api/v1/analyses/{analysis_id}/history", { params: { path: { analysis_id: a.id } } })),
    enabled: executable !== null,
  });
  const h = q.data ?? null;
  const error = q.error ? asApiError(q.error).message : null;

  if (!executable) return null;
  return (
    <section className="card runs-card" aria-labelledby="runs-title" data-testid="run-history">
      <h2 id="runs-title">Runs of this application</h2>
      {error && <ErrorNote error={`The run history is unavailable: ${error}`} />}
      {!h && !error && <Spinner label="Loading earlier runs…" />}
      {h && <HistoryBody h={h} current={a.id} />}
    </section>
  );
}

function HistoryBody({ h, current }: { h: HistoryOut; current: string }) {
  const { me } = useSession();
  const [all, setAll] = useState(false);
  const runs = h.runs;
  const exe = h.executable ?? "this executable";
  const by = h.owner === me.user ? "you" : h.owner;
  const here = runs.find((r) => r.id === current) ?? null;
  const others = runs.filter((r) => r.id !== current);
  // Newest first in the table; this run among them, marked.
  const rows = useMemo(() => [...runs].reverse(), [runs]);
  const shown = all ? rows : rows.slice(0, ROWS_SHOWN + 1);

  if (others.length === 0) {
    return (
      <p className="muted" data-testid="history-empty">
        No other runs of <code>{exe}</code> by {by} yet. Upload another run of it to see its run and I/O time over time here, or compare two logs on
        the command line: <code>iodiag compare A.darshan B.darshan</code>
      </p>
    );
  }
  return (
    <>
      <p className="muted small">
        {count(runs.length)} runs of <code>{exe}</code> by {by}, by when each started. A run is flagged as a regression when its I/O time is far
        above the usual of the runs before it.
      </p>
      {here?.regression && (
        <p className="regression-note" role="note" data-testid="this-regression">
          <span className="badge regression">regression</span> This run&apos;s I/O time is far above usual: {here.regression.explanation}
        </p>
      )}
      <Trend runs={runs} current={current} />
      <ScrollBox label={`Runs of ${exe}`}>
        <table className="data compact runs" data-testid="history-table">
          <caption className="sr-only">Runs of {exe}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Job</th>
              <th scope="col" className="num">Ranks</th>
              <th scope="col" className="num">Run time</th>
              <th scope="col" className="num">I/O time</th>
              <th scope="col">Verdict</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => {
              const isThis = r.id === current;
              return (
                <tr key={r.id} className={isThis ? "current" : undefined} aria-current={isThis ? "true" : undefined} data-testid="history-row" data-id={r.id}>
                  <td className="nowrap">
                    <time dateTime={r.when}>{dateTime(r.when)}</time>
                  </td>
                  <td>{isThis ? <>{r.jobid ?? "–"}</> : <Link to={`/analyses/${encodeURIComponent(r.id)}`}>{r.jobid ?? "open"}</Link>}</td>
                  <td className="num">{count(r.nprocs)}</td>
                  <td className="num">{humanSeconds(r.runtime_s)}</td>
                  <td className="num">
                    {r.regression && (
                      <span className="badge regression" title={r.regression.explanation}>
                        regression<span className="sr-only">: {r.regression.explanation}</span>
                      </span>
                    )}{" "}
                    {humanSeconds(r.io_time_s)}
                    {r.io_share !== null && <span className="muted small"> ({share(r.io_share)})</span>}
                  </td>
                  <td className="verdict-cell">
                    {r.verdict_level && <SeverityBadge s={r.verdict_level} />}{" "}
                    {r.headline && (
                      <span className="headline small" title={r.headline}>
                        <WithCode text={r.headline} />
                      </span>
                    )}
                  </td>
                  <td>
                    {isThis ? (
                      <span className="muted small">this run</span>
                    ) : (
                      <Link
                        to={compareLink(r, here ?? r, runs)}
                        className="btn small"
                        aria-label={`Compare with the run of ${dateTime(r.when)}${r.jobid ? ` (job ${r.jobid})` : ""}`}
                      >
                        Compare with…
                      </Link>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollBox>
      {rows.length > ROWS_SHOWN + 1 && (
        <button
          type="button"
          className="btn link small"
          onClick={() => {
            setAll(!all);
          }}
        >
          {all ? "Show the latest runs only" : `Show all ${count(rows.length)} runs`}
        </button>
      )}
    </>
  );
}

// --- the trend ---------------------------------------------------------------------------------

const W = 640;
const H = 150;
const M = { left: 62, right: 14, top: 12, bottom: 26 };

/** Run time and I/O time per run over the runs' start times: an inline SVG, no chart library. */
function Trend({ runs, current }: { runs: readonly RunPoint[]; current: string }) {
  const g = useMemo(() => {
    const ts = runs.map((r) => Date.parse(r.when));
    const t0 = Math.min(...ts);
    const t1 = Math.max(...ts);
    const vals = runs.flatMap((r) => [r.runtime_s, r.io_time_s]).filter((v): v is number => v !== null && Number.isFinite(v));
    const hi = Math.max(1e-6, ...vals);
    const positive = vals.filter((v) => v > 0);
    const lo = positive.length ? Math.min(...positive) : hi;
    // Runs of one application can differ a hundredfold: a log scale keeps the short ones visible.
    const log = hi / lo > 30;
    const y0 = log ? Math.log10(lo) - 0.1 : 0;
    const y1 = log ? Math.log10(hi) + 0.1 : hi * 1.08;
    const iw = W - M.left - M.right;
    const ih = H - M.top - M.bottom;
    const x = (t: number) => (t1 > t0 ? M.left + ((t - t0) / (t1 - t0)) * iw : M.left + iw / 2);
    const y = (v: number) => {
      const u = log ? Math.log10(Math.max(v, lo)) : v;
      return M.top + ih - ((u - y0) / (y1 - y0 || 1)) * ih;
    };
    const pts = (key: "runtime_s" | "io_time_s") =>
      runs.flatMap((r, i) => {
        const v = r[key];
        return v === null || !Number.isFinite(v) ? [] : [{ r, px: x(ts[i] ?? t0), py: y(v), v }];
      });
    const ticks = log ? [lo, hi] : [0, hi];
    return { runtime: pts("runtime_s"), io: pts("io_time_s"), x, y, t0, t1, ticks, log, ih };
  }, [runs]);

  const line = (ps: { px: number; py: number }[]) => ps.map((p) => `${p.px.toFixed(1)},${p.py.toFixed(1)}`).join(" ");
  const cur = runs.find((r) => r.id === current);
  const curX = cur ? g.x(Date.parse(cur.when)) : null;
  const flagged = runs.filter((r) => r.regression).length;
  const label = `Run time and I/O time of ${String(runs.length)} runs from ${dateTime(runs[0]?.when)} to ${dateTime(runs[runs.length - 1]?.when)}${
    g.log ? " (log scale)" : ""
  }${flagged ? `; ${String(flagged)} flagged as regression` : ""}. The table below lists the same runs.`;
  const tip = (r: RunPoint) =>
    `${dateTime(r.when)}${r.jobid ? ` · job ${r.jobid}` : ""}${r.id === current ? " (this run)" : ""}\nrun time ${humanSeconds(r.runtime_s)} · I/O time ${humanSeconds(r.io_time_s)}${
      r.regression ? `\nregression: ${r.regression.explanation}` : ""
    }`;
  return (
    <figure className="trend" data-testid="trend">
      <svg viewBox={`0 0 ${String(W)} ${String(H)}`} role="img" aria-label={label}>
        {g.ticks.map((v) => (
          <g key={v} className="trend-tick">
            <line x1={M.left} x2={W - M.right} y1={g.y(v)} y2={g.y(v)} />
            <text x={M.left - 6} y={g.y(v)} textAnchor="end" dominantBaseline="middle">
              {v === 0 ? "0 s" : humanSeconds(v)}
            </text>
          </g>
        ))}
        <text className="trend-date" x={M.left} y={H - 6} textAnchor="start">
          {dateTime(runs[0]?.when).slice(0, 10)}
        </text>
        {g.t1 > g.t0 && (
          <text className="trend-date" x={W - M.right} y={H - 6} textAnchor="end">
            {dateTime(runs[runs.length - 1]?.when).slice(0, 10)}
          </text>
        )}
        {curX !== null && <line className="trend-current" x1={curX} x2={curX} y1={M.top} y2={M.top + g.ih} />}
        <polyline className="trend-line runtime" points={line(g.runtime)} />
        <polyline className="trend-line io" points={line(g.io)} />
        {g.runtime.map((p) => (
          <circle key={`r-${p.r.id}`} className={`trend-pt runtime${p.r.id === current ? " current" : ""}`} cx={p.px} cy={p.py} r={p.r.id === current ? 5 : 3}>
            <title>{tip(p.r)}</title>
          </circle>
        ))}
        {g.io.map((p) => (
          <circle
            key={`i-${p.r.id}`}
            className={`trend-pt io${p.r.regression ? " regression" : ""}${p.r.id === current ? " current" : ""}`}
            cx={p.px}
            cy={p.py}
            r={p.r.regression ? 6 : p.r.id === current ? 5 : 3}
            data-testid={p.r.regression ? "trend-regression" : undefined}
          >
            <title>{tip(p.r)}</title>
          </circle>
        ))}
      </svg>
      <figcaption>
        <ul className="legend">
          <li>
            <span className="swatch" style={{ background: "var(--series-0)" }} aria-hidden="true" />
            run time
          </li>
          <li>
            <span className="swatch" style={{ background: "var(--plot-write)" }} aria-hidden="true" />
            I/O time (busiest rank)
          </li>
          <li>
            <span className="swatch round" style={{ background: "var(--critical)" }} aria-hidden="true" />
            regression
          </li>
          <li>
            <span className="swatch current" aria-hidden="true" />
            this run
          </li>
          {g.log && <li className="muted">log scale</li>}
        </ul>
      </figcaption>
    </figure>
  );
}
