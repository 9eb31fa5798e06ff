// Two runs of one application side by side, from GET /analyses/{a}/compare/{b}: the comparison's
// verdict, both runs' own verdicts, the findings resolved, new and changed, every number with its
// change, and both runs' plots stacked on the same axes. Run A is "before", run B "after".
import { useQuery } from "@tanstack/react-query";
import { type ReactNode, useCallback, useEffect, useMemo, useState } from "react";
import {
  type AnalysisOut,
  api,
  ApiError,
  call,
  type Comparison,
  type FindingChange,
  type MetricRow,
  type PlotData,
  type RunSummary,
  type Schemas,
} from "../api/client";
import { ErrorNote, SeverityBadge, Spinner } from "../components/badges";
import { NotFound } from "../components/NotFound";
import { bytes, cost, count, dateTime, humanSeconds, metric, share } from "../lib/format";
import { asApiError } from "../lib/query";
import { Link } from "../lib/router";
import { ScrollBox } from "../lib/scroll";
import type { XLink } from "../plots/PlotCanvas";
import { offsetMax, type OstMetric, OstView, PhasesView, sizeRange, SpatialityView, timeExtent, TimelineView, TransferSizesView } from "../plots/Plots";
import { CellLabel } from "../report/CellLabel";
import { sentence } from "../report/ComparePicker";
import { WithCode } from "../report/Header";

type Tag = "A" | "B";
type Loaded<T> = { data: T } | { error: ApiError } | null;

/** One load through the query cache, as the compare view reads it: pending (null), its data, or its error. */
function useLoad<T>(key: readonly unknown[], load: () => Promise<T>): Loaded<T> {
  const q = useQuery({ queryKey: key, queryFn: load });
  if (q.isPending) return null;
  if (q.isError) return { error: asApiError(q.error) };
  return { data: q.data };
}

/** `/compare/{a}/{b}`; `/compare/{id}/median`: the run against its application's usual (median) run. */
export function ComparePage({ a, b }: { a: string; b: string }) {
  return b === "median" ? <MedianPage id={a} /> : <PairPage a={a} b={b} />;
}

/** GET /compare/median: run A is the median of the application's other runs, run B this one. */
function MedianPage({ id }: { id: string }) {
  const m = useLoad(["analysis", id, "compare-median"], () => call(api.GET("/api/v1/analyses/{analysis_id}/compare/median", { params: { path: { analysis_id: id } } })));
  if (m && "error" in m) {
    if (m.error.status === 404 || m.error.status === 422) return <NotFound what="run" detail="This run does not exist, or it is not yours to see." />;
    return (
      <div className="page compare" data-testid="compare">
        <div className="page-head">
          <h1>Compare with the usual run</h1>
        </div>
        {m.error.status === 409 ? (
          <div className="not-comparable" role="alert" data-testid="not-comparable">
            <span>
              <WithCode text={sentence(m.error.message)} />
            </span>
          </div>
        ) : (
          <ErrorNote error={m.error.message} />
        )}
        <p>
          <Link to={`/analyses/${encodeURIComponent(id)}`}>Back to the report</Link>
        </p>
      </div>
    );
  }
  if (!m) return <div className="page"><Spinner label="Finding the usual run…" /></div>;
  const med = m.data;
  return (
    <PairPage
      a={med.baseline_id}
      b={med.analysis_id}
      preset={med.comparison}
      lead={
        <p className="median-note" data-testid="median-lead">
          Run A is this application&apos;s usual run: of its {med.runs} other finished run{med.runs === 1 ? "" : "s"}, the one with the median I/O
          time. Run B is this run.
        </p>
      }
    />
  );
}

