// Compare this run with another: its application's usual run (GET /compare/median: the median of its
// other runs), or any run the caller may see, found by user, executable, job id and date. Either opens the
// compare view; runs of different programs get there too, where "Compare anyway" lets them be compared.
import { useId, useState } from "react";
import { type AnalysisOut, type AnalysisSummary, api, ApiError, call, type ListQuery } from "../api/client";
import { ErrorNote, Spinner } from "../components/badges";
import { dateTime } from "../lib/format";
import { Link, navigate } from "../lib/router";
import { isStaff, useSession } from "../session";
import { WithCode } from "./Header";
import "../styles/report.css";

/** The server's one line as a sentence: "No other finished run of `ior` by sam to compare with." */
export function sentence(line: string): string {
  const t = line.trim();
  if (!t) return t;
  return `${t.charAt(0).toUpperCase()}${t.slice(1)}${/[.!?]$/.test(t) ? "" : "."}`;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** "2026-03-01" (a date input's value) as the start of that day, local time, in ISO 8601; the day after for `until`. */
function dayStart(day: string, next = false): string | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return null;
  const d = new Date(`${day}T00:00:00`);
  if (Number.isNaN(d.getTime())) return null;
  if (next) d.setDate(d.getDate() + 1);
  return d.toISOString();
}

export function ComparePicker({ a }: { a: AnalysisOut }) {
  const { me } = useSession();
  const staff = isStaff(me);
  const uid = useId();
  const [median, setMedian] = useState<{ busy: boolean; note: string | null }>({ busy: false, note: null });
  const [open, setOpen] = useState(false);
  const [q, setQ] = useState({ owner: "", exe: "", job_id: "", since: "", until: "" });
  const [results, setResults] = useState<{ items: AnalysisSummary[]; total: number } | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const usual = async () => {
    setMedian({ busy: true, note: null });
    try {
      const m = await call(api.GET("/api/v1/analyses/{analysis_id}/compare/median", { params: { path: { analysis_id: a.id } } }));
      setMedian({ busy: false, note: null });
      navigate(`/compare/${encodeURIComponent(m.analysis_id)}/median`);
    } catch (e) {
      // 409: no other finished run of this application (the server's one line says so).
      setMedian({ busy: false, note: e instanceof ApiError && e.status === 409 ? e.message : `Could not compare: ${message(e)}` });
    }
  };

  const search = async () => {
    setBusy(true);
    setError(null);
    try {
      const query: ListQuery = { status: "done", limit: 20, sort: "-created" };
      if (staff && q.owner.trim()) query.owner = q.owner.trim();
      if (q.exe.trim()) query.exe = q.exe.trim();
      if (q.job_id.trim()) query.job_id = q.job_id.trim();
      const since = dayStart(q.since);
      const until = dayStart(q.until, true);
      if (since) query.since = since;
      if (until) query.until = until;
      const page = await call(api.GET("/api/v1/analyses", { params: { query } }));
      setResults({ items: page.items.filter((x) => x.id !== a.id), total: page.total });
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  };

  const field = (key: keyof typeof q, label: string, type = "text", hint?: string) => (
    <div className="picker-field">
      <label htmlFor={`${uid}-${key}`}>{label}</label>
      <input
        id={`${uid}-${key}`}
        type={type}
        value={q[key]}
        placeholder={hint}
        onChange={(e) => {
          setQ((old) => ({ ...old, [key]: e.target.value }));
        }}
        data-testid={`picker-${key}`}
      />
    </div>
  );

  return (
    <section className="card compare-entry" aria-labelledby={`${uid}-title`} data-testid="compare-entry">
      <h2 id={`${uid}-title`} className="compare-entry-title">
        Compare this run
      </h2>
      <div className="actions">
        <button type="button" className="btn small" disabled={median.busy} onClick={() => void usual()} data-testid="compare-median">
          {median.busy ? "Finding the usual run…" : "Compare with this application's usual run"}
        </button>
        <button
          type="button"
          className="btn small"
          aria-expanded={open}
          aria-controls={`${uid}-picker`}
          onClick={() => {
            setOpen((o) => !o);
            if (!open && !results) void search();
          }}
          data-testid="compare-pick"
        >
          Compare with another run…
        </button>
      </div>
      {median.note && (
        <p className="muted small" role="status" data-testid="median-note">
          <WithCode text={sentence(median.note)} />
        </p>
      )}
      {open && (
        <div id={`${uid}-picker`} className="compare-picker" data-testid="compare-picker">
          <form
            className="picker-form"
            role="search"
            aria-label="Find a run to compare with"
            onSubmit={(e) => {
              e.preventDefault();
              void search();
            }}
          >
            {staff && field("owner", "User", "text", "e.g. alice")}
            {field("exe", "Executable contains", "text", a.exe ? (a.exe.trim().split(/\s+/)[0]?.split("/").pop() ?? "") : "")}
            {field("job_id", "Job id")}
            {field("since", "Submitted from", "date")}
            {field("until", "Submitted to", "date")}
            <button type="submit" className="btn small primary" disabled={busy} data-testid="picker-search">
              Search
            </button>
          </form>
          {error && <ErrorNote error={error} />}
          {busy && <Spinner label="Searching…" />}
          {results && !busy && (
            <>
              <p className="muted small" role="status">
                {results.items.length === 0
                  ? "No other finished run matches."
                  : `${String(results.items.length)} run${results.items.length === 1 ? "" : "s"} shown${results.total > results.items.length + 1 ? ` of ${String(results.total)}: narrow the search to see others` : ""}.`}
              </p>
              {results.items.length > 0 && (
                <ul className="picker-results" data-testid="picker-results">
                  {results.items.map((x) => (
                    <li key={x.id} data-testid="picker-result">
                      <Link to={`/compare/${encodeURIComponent(a.id)}/${encodeURIComponent(x.id)}`} className="picker-run">
                        <span className="picker-main">
                          {x.job_id ? `job ${x.job_id}` : "run"} <span className="exe">{x.exe ?? x.filename}</span>
                        </span>
                        <span className="muted small">
                          {staff ? `${x.owner} · ` : ""}
                          {x.run?.start ? `started ${dateTime(x.run.start)}` : `submitted ${dateTime(x.created_at)}`} · {x.filename}
                        </span>
                      </Link>
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}
        </div>
      )}
    </section>
  );
}
