import type { AnalysisSummary, Finding, Schemas } from "../api/client";

export const SEVERITIES = ["critical", "warning", "info", "ok"] as const;
export type SeverityName = (typeof SEVERITIES)[number];

export function SeverityBadge({ s }: { s: string }) {
  return (
    <span className={`badge sev-${s}`} title={`Severity: ${s}`}>
      <span className="sr-only">Severity: </span>
      {s}
    </span>
  );
}

/** Findings per severity: bare numbers (tables, with the severity in a tooltip) or, `labelled`, "2 critical". */
export function Counts({ c, compact = false, labelled = false }: { c: Schemas["SeverityCounts"]; compact?: boolean; labelled?: boolean }) {
  return (
    <span
      className={`counts${labelled ? " labelled" : ""}`}
      role="img"
      aria-label={`${c.critical} critical, ${c.warning} warning, ${c.info} info, ${c.ok} ok`}
      data-testid="counts"
    >
      {SEVERITIES.filter((s) => !compact || s !== "ok").map((s) => (
        <span key={s} className={`count sev-${s}${c[s] ? "" : " zero"}`} title={s} aria-hidden="true">
          {labelled ? `${c[s]} ${s}` : c[s]}
        </span>
      ))}
    </span>
  );
}

export function StatusBadge({
  a,
}: {
  a: Pick<AnalysisSummary, "status" | "stage" | "progress"> & { queue_position?: number | null };
}) {
  const label =
    a.status === "running"
      ? `${a.stage} ${Math.round(a.progress * 100)} %`
      : a.status === "queued" && a.queue_position
        ? `queued #${a.queue_position}`
        : a.status;
  return (
    <span className={`badge status-${a.status}`}>
      <span className="sr-only">Analysis status: </span>
      {label}
    </span>
  );
}

export function severityRank(s: string): number {
  const i = SEVERITIES.indexOf(s as SeverityName);
  return i < 0 ? 9 : i;
}

/** Findings most severe first (stable). */
export function sortFindings(fs: readonly Finding[]): Finding[] {
  return fs
    .map((f, i) => [f, i] as const)
    .sort((a, b) => severityRank(a[0].severity) - severityRank(b[0].severity) || a[1] - b[1])
    .map(([f]) => f);
}

export function Spinner({ label }: { label: string }) {
  return (
    <span className="spinner" role="status">
      <span className="spin" aria-hidden="true" />
      {label}
    </span>
  );
}

export function ErrorNote({ error }: { error: string }) {
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}