function PairPage({ a, b, preset, lead }: { a: string; b: string; preset?: Comparison; lead?: ReactNode }) {
  const [force, setForce] = useState(false);
  const runA = useLoad(["analysis", a], () => call(api.GET("/api/v1/analyses/{analysis_id}", { params: { path: { analysis_id: a } } })));
  const runB = useLoad(["analysis", b], () => call(api.GET("/api/v1/analyses/{analysis_id}", { params: { path: { analysis_id: b } } })));
  // The median page hands its comparison in (preset): the key says so, so it never stands for a fetched one
  const comp = useLoad(["compare", a, b, preset ? "preset" : force ? "forced" : "checked"], () =>
    preset
      ? Promise.resolve(preset)
      : call(api.GET("/api/v1/analyses/{analysis_id}/compare/{other_id}", { params: { path: { analysis_id: a, other_id: b }, query: { force } } })),
  );
  const plotsA = useLoad(["analysis", a, "plots"], () => call(api.GET("/api/v1/analyses/{analysis_id}/plots", { params: { path: { analysis_id: a } } })));
  const plotsB = useLoad(["analysis", b, "plots"], () => call(api.GET("/api/v1/analyses/{analysis_id}/plots", { params: { path: { analysis_id: b } } })));

  const anA = runA && "data" in runA ? runA.data : null;
  const anB = runB && "data" in runB ? runB.data : null;
  const c = comp && "data" in comp ? comp.data : null;

  useEffect(() => {
    const exe = c?.a.executable ?? anA?.run?.executable ?? null;
    document.title = `Compare${exe ? ` ${exe}` : ""} runs · iodiag`;
  }, [c, anA]);

  const missing = [runA, runB, comp].some((r) => r && "error" in r && (r.error.status === 404 || r.error.status === 422));
  if (missing) return <NotFound what="run" detail="One of these runs does not exist, or it is not yours to see." />;

  const compError = comp && "error" in comp ? comp.error : null;
  const bothDone = anA?.status === "done" && anB?.status === "done";
  const exe = c?.a.executable ?? anA?.run?.executable ?? anA?.exe ?? null;

  return (
    <div className="page compare" data-testid="compare">
      <div className="page-head">
        <h1>
          Compare runs{exe && <> of <span className="exe">{exe}</span></>}
        </h1>
        <Link to={`/compare/${encodeURIComponent(b)}/${encodeURIComponent(a)}`} className="btn small" title="Make run B the “before” run">
          ⇅ Swap A and B
        </Link>
      </div>
      {lead}
      <p className="compare-which muted">
        <RunRef tag="A" id={a} an={anA} s={c?.a ?? null} /> <span aria-hidden="true">→</span>
        <span className="sr-only">, then</span> <RunRef tag="B" id={b} an={anB} s={c?.b ?? null} />
      </p>
      {compError?.status === 409 ? (
        <div className="not-comparable" role="alert" data-testid="not-comparable">
          <span>These runs cannot be compared: {reason(compError.message)}.</span>
          {bothDone && (
            <button
              type="button"
              className="btn small"
              onClick={() => {
                setForce(true);
              }}
            >
              Compare anyway
            </button>
          )}
        </div>
      ) : compError ? (
        <ErrorNote error={compError.message} />
      ) : null}
      {!comp && <Spinner label="Comparing the runs…" />}
      {c && <ComparisonView c={c} a={a} b={b} anA={anA} anB={anB} plotsA={plotsA} plotsB={plotsB} />}
    </div>
  );
}

/** The server's one-line reason, less its advice to the command line (the button below is the UI's --force). */
function reason(detail: string): string {
  return detail.replace(/;?\s*compare anyway with --force\.?$/, "").replace(/\.$/, "");
}

function RunRef({ tag, id, an, s }: { tag: Tag; id: string; an: AnalysisOut | null; s: RunSummary | null }) {
  const job = s ? String(s.jobid) : (an?.job_id ?? null);
  const start = an?.run?.start ?? null;
  return (
    <span className="run-ref">
      <span className={`run-tag run-${tag.toLowerCase()}`}>{tag}</span>{" "}
      <Link to={`/analyses/${encodeURIComponent(id)}`}>{job ? `job ${job}` : (an?.filename ?? "this run")}</Link>
      {start && <span> started {dateTime(start)}</span>}
      {an && <span className="path small"> · {an.filename}</span>}
    </span>
  );
}

