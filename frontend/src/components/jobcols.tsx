// The jobs list's columns: which ones a reader sees (chosen in a small "Columns" menu, kept per user in
// localStorage), the executable's short name, and time lost told the way the report tells it.
import { useEffect, useRef, useState } from "react";
import type { AnalysisSummary } from "../api/client";
import { humanSeconds } from "../lib/format";

export type ColId =
  | "unread"
  | "findings"
  | "lost"
  | "share"
  | "top"
  | "user"
  | "exe"
  | "job"
  | "submitted"
  | "triage"
  | "assignee"
  | "notes"
  | "runtime"
  | "ranks"
  | "nodes"
  | "nodeh"
  | "nodeh_lost";

export const COLUMNS: { id: ColId; label: string; shown: boolean; fixed?: boolean }[] = [
  { id: "unread", label: "Unread", shown: true },
  { id: "findings", label: "Findings", shown: true },
  { id: "lost", label: "Time lost", shown: true },
  { id: "share", label: "I/O share", shown: true },
  { id: "top", label: "Top cause", shown: true, fixed: true },
  { id: "user", label: "User", shown: true },
  { id: "exe", label: "Executable", shown: true, fixed: true },
  { id: "job", label: "Job", shown: true },
  { id: "submitted", label: "Submitted", shown: true },
  { id: "triage", label: "Triage", shown: true },
  { id: "assignee", label: "Assignee", shown: true },
  { id: "notes", label: "Notes", shown: true },
  { id: "runtime", label: "Run time", shown: false },
  { id: "ranks", label: "Ranks", shown: false },
  { id: "nodes", label: "Nodes", shown: false },
  { id: "nodeh", label: "Node-hours", shown: false },
  { id: "nodeh_lost", label: "Node-h lost", shown: false },
];

const key = (user: string) => `iodiag.columns.${user}`;

function load(user: string): Set<ColId> {
  const fallback = new Set(COLUMNS.filter((c) => c.shown).map((c) => c.id));
  try {
    const raw: unknown = JSON.parse(localStorage.getItem(key(user)) ?? "null");
    if (!Array.isArray(raw)) return fallback;
    const known = new Set<string>(COLUMNS.map((c) => c.id));
    const out = new Set((raw as unknown[]).filter((x): x is ColId => typeof x === "string" && known.has(x)));
    for (const c of COLUMNS) if (c.fixed) out.add(c.id);
    return out;
  } catch {
    return fallback;
  }
}

/** The columns this user chose (or the defaults), and a setter that remembers the choice. */
export function useColumns(user: string): [Set<ColId>, (id: ColId, on: boolean) => void, () => void] {
  const [cols, setCols] = useState<Set<ColId>>(() => load(user));
  const save = (next: Set<ColId>) => {
    setCols(next);
    localStorage.setItem(key(user), JSON.stringify([...next]));
  };
  const toggle = (id: ColId, on: boolean) => {
    const next = new Set(cols);
    if (on) next.add(id);
    else next.delete(id);
    save(next);
  };
  const reset = () => {
    localStorage.removeItem(key(user));
    setCols(load(user));
  };
  return [cols, toggle, reset];
}

/** The "Columns" menu: a checkbox per column that may be hidden. */
export function ColumnsMenu({ cols, available, onToggle, onReset }: { cols: Set<ColId>; available: ColId[]; onToggle: (id: ColId, on: boolean) => void; onReset: () => void }) {
  const ref = useRef<HTMLDetailsElement>(null);
  // The checkboxes exist only while the menu is open (their labels repeat the columns' names).
  const [open, setOpen] = useState(false);
  // Closes on a click elsewhere and on Escape, like a menu.
  useEffect(() => {
    const away = (e: MouseEvent) => {
      if (ref.current?.open && !ref.current.contains(e.target as Node)) ref.current.open = false;
    };
    document.addEventListener("click", away);
    return () => {
      document.removeEventListener("click", away);
    };
  }, []);
  return (
    <details
      className="columns-menu"
      ref={ref}
      data-testid="columns-menu"
      onToggle={(e) => {
        setOpen(e.currentTarget.open);
      }}
      onKeyDown={(e) => {
        if (e.key === "Escape" && ref.current?.open) {
          ref.current.open = false;
          ref.current.querySelector("summary")?.focus();
        }
      }}
    >
      <summary className="btn small">Columns</summary>
      {open && (
      <fieldset>
        <legend className="sr-only">Columns shown</legend>
        {COLUMNS.filter((c) => available.includes(c.id) && !c.fixed).map((c) => (
          <label key={c.id}>
            <input
              type="checkbox"
              checked={cols.has(c.id)}
              onChange={(e) => {
                onToggle(c.id, e.target.checked);
              }}
              data-testid={`col-${c.id}`}
            />{" "}
            {c.label}
          </label>
        ))}
        <button type="button" className="btn small" onClick={onReset}>
          Defaults
        </button>
      </fieldset>
      )}
    </details>
  );
}

/** The executable's name: basename of the command line's first word (the run's own, when the report has it). */
export function exeName(r: Pick<AnalysisSummary, "exe" | "filename" | "run">): string {
  if (r.run?.executable) return r.run.executable;
  const first = (r.exe ?? "").trim().split(/\s+/)[0]?.replace(/^["']|["']$/g, "") ?? "";
  const base = first.split("/").filter(Boolean).pop();
  return base ?? r.filename;
}

/**
 * Time lost as the report tells it. A job with critical findings never reads "0 µs": when the verdict
 * could not put seconds on its causes, the list says "unknown" and why.
 */
export function timeLost(r: Pick<AnalysisSummary, "run" | "counts" | "max_severity" | "status">): { text: string; title?: string } {
  if (r.status !== "done") return { text: "–" };
  const s = r.run?.time_lost_s;
  const critical = r.counts.critical > 0 || r.max_severity === "critical";
  if (s == null || !Number.isFinite(s) || s <= 0) {
    if (critical)
      return {
        text: "unknown",
        title: "This job has critical findings, but the report could not put a number of seconds on them: open the job to see what they cost.",
      };
    return s == null ? { text: "–", title: "Not measured for this job" } : { text: "0 s", title: "The report's causes cost no measurable time" };
  }
  const nh = r.run?.node_hours_lost;
  const title = nh != null && nh > 0 ? `${nodeHours(nh)} node-hours lost` : undefined;
  if (s < 1e-6) return { text: "< 1 µs", title };
  return { text: humanSeconds(s), title };
}

/** Node-hours to two decimals; a sliver shows as "< 0.01", not as a zero that reads like nothing was lost. */
export function nodeHours(h: number): string {
  return h > 0 && h < 0.005 ? "< 0.01" : h.toFixed(2);
}
