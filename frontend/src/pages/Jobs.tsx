import { type KeyboardEvent, type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { type AnalysisOut, type AnalysisSummary, api, call, type ListQuery, tokenStore, type TriageIn, type TriageStatus } from "../api/client";
import { Counts, ErrorNote, SEVERITIES, severityRank, sortFindings, Spinner, StatusBadge } from "../components/badges";
import { Digest, lastVisit } from "../components/Digest";
import { EmptyJobs } from "../components/FirstSteps";
import { type ColId, COLUMNS, ColumnsMenu, exeName, nodeHours, timeLost, useColumns } from "../components/jobcols";
import { refreshUnread, UnreadBadge } from "../components/unread";
import { useDebounced } from "../lib/debounce";
import { dateTime, humanSeconds, percent } from "../lib/format";
import { asApiError, queryClient } from "../lib/query";
import { Link, navigate } from "../lib/router";
import { ScrollBox } from "../lib/scroll";
import { WithCode } from "../report/Header";
import { isStaff, useSession } from "../session";
import "../styles/jobs.css";

const TRIAGE: TriageStatus[] = ["open", "in-progress", "resolved", "wontfix"];
const STATUSES = ["queued", "running", "done", "failed"] as const;
const PAGE = 200;

type SortKey =
  | "date"
  | "severity"
  | "top"
  | "user"
  | "exe"
  | "job"
  | "status"
  | "triage"
  | "assignee"
  | "runtime"
  | "nprocs"
  | "nodes"
  | "io_share"
  | "node_hours"
  | "time_lost"
  | "node_hours_lost"
  | "unread";

// Impact columns are sorted by the server, so the page loaded is the top of the whole list, not of the newest.
const SERVER_SORT: Partial<Record<SortKey, NonNullable<ListQuery["sort"]>>> = {
  runtime: "runtime",
  nprocs: "nprocs",
  nodes: "nodes",
  io_share: "io_share",
  node_hours: "node_hours",
  time_lost: "time_lost",
  node_hours_lost: "node_hours_lost",
};

type Filters = {
  status: string;
  severity: string;
  triage: string;
  code: string;
  owner: string;
  exe: string;
  since: string;
  until: string;
  minLost: string;
};
type Saved = { name: string; filters: Filters; search: string; sort: { key: SortKey; dir: 1 | -1 } };
const SAVED_KEY = "iodiag.savedFilters";

function loadSaved(): Saved[] {
  try {
    const raw: unknown = JSON.parse(localStorage.getItem(SAVED_KEY) ?? "[]");
    return Array.isArray(raw) ? (raw as Saved[]).filter((x) => typeof x.name === "string") : [];
  } catch {
    return [];
  }
}

function runNumber(r: AnalysisSummary, key: SortKey): number | null {
  const run = r.run;
  if (!run) return null;
  switch (key) {
    case "runtime":
      return run.runtime_s ?? null;
    case "nprocs":
      return run.nprocs ?? null;
    case "nodes":
      return run.nodes ?? null;
    case "io_share":
      return run.io_share ?? null;
    case "node_hours":
      return run.node_hours ?? null;
    case "time_lost":
      return run.time_lost_s ?? null;
    case "node_hours_lost":
      return run.node_hours_lost ?? null;
    default:
      return null;
  }
}

// The top finding of a done analysis never changes: each analysis is fetched once, into the query cache the
// analysis page reads too.
function topOf(a: AnalysisOut): string | null {
  const f = sortFindings(a.findings ?? []).find((x) => x.severity !== "ok");
  return f ? `${f.code} · ${f.title}` : null;
}

function cachedTop(id: string): string | null | undefined {
  const a = queryClient.getQueryData<AnalysisOut>(["analysis", id]);
  return a && a.status === "done" ? topOf(a) : undefined;
}

async function topFinding(id: string): Promise<string | null> {
  const a = await queryClient.query({
    queryKey: ["analysis", id],
    queryFn: () => call(api.GET("/api/v1/analyses/{analysis_id}", { params: { path: { analysis_id: id } } })),
    staleTime: Infinity,
  });
  return topOf(a);
}

/** The top finding of each row (undefined while unknown), fetched four at a time; rows with a verdict headline need none, unless `every`. */
function useTopFindings(rows: AnalysisSummary[], every = false): Map<string, string | null | undefined> {
  const [fetched, setFetched] = useState<ReadonlyMap<string, string | null>>(new Map());
  useEffect(() => {
    const state = { live: true };
    const want = rows.filter(
      (r) => r.status === "done" && (every || !r.run?.headline) && r.counts.critical + r.counts.warning + r.counts.info > 0 && cachedTop(r.id) === undefined,
    );
    const worker = async () => {
      for (let r = want.shift(); r && state.live; r = want.shift()) {
        try {
          const id = r.id;
          const v = await topFinding(id);
          setFetched((m) => new Map(m).set(id, v));
        } catch {
          /* leave it blank */
        }
      }
    };
    void Promise.all([worker(), worker(), worker(), worker()]);
    return () => {
      state.live = false;
    };
  }, [rows, every]);
  return useMemo(() => {
    const known = (id: string) => (fetched.has(id) ? fetched.get(id) : cachedTop(id));
    return new Map(rows.map((r) => [r.id, known(r.id)]));
  }, [rows, fetched]);
}

export function JobsPage({ scope }: { scope: "mine" | "all" }) {
  const { me } = useSession();
  const staff = isStaff(me);
  const [filters, setFilters] = useState<Filters>({
    since: "",
    until: "",
    status: "",
    severity: "",
    triage: "",
    code: "",
    owner: "",
    exe: "",
    minLost: "",
  });
  const [search, setSearch] = useState("");
  // The help desk triages by impact: largest time lost first.
  const [sort, setSort] = useState<{ key: SortKey; dir: 1 | -1 }>(
    scope === "all" && staff ? { key: "time_lost", dir: -1 } : { key: "date", dir: -1 },
  );
  const [saved, setSaved] = useState<Saved[]>(loadSaved);
  const [exporting, setExporting] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [compact] = useState(() => window.matchMedia("(max-width: 720px)").matches);
  const [unreadOnly, setUnreadOnly] = useState(false);
  const [cols, toggleCol, resetCols] = useColumns(me.user);
  const digestable = scope === "all" && staff;
  const [view, setView] = useState<"list" | "digest">("list");
  const since = useMemo(() => lastVisit(me.user), [me.user]);
  const [expanded, setExpanded] = useState<string | null>(null);
  const [activeId, setActiveId] = useState<string | null>(null);
  const available = useMemo<ColId[]>(
    () => COLUMNS.map((c) => c.id).filter((c) => (c !== "user" || scope === "all") && (c !== "notes" || staff)),
    [scope, staff],
  );
  const shown = available.filter((c) => cols.has(c));

  useEffect(() => {
    document.title = `${scope === "all" ? "All jobs" : "My jobs"} · iodiag`;
  }, [scope]);

  const query = useMemo<ListQuery>(() => {
    const q: ListQuery = { limit: PAGE };
    if (scope === "mine") q.owner = me.user;
    else if (filters.owner.trim()) q.owner = filters.owner.trim();
    if (filters.status) q.status = filters.status as ListQuery["status"];
    if (filters.severity) q.severity = filters.severity as ListQuery["severity"];
    if (filters.triage) q.triage = filters.triage as ListQuery["triage"];
    if (/^[A-Z][0-9]{2}$/.test(filters.code.trim().toUpperCase())) q.code = filters.code.trim().toUpperCase();
    if (filters.exe.trim()) q.exe = filters.exe.trim();
    // Dates are local days: from the start of `since` to the end of `until`.
    const day = (v: string, plus: number) => {
      const d = new Date(`${v}T00:00:00`);
      d.setDate(d.getDate() + plus);
      return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
    };
    if (filters.since) q.since = day(filters.since, 0);
    if (filters.until) q.until = day(filters.until, 1);
    const lost = Number(filters.minLost);
    if (filters.minLost.trim() && Number.isFinite(lost) && lost >= 0) q.min_time_lost_s = lost;
    const server = SERVER_SORT[sort.key];
    if (server) q.sort = sort.dir === -1 ? (`-${server}` as ListQuery["sort"]) : server;
    return q;
  }, [filters, scope, me.user, sort]);

  // Typing in a filter asks once it pauses (200 ms); the list shown stays until the new one arrives. While
  // something is queued or running the list is asked for every 3 s, else every 30 s (new replies), and only
  // while the page is visible.
  const asked = useDebounced(query, 200);
  const listKey = ["analyses", "list", asked] as const;
  const list = useQuery({
    queryKey: listKey,
    queryFn: () => call(api.GET("/api/v1/analyses", { params: { query: asked } })),
    placeholderData: keepPreviousData,
    staleTime: 0,
    refetchInterval: (q) => (q.state.data?.items.some((r) => r.status === "queued" || r.status === "running") ? 3000 : 30000),
  });
  const page = list.data ?? null;
  const error = list.error ? asApiError(list.error).message : null;
  const fetchedAt = list.dataUpdatedAt;
  useEffect(() => {
    if (fetchedAt) refreshUnread();
  }, [fetchedAt]);

  const items = useMemo(() => page?.items ?? [], [page]);
  const tops = useTopFindings(items);

  const rows = useMemo(() => {
    const s = search.trim().toLowerCase();
    const unread = unreadOnly ? items.filter((r) => r.unread_replies > 0) : items;
    const filtered = s
      ? unread.filter((r) =>
          [r.filename, r.exe, r.job_id, r.owner, r.id, r.triage.assignee, r.triage.note, r.run?.headline, tops.get(r.id), r.triage.status, r.status, r.regression ? "regression" : null]
            .filter(Boolean)
            .some((v) => String(v).toLowerCase().includes(s)),
        )
      : unread;
    const sevKey = (r: AnalysisSummary) =>
      [r.counts.critical, r.counts.warning, r.counts.info].reduce((acc, v) => acc * 100000 + v, 0) - severityRank(r.max_severity ?? "ok");
    const key = (r: AnalysisSummary): string | number => {
      switch (sort.key) {
        case "date":
          return r.created_at;
        case "severity":
          return sevKey(r);
        case "top":
          return r.run?.headline ?? tops.get(r.id) ?? "";
        case "user":
          return r.owner;
        case "exe":
          return r.exe ?? r.filename;
        case "job":
          return r.job_id ?? "";
        case "status":
          return r.status;
        case "triage":
          return TRIAGE.indexOf(r.triage.status);
        case "assignee":
          return r.triage.assignee ?? "";
        case "unread":
          return r.unread_replies;
        default:
          return 0;
      }
    };
    if (SERVER_SORT[sort.key]) {
      // Rows without the number (not done yet) go last either way, as the server orders them.
      return [...filtered].sort((a, b) => {
        const na = runNumber(a, sort.key);
        const nb = runNumber(b, sort.key);
        if (na === null || nb === null) return na === nb ? 0 : na === null ? 1 : -1;
        return (na - nb) * sort.dir;
      });
    }
    return [...filtered].sort((a, b) => {
      const ka = key(a);
      const kb = key(b);
      return (ka < kb ? -1 : ka > kb ? 1 : 0) * sort.dir;
    });
  }, [items, search, sort, tops, unreadOnly]);

  const onSaved = useCallback(
    (row: AnalysisSummary) => {
      queryClient.setQueryData<typeof page>(listKey, (p) => (p ? { ...p, items: p.items.map((r) => (r.id === row.id ? row : r)) } : p));
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the key is the query asked, by value
    [asked],
  );

  const head = (key: SortKey, label: string, className: string) => {
    const on = sort.key === key;
    return (
      <th scope="col" className={className} aria-sort={on ? (sort.dir === 1 ? "ascending" : "descending") : "none"}>
        <button
          type="button"
          className="sort"
          onClick={() => {
            setSort((s) => ({
              key,
              dir: s.key === key ? (s.dir === 1 ? -1 : 1) : key === "date" || key === "severity" || key === "unread" || SERVER_SORT[key] ? -1 : 1,
            }));
          }}
        >
          {label}
          <span aria-hidden="true">{on ? (sort.dir === 1 ? " ▲" : " ▼") : ""}</span>
        </button>
      </th>
    );
  };

  // Rows are a list the keyboard walks: ArrowUp/ArrowDown (Home/End) move between jobs, Enter opens one.
  const onRowKey = (e: KeyboardEvent<HTMLTableSectionElement>) => {
    const target = e.target as HTMLElement;
    if (target.closest("select, input, textarea, .row-editor, .row-details")) return;
    const row = target.closest<HTMLTableRowElement>('tr[data-testid="job-row"]');
    if (!row) return;
    const all = Array.from(e.currentTarget.querySelectorAll<HTMLTableRowElement>('tr[data-testid="job-row"]'));
    const i = all.indexOf(row);
    let next: HTMLTableRowElement | undefined;
    if (e.key === "ArrowDown") next = all[Math.min(i + 1, all.length - 1)];
    else if (e.key === "ArrowUp") next = all[Math.max(i - 1, 0)];
    else if (e.key === "Home") next = all[0];
    else if (e.key === "End") next = all[all.length - 1];
    else if (e.key === "Enter" && target === row) {
      e.preventDefault();
      navigate(`/analyses/${encodeURIComponent(row.dataset.id ?? "")}`);
      return;
    } else return;
    e.preventDefault();
    if (next) {
      setActiveId(next.dataset.id ?? null);
      next.focus();
    }
  };

  const narrowed = Object.values(filters).some((v) => v.trim() !== "") || search.trim() !== "" || unreadOnly;

  const setF = (k: keyof typeof filters) => (e: { target: { value: string } }) => {
    setFilters((f) => ({ ...f, [k]: e.target.value }));
  };

  // A first-time user sees what to do instead of an empty table; phones fold the filters under the search box.
  const firstRun = page?.total === 0 && scope === "mine" && !narrowed;
  const moreFilters = (
    <>
      <label>
        Status
        <select value={filters.status} onChange={setF("status")} data-testid="filter-status">
          <option value="">any</option>
          {STATUSES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <label>
        Severity
        <select value={filters.severity} onChange={setF("severity")} data-testid="filter-severity">
          <option value="">any</option>
          {SEVERITIES.map((s) => (
            <option key={s} value={s}>
              has {s}
            </option>
          ))}
        </select>
      </label>
      <label>
        Triage
        <select value={filters.triage} onChange={setF("triage")} data-testid="filter-triage">
          <option value="">any</option>
          {TRIAGE.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <label>
        Finding
        <input value={filters.code} onChange={setF("code")} placeholder="P08" size={5} maxLength={3} data-testid="filter-code" />
      </label>
      <label>
        Executable
        <input value={filters.exe} onChange={setF("exe")} placeholder="contains…" size={9} />
      </label>
      <label>
        From
        <input type="date" value={filters.since} onChange={setF("since")} />
      </label>
      <label>
        To
        <input type="date" value={filters.until} onChange={setF("until")} />
      </label>
      {scope === "all" && (
        <label>
          User
          <input value={filters.owner} onChange={setF("owner")} placeholder="user" size={8} data-testid="filter-owner" />
        </label>
      )}
      <label>
        Time lost ≥ (s)
        <input
          type="number"
          min={0}
          step="any"
          value={filters.minLost}
          onChange={setF("minLost")}
          placeholder="0"
          size={5}
          data-testid="filter-min-lost"
        />
      </label>
    </>
  );

  const saveCurrent = () => {
    const name = window.prompt("Name this filter", filters.owner || filters.code || search || "my filter")?.trim();
    if (!name) return;
    const next = [...saved.filter((x) => x.name !== name), { name, filters, search, sort }];
    setSaved(next);
    localStorage.setItem(SAVED_KEY, JSON.stringify(next));
  };
  const applySaved = (name: string) => {
    const s = saved.find((x) => x.name === name);
    if (!s) return;
    // Filters saved before a field existed lack it: fill in the defaults.
    setFilters((f) => ({ ...f, ...s.filters }));
    setSearch(s.search);
    setSort(s.sort);
  };
  const deleteSaved = (name: string) => {
    const next = saved.filter((x) => x.name !== name);
    setSaved(next);
    localStorage.setItem(SAVED_KEY, JSON.stringify(next));
  };
  const exportCsv = async () => {
    setExporting("Exporting…");
    try {
      const params = new URLSearchParams(
        Object.entries(query)
          .filter(([k]) => k !== "limit")
          .map(([k, v]) => [k, String(v)]),
      );
      if (!params.has("sort")) params.set("sort", "-created");
      const token = tokenStore.get();
      const res = await fetch(`/api/v1/analyses/export.csv?${params.toString()}`, {
        headers: token ? { Authorization: `Bearer ${token}` } : {},
      });
      if (!res.ok) throw new Error(`export failed (HTTP ${String(res.status)})`);
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement("a");
      a.href = url;
      a.download = "iodiag-jobs.csv";
      document.body.appendChild(a);
      a.click();
      a.remove();
      URL.revokeObjectURL(url);
      setExporting(null);
    } catch (e) {
      setExporting(e instanceof Error ? e.message : String(e));
    }
  };

  return (
    <div className="page">
      <div className="page-head">
        <h1>{scope === "all" ? "All jobs" : "My jobs"}</h1>
        <Link to="/upload" className="btn primary">
          Upload a log
        </Link>
      </div>
      {!firstRun && (
        <form className="filters" role="search" aria-label="Filter jobs" onSubmit={(e) => { e.preventDefault(); }}>
          <label>
            Search
            <input type="search" value={search} placeholder="file, exe, job, user, finding…" onChange={(e) => { setSearch(e.target.value); }} data-testid="search" />
          </label>
          {compact ? (
            <details className="more-filters">
              <summary>More filters</summary>
              <div className="filters">{moreFilters}</div>
            </details>
          ) : (
            moreFilters
          )}
        </form>
      )}
      {!firstRun && (
        <div className="list-tools" role="group" aria-label="Saved filters and export">
          <label>
            Saved filters
            <select
              value=""
              onChange={(e) => {
                applySaved(e.target.value);
              }}
              data-testid="saved-filters"
            >
              <option value="">{saved.length ? "apply…" : "none yet"}</option>
              {saved.map((x) => (
                <option key={x.name} value={x.name}>
                  {x.name}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="btn small" onClick={saveCurrent} data-testid="save-filter">
            Save this filter
          </button>
          {saved.length > 0 && (
            <details className="saved-manage">
              <summary>Manage</summary>
              <ul>
                {saved.map((x) => (
                  <li key={x.name}>
                    {x.name}{" "}
                    <button type="button" className="btn small" aria-label={`Delete saved filter ${x.name}`} onClick={() => { deleteSaved(x.name); }}>
                      Delete
                    </button>
                  </li>
                ))}
              </ul>
            </details>
          )}
          <button type="button" className="btn small" onClick={() => void exportCsv()} data-testid="export-csv">
            Export CSV
          </button>
          {exporting && <span className="muted small">{exporting}</span>}
          <label className="inline-check">
            <input
              type="checkbox"
              checked={unreadOnly}
              onChange={(e) => {
                setUnreadOnly(e.target.checked);
              }}
              data-testid="filter-unread"
            />{" "}
            Unread only
          </label>
          {view === "list" && <ColumnsMenu cols={cols} available={available} onToggle={toggleCol} onReset={resetCols} />}
        </div>
      )}
      {digestable && !firstRun && (
        <div className="view-switch" role="group" aria-label="View">
          <button type="button" className="btn small" aria-pressed={view === "list"} onClick={() => { setView("list"); }} data-testid="view-list">
            List
          </button>
          <button type="button" className="btn small" aria-pressed={view === "digest"} onClick={() => { setView("digest"); }} data-testid="view-digest">
            Daily digest
          </button>
        </div>
      )}
      {error && <ErrorNote error={error} />}
      {!page && !error && <Spinner label="Loading jobs…" />}
      {page && (
        <>
          <p className="muted small" aria-live="polite" data-testid="job-count">
            {rows.length === page.total ? `${page.total} job(s)` : `${rows.length} shown of ${page.total} job(s)`}
            {page.total > items.length ? ` (newest ${items.length} loaded)` : ""}
          </p>
          {view === "digest" ? (
            <Digest rows={rows} since={since} tops={tops} />
          ) : page.total === 0 && scope === "mine" && !narrowed ? (
            <EmptyJobs />
          ) : rows.length === 0 ? (
            <p className="empty">
              No jobs here yet{filters.status || filters.severity || filters.triage || filters.code || search ? " that match the filters" : ""}.{" "}
              {scope === "mine" && <Link to="/upload">Upload a log.</Link>}
            </p>
          ) : (
            <ScrollBox label={scope === "all" ? "All jobs" : "My jobs"}>
              <table className={`data jobs triage-list${shown.length > 10 ? " wide" : ""}`} data-testid="jobs-table">
                <thead>
                  <tr>
                    {shown.map((c) =>
                      c === "notes" ? (
                        <th key={c} scope="col" className="notes-col c-notes">
                          Notes
                        </th>
                      ) : (
                        <HeadCell key={c} c={c} head={head} />
                      ),
                    )}
                  </tr>
                </thead>
                <tbody onKeyDown={onRowKey}>
                  {rows.map((r, i) => (
                    <JobRow
                      key={r.id}
                      r={r}
                      top={tops.get(r.id)}
                      cols={shown}
                      staff={staff}
                      tabStop={r.id === activeId || (i === 0 && !rows.some((x) => x.id === activeId))}
                      onActive={() => {
                        setActiveId(r.id);
                      }}
                      expanded={expanded === r.id}
                      onExpand={(on) => {
                        setExpanded(on ? r.id : null);
                      }}
                      editing={editing === r.id}
                      onEdit={(on) => {
                        setEditing(on ? r.id : null);
                      }}
                      onSaved={onSaved}
                    />
                  ))}
                </tbody>
              </table>
            </ScrollBox>
          )}
        </>
      )}
    </div>
  );
}

const HEADS: Record<Exclude<ColId, "notes">, [SortKey, string, string]> = {
  unread: ["unread", "Unread", "c-unread"],
  findings: ["severity", "Findings", "c-findings"],
  lost: ["time_lost", "Time lost", "c-lost"],
  share: ["io_share", "I/O share", "c-share"],
  top: ["top", "Top cause", "c-top"],
  user: ["user", "User", "c-user"],
  exe: ["exe", "Executable", "c-exe"],
  job: ["job", "Job", "c-job"],
  submitted: ["date", "Submitted", "c-date"],
  triage: ["triage", "Triage", "c-triage"],
  assignee: ["assignee", "Assignee", "c-assignee"],
  runtime: ["runtime", "Run time", "c-num"],
  ranks: ["nprocs", "Ranks", "c-num"],
  nodes: ["nodes", "Nodes", "c-num"],
  nodeh: ["node_hours", "Node-hours", "c-num"],
  nodeh_lost: ["node_hours_lost", "Node-h lost", "c-num"],
};

function HeadCell({ c, head }: { c: Exclude<ColId, "notes">; head: (key: SortKey, label: string, className: string) => ReactNode }) {
  const [key, label, cls] = HEADS[c];
  return <>{head(key, label, cls)}</>;
}

/**
 * The verdict headline with its cause first: its lead ("I/O takes 67% of this 14 s run (…)") repeats the
 * I/O share column, so on screen the cell starts at the cause and its cost; screen readers and the title get it all.
 */
function CauseFirst({ headline }: { headline: string }) {
  const cut = headline.startsWith("I/O takes ") ? headline.indexOf("; ") : -1;
  if (cut < 0) return <WithCode text={headline} />;
  const rest = headline.slice(cut + 2);
  const said = /^the (largest cost|largest measured cost|root cause) is /.exec(rest)?.[0] ?? "";
  const body = rest.slice(said.length);
  // "slow OST (L04: …), ≈ 12.49 min (98% of the run). Action": a lead scans the cost, so it comes first and
  // survives the cell's one-line cut; a screen reader hears the headline in its own order.
  const costed = /^(.*?), ≈ ([^(]+?) \(/.exec(body);
  if (!costed || !said) {
    return (
      <>
        <span className="sr-only">{headline.slice(0, cut + 2) + said}</span>
        <WithCode text={body} />
      </>
    );
  }
  return (
    <>
      <span className="sr-only">{headline}</span>
      <span aria-hidden="true">
        <span className="cause-cost" data-testid="row-cause-cost">
          ≈ {costed[2]}
        </span>
        {" · "}
        <WithCode text={costed[1] ?? ""} />
      </span>
    </>
  );
}

/** Submitted, short: the time today, the day this year, the date before. */
function shortDate(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const now = new Date();
  const full = dateTime(iso);
  if (d.toDateString() === now.toDateString()) return full.slice(11);
  if (d.getFullYear() === now.getFullYear()) return full.slice(5, 10);
  return full.slice(0, 10);
}

function JobRow({
  r,
  top,
  cols,
  staff,
  tabStop,
  onActive,
  expanded,
  onExpand,
  editing,
  onEdit,
  onSaved,
}: {
  r: AnalysisSummary;
  top: string | null | undefined;
  cols: ColId[];
  staff: boolean;
  tabStop: boolean;
  onActive: () => void;
  expanded: boolean;
  onExpand: (on: boolean) => void;
  editing: boolean;
  onEdit: (on: boolean) => void;
  onSaved: (r: AnalysisSummary) => void;
}) {
  const [err, setErr] = useState<string | null>(null);
  const patch = async (change: Partial<TriageIn>) => {
    const body: TriageIn = { clear_assignee: false, ...change };
    setErr(null);
    try {
      const out = await call(api.PATCH("/api/v1/analyses/{analysis_id}/triage", { params: { path: { analysis_id: r.id } }, body }));
      onSaved(out);
      return true;
    } catch (e) {
      setErr(e instanceof Error ? e.message : String(e));
      return false;
    }
  };
  const run = r.run;
  const name = exeName(r);
  const lost = timeLost(r);
  const headline = r.status === "done" ? run?.headline?.replaceAll("`", "") : undefined;
  const topText =
    r.status !== "done" ? "" : headline ? headline : top === undefined && r.counts.critical + r.counts.warning + r.counts.info > 0 ? "…" : (top ?? "no problems found");
  const cell = (c: ColId): ReactNode => {
    switch (c) {
      case "unread":
        return (
          <td key={c} className="c-unread" data-label={r.unread_replies ? "Unread" : undefined}>
            <UnreadBadge n={r.unread_replies} />
          </td>
        );
      case "findings":
        return (
          <td key={c} className="counts-cell c-findings">
            {r.status === "done" ? <Counts c={r.counts} compact /> : <StatusBadge a={r} />}
          </td>
        );
      case "lost":
        return (
          <td key={c} data-label="Time lost" className="num c-lost" data-testid="cell-time-lost" title={lost.title}>
            {lost.text}
            {lost.title && lost.text === "unknown" && <span className="sr-only"> ({lost.title})</span>}
          </td>
        );
      case "share":
        return (
          <td key={c} data-label="I/O share" className="num c-share" data-testid="cell-io-share">
            {run?.io_share != null ? percent(run.io_share) : "–"}
          </td>
        );
      case "top":
        return (
          <td key={c} className="top c-top" data-label="Top cause" title={topText && topText !== "…" ? topText : undefined} data-testid="cell-top">
            {r.regression && (
              <span className="badge regression" title={r.regression.explanation} data-testid="regression-badge">
                regression<span className="sr-only">: {r.regression.explanation}</span>
              </span>
            )}
            {r.status === "done" && run?.headline ? (
              <span className="headline" data-testid="row-headline">
                <CauseFirst headline={run.headline} />
              </span>
            ) : (
              topText
            )}
          </td>
        );
      case "user":
        return (
          <td key={c} data-label="User" className="c-user" title={r.owner}>
            {r.owner}
          </td>
        );
      case "exe":
        return (
          <td key={c} className="exe c-exe" title={r.exe ?? r.filename}>
            <button
              type="button"
              className="expander"
              aria-expanded={expanded}
              aria-label={`Details of ${name}`}
              data-testid="row-expand"
              onClick={() => {
                onExpand(!expanded);
              }}
            >
              <span aria-hidden="true">{expanded ? "▾" : "▸"}</span>
            </button>
            <Link to={`/analyses/${encodeURIComponent(r.id)}`} data-testid="row-link">
              {name}
            </Link>
          </td>
        );
      case "job":
        return (
          <td key={c} data-label="Job" className="c-job" title={r.job_id ?? undefined}>
            {r.job_id ?? "–"}
          </td>
        );
      case "submitted":
        return (
          <td key={c} data-label="Submitted" className="c-date">
            <time dateTime={r.created_at} title={dateTime(r.created_at)}>
              {shortDate(r.created_at)}
            </time>
          </td>
        );
      case "triage":
        return (
          <td key={c} data-label="Triage" className="c-triage">
            {staff ? (
              <select
                aria-label={`Triage status of ${name}`}
                value={r.triage.status}
                data-testid="triage-select"
                onChange={(e) => void patch({ status: e.target.value as TriageStatus })}
              >
                {TRIAGE.map((s) => (
                  <option key={s}>{s}</option>
                ))}
              </select>
            ) : (
              <span className={`badge triage-${r.triage.status}`}>
                <span className="sr-only">Triage: </span>
                {r.triage.status}
              </span>
            )}
          </td>
        );
      case "assignee":
        return (
          <td key={c} data-label="Assignee" className="c-assignee" title={r.triage.assignee ?? undefined}>
            {r.triage.assignee ?? "–"}
          </td>
        );
      case "notes":
        return (
          <td key={c} className="notes-cell c-notes">
            <button
              type="button"
              className="btn small"
              aria-expanded={editing}
              onClick={() => {
                onEdit(!editing);
              }}
            >
              {r.triage.note ? "Note ✎" : "Add note"}
            </button>
          </td>
        );
      case "runtime":
        return (
          <td key={c} data-label="Run time" className="num c-num" data-testid="cell-runtime">
            {run?.runtime_s != null ? humanSeconds(run.runtime_s) : "–"}
          </td>
        );
      case "ranks":
        return (
          <td key={c} data-label="Ranks" className="num c-num">
            {run?.nprocs != null ? run.nprocs.toLocaleString() : "–"}
          </td>
        );
      case "nodes":
        return (
          <td key={c} data-label="Nodes" className="num c-num">
            {run?.nodes ?? "–"}
          </td>
        );
      case "nodeh":
        return (
          <td key={c} data-label="Node-hours" className="num c-num">
            {run?.node_hours != null ? nodeHours(run.node_hours) : "–"}
          </td>
        );
      case "nodeh_lost":
        return (
          <td key={c} data-label="Node-h lost" className="num c-num">
            {run?.node_hours_lost != null ? nodeHours(run.node_hours_lost) : "–"}
          </td>
        );
    }
  };
  return (
    <>
      <tr
        data-testid="job-row"
        data-id={r.id}
        tabIndex={tabStop ? 0 : -1}
        onFocus={(e) => {
          if (e.target === e.currentTarget) onActive();
        }}
      >
        {cols.map(cell)}
      </tr>
      {expanded && (
        <tr className="row-details" data-testid="row-details">
          <td colSpan={cols.length}>
            <dl>
              <dt>Command line</dt>
              <dd>
                <code className="cmdline" data-testid="row-cmdline">
                  {r.exe ?? "(not in the log)"}
                </code>
              </dd>
              <dt>Log file</dt>
              <dd>{r.filename}</dd>
              {topText && (
                <>
                  <dt>Top cause</dt>
                  <dd>{topText}</dd>
                </>
              )}
              <dt>Time lost</dt>
              <dd>
                {lost.text}
                {run?.node_hours_lost != null ? ` (${nodeHours(run.node_hours_lost)} node-hours)` : ""}
                {lost.text === "unknown" && lost.title ? ` — ${lost.title}` : ""}
              </dd>
              <dt>Run</dt>
              <dd>
                {run?.runtime_s != null ? humanSeconds(run.runtime_s) : "–"}, {run?.nprocs ?? "–"} ranks, {run?.nodes ?? "–"} nodes
                {run?.node_hours != null ? `, ${nodeHours(run.node_hours)} node-hours` : ""}
              </dd>
              <dt>Submitted</dt>
              <dd>{dateTime(r.created_at)}</dd>
              <dt>Analysis</dt>
              <dd>
                <StatusBadge a={r} />
              </dd>
              {r.triage.note && (
                <>
                  <dt>Note</dt>
                  <dd className="note">{r.triage.note}</dd>
                </>
              )}
            </dl>
          </td>
        </tr>
      )}
      {(editing || err) && (
        <tr className="row-editor">
          <td colSpan={cols.length}>
            {err && <ErrorNote error={err} />}
            {editing && <TriageEditor r={r} onCancel={() => { onEdit(false); }} onSave={async (b) => { if (await patch(b)) onEdit(false); }} />}
          </td>
        </tr>
      )}
    </>
  );
}

function TriageEditor({
  r,
  onSave,
  onCancel,
}: {
  r: AnalysisSummary;
  onSave: (b: { assignee?: string | null; clear_assignee?: boolean; note?: string }) => Promise<void>;
  onCancel: () => void;
}) {
  const [assignee, setAssignee] = useState(r.triage.assignee ?? "");
  const [note, setNote] = useState(r.triage.note ?? "");
  const ref = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  return (
    <form
      className="triage-editor"
      onSubmit={(e) => {
        e.preventDefault();
        const a = assignee.trim();
        void onSave(a ? { assignee: a, note } : { clear_assignee: true, note });
      }}
    >
      <label>
        Assignee
        <input value={assignee} onChange={(e) => { setAssignee(e.target.value); }} placeholder="user name" />
      </label>
      <label className="grow">
        Note
        <textarea ref={ref} value={note} maxLength={4000} rows={3} onChange={(e) => { setNote(e.target.value); }} data-testid="triage-note" />
      </label>
      <div className="actions">
        <button type="submit" className="btn primary small">
          Save
        </button>
        <button type="button" className="btn small" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {r.triage.updated_by && (
        <p className="muted small">
          Last changed by {r.triage.updated_by} on {dateTime(r.triage.updated_at)}
        </p>
      )}
    </form>
  );
}