function ioTone(c: Comparison): string {
  const x = c.a.io_time_s;
  const y = c.b.io_time_s;
  if (x === null || y === null) return "info";
  if (y < x * 0.95) return "ok";
  if (y > x * 1.05) return "critical";
  return "info";
}

function ComparisonView({
  c,
  a,
  b,
  anA,
  anB,
  plotsA,
  plotsB,
}: {
  c: Comparison;
  a: string;
  b: string;
  anA: AnalysisOut | null;
  anB: AnalysisOut | null;
  plotsA: Loaded<PlotData>;
  plotsB: Loaded<PlotData>;
}) {
  const notes = c.notes ?? [];
  return (
    <>
      <div className={`verdict-panel compare-verdict tone-${ioTone(c)}`}>
        <p className="verdict-headline" data-testid="compare-verdict">
          <WithCode text={c.verdict} />
        </p>
        {c.forced && (
          <p className="small" data-testid="forced">
            Compared anyway: run A ran <code>{c.a.executable}</code> and run B <code>{c.b.executable}</code>, so the numbers may not be like for like.
          </p>
        )}
        {!c.changed && <p className="small">Every number and finding is the same in both runs.</p>}
        {notes.length > 0 && (
          <ul className="compare-notes small" data-testid="compare-notes" aria-label="Keep in mind">
            {notes.map((n, i) => (
              <li key={i}>{n}</li>
            ))}
          </ul>
        )}
      </div>
      <div className="compare-runs">
        <RunCard tag="A" s={c.a} id={a} an={anA} />
        <RunCard tag="B" s={c.b} id={b} an={anB} />
      </div>
      <nav aria-label="Comparison sections" className="section-nav compare-nav">
        <a href="#compare-findings">Findings</a>
        <a href="#compare-numbers">Numbers</a>
        <a href="#compare-plots">Plots</a>
      </nav>
      <FindingDeltas c={c} />
      <Metrics rows={c.metrics} />
      <StackedPlots c={c} pa={plotsA} pb={plotsB} ids={{ A: a, B: b }} />
    </>
  );
}

// --- the two runs' own verdicts -----------------------------------------------------------------

function RunCard({ tag, s, id, an }: { tag: Tag; s: RunSummary; id: string; an: AnalysisOut | null }) {
  const causes = s.causes ?? [];
  const t = tag.toLowerCase();
  return (
    <article className={`verdict-panel run-card tone-${s.level}`} aria-labelledby={`run-${t}-title`} data-testid={`run-${t}`} data-level={s.level}>
      <header>
        <span className={`run-tag run-${t}`} aria-hidden="true">
          {tag}
        </span>
        <h2 id={`run-${t}-title`}>
          Run {tag} <span className="muted small">({tag === "A" ? "before" : "after"})</span>
        </h2>
        <SeverityBadge s={s.level} />
      </header>
      <p className="small run-meta">
        <Link to={`/analyses/${encodeURIComponent(id)}`}>job {s.jobid}</Link>
        {an?.run?.start && <> · started {dateTime(an.run.start)}</>} · <span className="path">{s.log_path}</span>
      </p>
      <dl className="facts run-facts">
        <div>
          <dt>Ranks</dt>
          <dd>{count(s.nprocs)}</dd>
        </div>
        <div>
          <dt>Run time</dt>
          <dd>{humanSeconds(s.runtime_s)}</dd>
        </div>
        <div>
          <dt>I/O time</dt>
          <dd>{humanSeconds(s.io_time_s)}</dd>
        </div>
        <div>
          <dt>I/O share</dt>
          <dd>{share(s.io_share)}</dd>
        </div>
      </dl>
      <p className="verdict-headline run-headline" data-testid={`run-${t}-headline`}>
        <WithCode text={s.headline} />
      </p>
      {causes.length > 0 ? (
        <>
          <h3 className="verdict-sub">{causes.length === 1 ? "The cause" : "Top causes"}</h3>
          <ol className="causes">
            {causes.slice(0, 3).map((cause) => (
              <li key={cause.code} className="cause">
                <div className="cause-head">
                  <span className="code">{cause.code}</span>
                  <span className="cause-title">{cause.title}</span>
                  <span className="cause-cost">{cost(cause.seconds, cause.share_of_runtime)}</span>
                </div>
              </li>
            ))}
          </ol>
          {causes.length > 3 && <p className="muted small">and {count(causes.length - 3)} more</p>}
        </>
      ) : (
        <p className="muted small">No ranked cause.</p>
      )}
      <details className="cmdline">
        <summary className="small">Command line</summary>
        <code className="path small">{s.exe}</code>
      </details>
    </article>
  );
}

