import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { NotFound } from "../components/NotFound";
import { useQuery } from "@tanstack/react-query";
import { type AnalysisOut, api, call, type Finding } from "../api/client";
import { asApiError, retryServerErrors } from "../lib/query";
import { ErrorNote, SEVERITIES, sortFindings, Spinner, StatusBadge } from "../components/badges";
import { arrivalDone, arrivedToFocus, focusUnlessBusy } from "../lib/focus";
import { useKnowledge } from "../lib/knowledge";
import { percent, seconds } from "../lib/format";
import { Link } from "../lib/router";
import { HeatmapView, type Highlight, type OstMetric, OstView, PhasesView, SpatialityView, TimelineView, TransferSizesView } from "../plots/Plots";
import { ChatPanel } from "../report/Chat";
import { CrossLayer } from "../report/CrossLayer";
import { Exports } from "../report/Exports";
import { ComparePicker } from "../report/ComparePicker";
import { FindingCard, findingWindow, OST_CODES } from "../report/FindingCard";
import { ReportHeader } from "../report/Header";
import { RunHistory } from "../report/History";
import { goToThread, MessagesLink, ReplyThread } from "../report/Replies";

const STAGES = ["queued", "reading", "analyzing", "rendering", "storing", "done"] as const;

export function AnalysisPage({ id }: { id: string }) {
  // Opened by an upload: the page's heading takes focus once it is shown (the progress page's, then the report's).
  const path = `/analyses/${encodeURIComponent(id)}`;
  const [arrived] = useState(() => arrivedToFocus(path));
  useEffect(
    () => () => {
      arrivalDone(path);
    },
    [path],
  );

  // Polled while queued or running; while the server is down or erring, asked again every 3 s.
  const q = useQuery({
    queryKey: ["analysis", id],
    queryFn: () => call(api.GET("/api/v1/analyses/{analysis_id}", { params: { path: { analysis_id: id } } })),
    staleTime: 0,
    refetchInterval: (query) => {
      if (query.state.error) return retryServerErrors(query.state.error, 3000);
      const s = query.state.data?.status;
      return s === "queued" || s === "running" ? 800 : false;
    },
  });
  const a = q.data ?? null;
  const error = q.error ? asApiError(q.error) : null;

  useEffect(() => {
    document.title = a ? `${a.exe ?? a.filename} · iodiag` : "Analysis · iodiag";
  }, [a]);

  if (error?.status === 404 || error?.status === 422) return <NotFound what="analysis" detail={`There is no analysis with id “${id}”, or it is not yours to see.`} />;
  if (!a) return <div className="page">{error ? <ErrorNote error={error.message} /> : <Spinner label="Loading the analysis…" />}</div>;
  if (a.status !== "done") return <Progress a={a} error={error?.message ?? null} focusHeading={arrived} />;
  return <Done a={a} focusHeading={arrived} />;
}

function Progress({ a, error, focusHeading }: { a: AnalysisOut; error: string | null; focusHeading: boolean }) {
  const at = STAGES.indexOf(a.stage as (typeof STAGES)[number]);
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (focusHeading) focusUnlessBusy(headingRef.current);
  }, [focusHeading]);
  return (
    <div className="page narrow">
      <h1 ref={headingRef} tabIndex={-1}>
        Analyzing <span className="path">{a.filename}</span>
      </h1>
      {a.status === "failed" ? (
        <div className="card">
          <p className="error" role="alert">
            The analysis failed{a.error ? `: ${a.error}` : "."}
          </p>
          <p>
            <Link to="/upload">Upload another log</Link>
          </p>
        </div>
      ) : (
        <div className="card" data-testid="progress">
          <p aria-live="polite">
            <StatusBadge a={a} /> {a.status === "queued"
              ? a.queue_position === 1
                ? "Next in line for a worker…"
                : a.queue_position
                  ? `Waiting for a worker: ${a.queue_position - 1} ${a.queue_position === 2 ? "analysis" : "analyses"} ahead of it (users take turns)…`
                  : "Waiting for a worker…"
              : `Stage: ${a.stage}`}
          </p>
          <progress max={1} value={a.status === "queued" ? undefined : a.progress} aria-label="Analysis progress" />
          <span className="muted small"> {percent(a.progress)}</span>
          <ol className="stages">
            {STAGES.map((s, i) => (
              <li key={s} className={i < at ? "done" : i === at ? "current" : ""} aria-current={i === at ? "step" : undefined}>
                {s}
              </li>
            ))}
          </ol>
          {a.attempts > 1 && <p className="muted small">Attempt {a.attempts}.</p>}
        </div>
      )}
      {error && <ErrorNote error={error} />}
    </div>
  );
}

