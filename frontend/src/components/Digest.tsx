// The help desk's daily digest: jobs new since this user's last visit (kept in localStorage per user;
// the last day on a first visit), grouped by their top cause, with the node-hours each cause lost.
import { useMemo } from "react";
import type { AnalysisSummary } from "../api/client";
import { dateTime } from "../lib/format";
import { Link } from "../lib/router";
import { exeName, nodeHours } from "./jobcols";

const key = (user: string) => `iodiag.lastVisit.${user}`;

// Read once per page load: the visit before this one, whatever the list re-renders.
const visits = new Map<string, string>();

/** When this user last opened the list (the last day on a first visit); this visit is recorded for the next one. */
export function lastVisit(user: string): string {
  let since = visits.get(user);
  if (since === undefined) {
    const prev = localStorage.getItem(key(user));
    localStorage.setItem(key(user), new Date().toISOString());
    since = prev && !Number.isNaN(Date.parse(prev)) ? prev : new Date(Date.now() - 24 * 3600 * 1000).toISOString();
    visits.set(user, since);
  }
  return since;
}

/**
 * The cause a job is grouped under: the cause its verdict headline names ("L04 · slow OST"), else the
 * code and title of its top finding, else what the headline says.
 */
export function causeOf(r: AnalysisSummary, top: string | null | undefined): string {
  if (r.status !== "done") return r.status === "failed" ? "Analysis failed" : "Not analysed yet";
  const h = (r.run?.headline ?? "").replaceAll("`", "");
  const named = /(?:cost is|likeliest is) (.+?) \(([A-Z]\d{2})(?::[^)]*)?\)/.exec(h);
  if (named) return `${named[2] ?? ""} · ${named[1] ?? ""}`;
  if (h.startsWith("I/O is not why")) return "I/O is not why the job is slow";
  if (top) return top;
  if (h) return h.includes("; ") ? h.slice(h.indexOf("; ") + 2) : h;
  if (top === undefined && r.counts.critical + r.counts.warning + r.counts.info > 0) return "…";
  return "No problems found";
}

export function Digest({ rows, since, tops }: { rows: AnalysisSummary[]; since: string; tops: Map<string, string | null | undefined> }) {
  const groups = useMemo(() => {
    const fresh = rows.filter((r) => r.created_at > since);
    const by = new Map<string, { cause: string; jobs: AnalysisSummary[]; lost: number; known: number; critical: number }>();
    for (const r of fresh) {
      const cause = causeOf(r, tops.get(r.id));
      const g = by.get(cause) ?? { cause, jobs: [], lost: 0, known: 0, critical: 0 };
      g.jobs.push(r);
      // Node-hours need the node count: a job without one adds nothing, and a group of such jobs says so.
      if (r.run?.node_hours_lost != null) {
        g.lost += r.run.node_hours_lost;
        g.known++;
      }
      if (r.counts.critical > 0) g.critical++;
      by.set(cause, g);
    }
    return [...by.values()].sort((a, b) => b.lost - a.lost || b.jobs.length - a.jobs.length);
  }, [rows, since, tops]);
  const total = groups.reduce((n, g) => n + g.jobs.length, 0);
  const lost = groups.reduce((n, g) => n + g.lost, 0);
  return (
    <section className="digest" data-testid="digest" aria-labelledby="digest-title">
      <h2 id="digest-title">
        New since {dateTime(since)}: {total} job(s){lost > 0 ? `, ${nodeHours(lost)} node-hours lost` : ""}
      </h2>
      {groups.length === 0 ? (
        <p className="empty">No new jobs since your last visit.</p>
      ) : (
        <ul className="digest-groups">
          {groups.map((g) => (
            <li key={g.cause} data-testid="digest-group">
              <div className="digest-head">
                <strong className="digest-cause">{g.cause}</strong>
                <span className="muted small" data-testid="digest-stats">
                  {g.jobs.length} job(s){g.critical ? `, ${String(g.critical)} critical` : ""} · {g.known ? `${nodeHours(g.lost)} node-h lost` : "node-hours lost not known (no node count)"}
                </span>
              </div>
              <ul className="digest-jobs">
                {g.jobs.map((r) => (
                  <li key={r.id}>
                    <Link to={`/analyses/${encodeURIComponent(r.id)}`} title={r.exe ?? r.filename}>
                      {exeName(r)}
                    </Link>{" "}
                    <span className="muted small">
                      {r.owner}
                      {r.job_id ? ` · job ${r.job_id}` : ""}
                      {r.run?.node_hours_lost ? ` · ${nodeHours(r.run.node_hours_lost)} node-h` : ""}
                    </span>
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