// --- findings resolved, new, changed --------------------------------------------------------------

/** "−12.7 min" / "+3.20 s": a change in seconds, signed. */
function signedSeconds(d: number | null): string {
  if (d === null || !Number.isFinite(d)) return "–";
  if (d === 0) return "±0";
  return `${d < 0 ? "−" : "+"}${humanSeconds(Math.abs(d))}`;
}

function Side({ s }: { s: Schemas["FindingSide"] | null }) {
  if (!s) return <span className="muted">not found</span>;
  return (
    <>
      <SeverityBadge s={s.severity} />{" "}
      {s.seconds !== null ? (
        <span className="side-cost" title={s.basis || undefined}>
          {cost(s.seconds, s.share_of_runtime)}
        </span>
      ) : (
        <span className="muted" title={s.basis || undefined}>
          cost unknown
        </span>
      )}
      {s.cause_rank !== null && s.cause_rank !== undefined && <span className="muted small"> · cause #{s.cause_rank}</span>}
      {s.occurrences > 1 && <span className="muted small"> · {count(s.occurrences)} findings</span>}
    </>
  );
}

const GROUPS = [
  { key: "resolved", title: "Resolved", hint: "in run A, gone from run B", empty: "Nothing was resolved." },
  { key: "new", title: "New", hint: "not in run A, in run B", empty: "Nothing new." },
  { key: "changed", title: "Changed", hint: "in both runs, with a different severity or cost", empty: "No finding changed." },
] as const;

function FindingDeltas({ c }: { c: Comparison }) {
  const lists: Record<(typeof GROUPS)[number]["key"], FindingChange[]> = {
    resolved: c.findings_resolved,
    new: c.findings_new,
    changed: c.findings_changed,
  };
  const unchanged = c.findings_unchanged ?? [];
  return (
    <section id="compare-findings" aria-labelledby="compare-findings-title">
      <h2 id="compare-findings-title">Findings</h2>
      {GROUPS.map((g) => {
        const list = lists[g.key];
        return (
          <section key={g.key} className={`delta-group delta-${g.key}`} aria-labelledby={`delta-${g.key}`} data-testid={`findings-${g.key}`}>
            <h3 id={`delta-${g.key}`}>
              {g.title} ({list.length}) <span className="muted small">{g.hint}</span>
            </h3>
            {list.length === 0 ? <p className="muted small">{g.empty}</p> : <ChangeTable list={list} group={g.key} />}
          </section>
        );
      })}
      {unchanged.length > 0 && (
        <details className="delta-group">
          <summary>Unchanged ({unchanged.length})</summary>
          <ChangeTable list={unchanged} group="unchanged" />
        </details>
      )}
    </section>
  );
}

function ChangeTable({ list, group }: { list: FindingChange[]; group: string }) {
  return (
    <ScrollBox label={`${group} findings`}>
      <table className="data compact deltas">
        <thead>
          <tr>
            <th scope="col">Finding</th>
            <th scope="col">Run A</th>
            <th scope="col">Run B</th>
            <th scope="col" className="num">
              Change in cost
            </th>
          </tr>
        </thead>
        <tbody>
          {list.map((f) => {
            const message = (group === "resolved" ? f.a?.message : f.b?.message) ?? f.a?.message ?? "";
            const d = f.delta_seconds;
            return (
              <tr key={f.code} data-testid="finding-change" data-code={f.code}>
                <th scope="row">
                  <span className="code">{f.code}</span> {f.title} <span className="muted small">{f.layer}</span>
                  {message && <div className="muted small delta-message">{message}</div>}
                </th>
                <td>
                  <Side s={f.a} />
                </td>
                <td>
                  <Side s={f.b} />
                </td>
                <td className={`num${d !== null && d < 0 ? " better" : d !== null && d > 0 ? " worse" : ""}`}>{signedSeconds(d)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollBox>
  );
}

// --- the numbers ---------------------------------------------------------------------------------

function value(v: number | null, unit: MetricRow["unit"]): string {
  return v === null ? "–" : metric(v, unit);
}

/** No change, or one too small to be more than rounding (float noise in summed times). */
function unchanged(m: MetricRow): boolean {
  const d = m.delta;
  if (d === null || !Number.isFinite(d)) return false;
  return Math.abs(d) <= 1e-9 * Math.max(Math.abs(m.a ?? 0), Math.abs(m.b ?? 0));
}

function delta(m: MetricRow): string {
  const d = m.delta;
  if (d === null || !Number.isFinite(d)) return "–";
  if (unchanged(m)) return "±0";
  const sign = d < 0 ? "−" : "+";
  const a = Math.abs(d);
  switch (m.unit) {
    case "ratio":
      return `${sign}${(a * 100).toFixed(a < 0.1 ? 1 : 0)} pts`;
    case "bytes/s":
      return `${sign}${bytes(a)}/s`;
    default:
      return `${sign}${metric(a, m.unit)}`;
  }
}

function pct(m: MetricRow): string {
  const p = m.change_pct;
  if (p === null || !Number.isFinite(p)) return "–";
  if (p === 0 || unchanged(m)) return "0 %";
  const a = Math.abs(p);
  return `${p < 0 ? "−" : "+"}${a.toFixed(a < 10 ? 1 : 0)} %`;
}

function Metrics({ rows }: { rows: MetricRow[] }) {
  const [changedOnly, setChangedOnly] = useState(false);
  const sections = useMemo(() => {
    const out = new Map<string, MetricRow[]>();
    for (const m of rows) {
      if (changedOnly && unchanged(m)) continue;
      const list = out.get(m.section) ?? [];
      list.push(m);
      out.set(m.section, list);
    }
    return [...out.entries()];
  }, [rows, changedOnly]);
  return (
    <section id="compare-numbers" aria-labelledby="compare-numbers-title">
      <div className="section-head">
        <h2 id="compare-numbers-title">Numbers</h2>
        <label className="inline-check">
          <input
            type="checkbox"
            checked={changedOnly}
            onChange={(e) => {
              setChangedOnly(e.target.checked);
            }}
          />
          only what changed
        </label>
      </div>
      <ScrollBox label="Numbers of run A and run B" className="table-wrap cards-narrow">
        <table className="data compact metrics" data-testid="metrics">
          <thead>
            <tr>
              <th scope="col">Metric</th>
              <th scope="col" className="num">
                Run A
              </th>
              <th scope="col" className="num">
                Run B
              </th>
              <th scope="col" className="num">
                Change
              </th>
              <th scope="col" className="num">
                Change %
              </th>
            </tr>
          </thead>
          {sections.map(([section, list]) => (
            <tbody key={section}>
              <tr className="section-row">
                <th scope="colgroup" colSpan={5}>
                  {section}
                </th>
              </tr>
              {list.map((m) => {
                // Less time is better; for other numbers the direction says nothing by itself.
                const tone = m.unit === "seconds" && m.delta && !unchanged(m) ? (m.delta < 0 ? " better" : " worse") : "";
                return (
                  <tr key={m.name} data-testid="metric-row">
                    <th scope="row">{m.name}</th>
                    <td className="num">
                      <CellLabel>Run A</CellLabel>
                      {value(m.a, m.unit)}
                    </td>
                    <td className="num">
                      <CellLabel>Run B</CellLabel>
                      {value(m.b, m.unit)}
                    </td>
                    <td className={`num${tone}`}>
                      <CellLabel>Change</CellLabel>
                      {delta(m)}
                    </td>
                    <td className={`num${tone}`}>
                      <CellLabel>Change %</CellLabel>
                      {pct(m)}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          ))}
        </table>
      </ScrollBox>
    </section>
  );
}

// --- both runs' plots, stacked on the same axes -------------------------------------------------------

type Kind = "timeline" | "phases" | "transfer_sizes" | "spatiality" | "osts";
const KINDS: { kind: Kind; what: string }[] = [
  { kind: "timeline", what: "per-rank timeline (it needs a DXT trace)" },
  { kind: "phases", what: "I/O phases (they need a DXT trace)" },
  { kind: "transfer_sizes", what: "transfer sizes over time (they need a DXT trace)" },
  { kind: "spatiality", what: "file offsets over time (they need a DXT trace)" },
  { kind: "osts", what: "load per OST (it needs Lustre data)" },
];

function maxOf(xs: readonly number[]): number {
  let m = 0;
  for (const x of xs) if (x > m) m = x;
  return m;
}

type Range = [number, number] | null;

function StackedPlots({ c, pa, pb, ids }: { c: Comparison; pa: Loaded<PlotData>; pb: Loaded<PlotData>; ids: Record<Tag, string> }) {
  const [ostMetric, setOstMetric] = useState<OstMetric>("bytes");
  // Zooming or panning one run's plot moves the other's to the same x range.
  const [ranges, setRanges] = useState<Partial<Record<Kind, Range>>>({});
  const setRange = useCallback((kind: Kind, r: Range) => {
    setRanges((m) => {
      const old = m[kind] ?? null;
      if (old === r || (old && r && old[0] === r[0] && old[1] === r[1])) return m;
      return { ...m, [kind]: r };
    });
  }, []);
  // One stable handler per kind: a plot reports its range only when it moves.
  const handlers = useMemo(() => {
    const out: Partial<Record<Kind, XLink["onRange"]>> = {};
    for (const { kind } of KINDS)
      out[kind] = (r) => {
        setRange(kind, r);
      };
    return out;
  }, [setRange]);
  const A = pa && "data" in pa ? pa.data : null;
  const B = pb && "data" in pb ? pb.data : null;
  const shared = useMemo(() => {
    if (!A || !B) return null;
    const xMax = Math.max(timeExtent(A, c.a.runtime_s), timeExtent(B, c.b.runtime_s)) || 1;
    const oa = A.osts;
    const ob = B.osts;
    const osts = Array.from(new Set([...(oa?.ost ?? []), ...(ob?.ost ?? [])])).sort((x, y) => x - y);
    const yMax = {
      bytes: Math.max(maxOf(oa?.bytes ?? []), maxOf(ob?.bytes ?? [])),
      time: Math.max(maxOf(oa?.time ?? []), maxOf(ob?.time ?? [])),
    };
    const sa = A.transfer_sizes ? sizeRange(A.transfer_sizes) : null;
    const sb = B.transfer_sizes ? sizeRange(B.transfer_sizes) : null;
    const sizes: [number, number] | undefined =
      sa && sb ? [Math.min(sa[0], sb[0]), Math.max(sa[1], sb[1])] : (sa ?? sb ?? undefined);
    const offsets: [number, number] = [0, Math.max(A.spatiality ? offsetMax(A.spatiality) : 0, B.spatiality ? offsetMax(B.spatiality) : 0)];
    return { xMax, osts, yMax, sizes, offsets };
  }, [A, B, c.a.runtime_s, c.b.runtime_s]);

  const errors = [pa && "error" in pa ? `run A: ${pa.error.message}` : null, pb && "error" in pb ? `run B: ${pb.error.message}` : null].filter(
    (e): e is string => e !== null,
  );
  const kinds = A && B ? KINDS.filter((k) => A[k.kind] || B[k.kind]) : [];

  const panel = (tag: Tag, p: PlotData, s: RunSummary, kind: Kind, what: string): ReactNode => {
    if (!shared) return null;
    const uid = `-${tag.toLowerCase()}`;
    const run = `Run ${tag}`;
    const onRange = handlers[kind];
    const xLink: XLink | null = onRange ? { range: ranges[kind] ?? null, onRange } : null;
    const missing = <p className="muted plot-missing">Run {tag} has no {what}.</p>;
    switch (kind) {
      case "timeline":
        return p.timeline ? (
          <TimelineView p={p.timeline} hl={null} runtime={s.runtime_s} uid={uid} run={run} xMax={shared.xMax} xLink={xLink} analysisId={ids[tag]} />
        ) : (
          missing
        );
      case "phases":
        return p.phases ? (
          <PhasesView p={p.phases} hl={null} runtime={s.runtime_s} nprocs={s.nprocs} uid={uid} run={run} xMax={shared.xMax} xLink={xLink} />
        ) : (
          missing
        );
      case "transfer_sizes":
        return p.transfer_sizes ? (
          <TransferSizesView p={p.transfer_sizes} hl={null} runtime={s.runtime_s} uid={uid} run={run} xMax={shared.xMax} yRange={shared.sizes} xLink={xLink} />
        ) : (
          missing
        );
      case "spatiality":
        return p.spatiality ? (
          <SpatialityView p={p.spatiality} hl={null} runtime={s.runtime_s} uid={uid} run={run} xMax={shared.xMax} yRange={shared.offsets} xLink={xLink} />
        ) : (
          missing
        );
      case "osts":
        return p.osts ? (
          <OstView p={p.osts} uid={uid} run={run} osts={shared.osts} yMax={shared.yMax} metric={ostMetric} onMetric={setOstMetric} xLink={xLink} />
        ) : (
          missing
        );
    }
  };

  return (
    <section id="compare-plots" aria-labelledby="compare-plots-title">
      <h2 id="compare-plots-title">Plots</h2>
      {errors.length > 0 && <ErrorNote error={`Plots unavailable: ${errors.join("; ")}`} />}
      {(!pa || !pb) && <Spinner label="Loading plots…" />}
      {A && B && kinds.length === 0 && <p className="muted">Neither log has a DXT trace or Lustre data to plot.</p>}
      {A && B && kinds.length > 0 && (
        <p className="muted small">
          Each plot shows run A above run B on the same axes: the same time span (zooming one zooms both), the same request-size and offset
          scales, and for OSTs the same OSTs and scale.
        </p>
      )}
      {A &&
        B &&
        kinds.map(({ kind, what }) => (
          <div key={kind} className="plot-pair" data-testid={`compare-plots-${kind}`}>
            {(["A", "B"] as const).map((tag) => (
              <div key={tag} className={`plot-run run-${tag.toLowerCase()}`} data-testid={`compare-plot-${tag.toLowerCase()}`}>
                <p className="plot-run-tag">
                  <span className={`run-tag run-${tag.toLowerCase()}`}>{tag}</span> Run {tag}, job {String((tag === "A" ? c.a : c.b).jobid)} (
                  {tag === "A" ? "before" : "after"})
                </p>
                {panel(tag, tag === "A" ? A : B, tag === "A" ? c.a : c.b, kind, what)}
              </div>
            ))}
          </div>
        ))}
    </section>
  );
}