function Done({ a, focusHeading }: { a: AnalysisOut; focusHeading: boolean }) {
  const [sel, setSel] = useState<{ code: string; n: number } | null>(null);
  const selected = sel?.code ?? null;
  const [flash, setFlash] = useState<string | null>(null);
  const [showOk, setShowOk] = useState(false);
  const knowledge = useKnowledge();
  const plotsRef = useRef<HTMLElement>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const threadRef = useRef<HTMLElement>(null);
  const [unread, setUnread] = useState(a.unread_replies);
  const [replyCount, setReplyCount] = useState<number | null>(null);
  const onRead = useCallback(() => {
    setUnread(0);
  }, []);
  // The OST plot opens on I/O time where a finding is about a slow or overloaded OST (time is what they cost).
  const [ostMetric, setOstMetric] = useState<OstMetric | null>(null);

  // A finished analysis does not change: its report and plots are fetched once and kept.
  const params = { params: { path: { analysis_id: a.id } } };
  const reportQ = useQuery({
    queryKey: ["analysis", a.id, "report"],
    queryFn: () => call(api.GET("/api/v1/analyses/{analysis_id}/report.json", params)),
    staleTime: Infinity,
  });
  const plotsQ = useQuery({
    queryKey: ["analysis", a.id, "plots"],
    queryFn: () => call(api.GET("/api/v1/analyses/{analysis_id}/plots", params)),
    staleTime: Infinity,
  });
  const report = reportQ.data ?? null;
  const plots = plotsQ.data ?? null;
  const error = reportQ.error ? asApiError(reportQ.error).message : null;
  const plotError = plotsQ.error ? asApiError(plotsQ.error).message : null;

  // After an upload: the report's heading takes focus once the report is shown.
  useEffect(() => {
    if (focusHeading && report) focusUnlessBusy(headingRef.current);
  }, [focusHeading, report]);

  const findings = useMemo(() => sortFindings(report?.findings ?? []), [report]);
  const codes = useMemo(() => new Set(findings.map((f) => f.code)), [findings]);
  const hasPlots = plots !== null && Object.values(plots).some(Boolean);
  const ostFinding = findings.some((f) => OST_CODES.has(f.code) && f.severity !== "ok");
  const ostShown: OstMetric = ostMetric ?? (ostFinding ? "time" : "bytes");

  const highlight = useMemo<Highlight | null>(() => {
    const f = findings.find((x) => x.code === selected);
    if (!f) return null;
    return { key: `${f.code}-${String(sel?.n ?? 0)}`, code: f.code, title: f.title, ranks: f.ranks ?? [], window: findingWindow(f) };
  }, [selected, findings, sel]);

  const select = useCallback(
    (f: Finding) => {
      const on = selected !== f.code;
      setSel((s) => (s?.code === f.code ? null : { code: f.code, n: (s?.n ?? 0) + 1 }));
      const ost = on && OST_CODES.has(f.code) && plots?.osts;
      if (ost) setOstMetric("time");
      requestAnimationFrame(() => {
        if (ost) {
          const card = plotsRef.current?.querySelector<HTMLElement>('[data-testid="ost-card"]');
          card?.focus({ preventScroll: true });
          card?.scrollIntoView({ behavior: "smooth", block: "start" });
          return;
        }
        // Shown: focus goes to the plot it points to, the first that draws a finding's ranks and time
        // window (the timeline where the log has one); the plots' section scrolls in, banner and all.
        if (on) plotsRef.current?.querySelector<HTMLElement>(".plot-card[data-highlights]")?.focus({ preventScroll: true });
        plotsRef.current?.scrollIntoView({ behavior: "smooth", block: "start" });
      });
    },
    [selected, plots],
  );

  const citeFinding = useCallback((code: string) => {
    const f = findings.find((x) => x.code === code);
    if (f?.severity === "ok") setShowOk(true);
    setFlash(code);
    setTimeout(() => {
      setFlash((c) => (c === code ? null : c));
    }, 2000);
    requestAnimationFrame(() => {
      const el = document.getElementById(`finding-${code}`);
      el?.scrollIntoView({ behavior: "smooth", block: "center" });
      el?.focus({ preventScroll: true });
    });
  }, [findings]);

  if (error) return <div className="page"><ErrorNote error={error} /></div>;
  if (!report) return <div className="page"><Spinner label="Loading the report…" /></div>;

  const bySeverity = SEVERITIES.map((s) => [s, findings.filter((f) => f.severity === s)] as const).filter(([, fs]) => fs.length > 0);
  const runtime = report.job.runtime_s;

  return (
    <div className="report-layout">
      <div className="report-main">
        <ReportHeader
          a={a}
          report={report}
          onFinding={citeFinding}
          headingRef={headingRef}
          extra={
            <MessagesLink
              unread={unread}
              count={replyCount}
              onGo={() => {
                goToThread(threadRef);
              }}
            />
          }
        />
        <RunHistory a={a} />
        <ComparePicker a={a} />
        <ReplyThread a={a} unread={unread} onRead={onRead} onCount={setReplyCount} sectionRef={threadRef} />
        <div className="report-bar">
          <nav aria-label="Report sections" className="section-nav">
            <a href="#findings">Findings</a>
            {hasPlots && <a href="#plots">Plots</a>}
            {report.cross_layer && <a href="#crosslayer">Across the stack</a>}
          </nav>
          <Exports a={a} />
        </div>
        <section id="findings" aria-labelledby="findings-title">
          <h2 id="findings-title">Findings</h2>
          {findings.length === 0 && <p>No findings.</p>}
          {bySeverity.map(([sev, fs]) =>
            sev === "ok" ? (
              <details key={sev} className="ok-group" open={showOk} onToggle={(e) => { setShowOk(e.currentTarget.open); }}>
                <summary>
                  {fs.length} thing(s) that look fine
                </summary>
                {fs.map((f) => (
                  <div key={f.code} className={flash === f.code ? "flash" : ""}>
                    <FindingCard f={f} knowledge={knowledge} selected={selected === f.code} onSelect={() => { select(f); }} plottable={hasPlots} ostPlot={Boolean(plots?.osts)} />
                  </div>
                ))}
              </details>
            ) : (
              <div key={sev} className="sev-group">
                <h3 className={`sev-heading sev-${sev}`}>
                  {sev} ({fs.length})
                </h3>
                {fs.map((f) => (
                  <div key={f.code} className={flash === f.code ? "flash" : ""}>
                    <FindingCard f={f} knowledge={knowledge} selected={selected === f.code} onSelect={() => { select(f); }} plottable={hasPlots} ostPlot={Boolean(plots?.osts)} />
                  </div>
                ))}
              </div>
            ),
          )}
        </section>
        <section id="plots" ref={plotsRef} aria-labelledby="plots-title">
          <h2 id="plots-title">Plots</h2>
          {plotError && <ErrorNote error={`Plots unavailable: ${plotError}`} />}
          {!plots && !plotError && <Spinner label="Loading plots…" />}
          {plots && !hasPlots && <p className="muted">This log has no DXT trace or Lustre data to plot.</p>}
          {highlight && (
            <div className="hl-banner" role="status" data-testid="highlight-banner">
              <span>
                Highlighting <strong>{highlight.code}</strong> · {highlight.title}
                {highlight.window ? ` · ${seconds(highlight.window[0])} – ${seconds(highlight.window[1])}` : ""}
                {highlight.ranks.length ? ` · rank(s) ${highlight.ranks.slice(0, 12).join(", ")}${highlight.ranks.length > 12 ? "…" : ""}` : ""}
              </span>
              <button type="button" className="btn small" onClick={() => { setSel(null); }}>
                Clear
              </button>
            </div>
          )}
          {plots?.timeline && <TimelineView p={plots.timeline} hl={highlight} runtime={runtime} analysisId={a.id} />}
          {plots?.heatmap && <HeatmapView p={plots.heatmap} hl={highlight} runtime={runtime} />}
          {plots?.phases && <PhasesView p={plots.phases} hl={highlight} runtime={runtime} nprocs={report.job.nprocs} />}
          {plots?.transfer_sizes && <TransferSizesView p={plots.transfer_sizes} hl={highlight} runtime={runtime} />}
          {plots?.spatiality && <SpatialityView p={plots.spatiality} hl={highlight} runtime={runtime} />}
          {plots?.osts && <OstView p={plots.osts} metric={ostShown} onMetric={setOstMetric} />}
        </section>
        {report.cross_layer && (
          <div id="crosslayer">
            <CrossLayer cl={report.cross_layer} />
          </div>
        )}
      </div>
      <ChatPanel analysisId={a.id} knowledge={knowledge} findingCodes={codes} onCiteFinding={citeFinding} />
    </div>
  );
}
