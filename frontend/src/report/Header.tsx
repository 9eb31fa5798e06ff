import type { ReactNode, Ref } from "react";
import type { AnalysisOut, Report, Schemas } from "../api/client";
import { Counts } from "../components/badges";
import { bytes, cost, count, dateTime, humanSeconds, percent, seconds, share } from "../lib/format";
import { ScrollBox } from "../lib/scroll";
import "../styles/report.css";

type Verdict = Schemas["Verdict"];
type Interface = Schemas["InterfaceTotals"];

/** The report's header: which job, the backend's verdict (displayed, never recomputed), the job's facts and its interfaces. */
export function ReportHeader({
  a,
  report,
  onFinding,
  headingRef,
  extra,
}: {
  a: AnalysisOut;
  report: Report;
  /** Shown under the heading (the "Messages (1 unread)" link). */
  extra?: ReactNode;
  onFinding?: (code: string) => void;
  /** The h1: it takes focus when the report opens after an upload. */
  headingRef?: Ref<HTMLHeadingElement>;
}) {
  const job = report.job;
  const io = report.io_share;
  // Reports stored by an iodiag before schema 2.0 carry no verdict.
  const v = (report as { verdict?: Verdict }).verdict;
  const interfaces = report.interfaces ?? [];
  const tone = v?.level ?? "info";
  const ioShare = v?.io_share ?? null;
  return (
    <section className="report-head card" aria-labelledby="report-title">
      <div className="head-main">
        <h1 id="report-title" ref={headingRef} tabIndex={-1}>
          Job {a.job_id ?? String(job.jobid)} <span className="exe">{job.exe}</span>
        </h1>
        <p className="logname muted small">
          log <span className="path">{a.filename}</span>
        </p>
        {extra}
      </div>
      {v ? (
        <VerdictPanel v={v} onFinding={onFinding} />
      ) : (
        <div className="verdict-panel tone-info" data-testid="verdict">
          <p className="verdict-headline" data-testid="verdict-headline">
            This report was made by an older iodiag (schema {report.schema_version}) and carries no verdict: analyze the log again.
          </p>
        </div>
      )}
      <dl className="facts head-facts">
        <div>
          <dt>Ranks</dt>
          <dd>{count(job.nprocs)}</dd>
        </div>
        <div>
          <dt>Nodes</dt>
          <dd>{job.nodes ?? "–"}</dd>
        </div>
        <div>
          <dt>Run time</dt>
          <dd>{humanSeconds(job.runtime_s)}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{dateTime(job.start)}</dd>
        </div>
        <div>
          <dt>Files</dt>
          <dd>{count(job.files)}</dd>
        </div>
        {io && (
          <>
            <div>
              <dt>Read</dt>
              <dd data-testid="fact-read">
                {bytes(io.bytes_read)}
                <LayerNote rows={interfaces} total={io.bytes_read} dir="read" />
              </dd>
            </div>
            <div>
              <dt>Written</dt>
              <dd data-testid="fact-written">
                {bytes(io.bytes_written)}
                <LayerNote rows={interfaces} total={io.bytes_written} dir="written" />
              </dd>
            </div>
          </>
        )}
        <div>
          <dt>File system</dt>
          <dd>{report.file_system ?? "unknown"}</dd>
        </div>
        <div>
          <dt>Workload</dt>
          <dd>{report.workload}</dd>
        </div>
        <div>
          <dt>Owner</dt>
          <dd>{a.owner}</dd>
        </div>
      </dl>
      <div className={`io-share tone-${tone}`} data-testid="io-share">
        <div className="share-num">
          <span className="big">{share(ioShare)}</span>
          <span className="muted small">
            of the run time in I/O
            {io?.slowest_rank !== null && io?.slowest_rank !== undefined ? ` (busiest rank ${String(io.slowest_rank)}, ${humanSeconds(io.slowest_rank_io_s)})` : ""}
          </span>
        </div>
        {ioShare !== null && (
          <div className="share-bar" aria-hidden="true">
            <span style={{ width: `${String(Math.min(100, ioShare * 100))}%` }} />
          </div>
        )}
        {io && (
          <p className="muted small">
            mean rank {percent(io.share_mean)} · read {seconds(io.read_s)} · write {seconds(io.write_s)} · metadata {seconds(io.meta_s)} (summed over ranks)
          </p>
        )}
        <p className="small counts-line">
          <span className="muted">Findings: </span>
          <Counts c={report.counts} labelled />
        </p>
      </div>
      {interfaces.length > 0 && <Interfaces rows={interfaces} />}
      {(report.problems ?? []).length > 0 && (
        <div className="problems" role="note">
          <strong>The reader could not do everything:</strong>
          <ul>
            {(report.problems ?? []).map((p, i) => (
              <li key={i}>{p}</li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}

/** Top of the stack first: a layer of a lower rank sits above one of a higher rank. */
const LAYER_DEPTH: Record<string, number> = { HDF5: 0, H5D: 0, H5F: 0, PnetCDF: 0, PNETCDF: 0, "MPI-IO": 1, MPIIO: 1, POSIX: 2, STDIO: 2, DFS: 2, DAOS: 3 };

/**
 * Which layer the header's bytes count ("through MPI-IO"), and what the other layers moved when that differs
 * ("24.10 GiB beneath it through POSIX"): a cause that speaks of POSIX reads then agrees with the header.
 */
export function layerNote(rows: Interface[], total: number, dir: "read" | "written"): string | null {
  const of = (r: Interface) => (dir === "read" ? r.bytes_read : r.bytes_written);
  const counted = rows.filter((r) => r.counted && of(r) > 0);
  if (counted.length === 0) return null;
  const depth = (r: Interface) => LAYER_DEPTH[r.name] ?? 2;
  const top = Math.min(...counted.map(depth));
  const bottom = Math.max(...counted.map(depth));
  const names = counted.map((r) => r.name);
  const through =
    counted.length === 1 ? `through ${names[0] ?? ""}` : `through ${names.slice(0, -1).join(", ")} and ${names[names.length - 1] ?? ""} (each file counted once, at its top layer)`;
  const others = rows
    .filter((r) => !r.counted && of(r) > 0 && Math.abs(of(r) - total) > 0.005 * Math.max(1, total))
    .map((r) => {
      const where = depth(r) > bottom ? (counted.length === 1 ? "beneath it" : "beneath them") : depth(r) < top ? (counted.length === 1 ? "above it" : "above them") : "alongside";
      return `${bytes(of(r))} ${where} through ${r.name}`;
    });
  // One counted layer and nothing that differs: nothing to explain.
  if (others.length === 0 && counted.length === 1 && rows.filter((r) => of(r) > 0).length <= 1) return null;
  return [through, ...others].join("; ");
}

function LayerNote({ rows, total, dir }: { rows: Interface[]; total: number; dir: "read" | "written" }) {
  const note = layerNote(rows, total, dir);
  if (!note) return null;
  return (
    <span className="layer-note small" data-testid={`layer-note-${dir}`}>
      {" "}
      {note}
    </span>
  );
}

/** The verdict as the backend wrote it: headline, ranked causes, where the time went, caveats. */
function VerdictPanel({ v, onFinding }: { v: Verdict; onFinding?: (code: string) => void }) {
  const causes = v.causes ?? [];
  const caveats = v.caveats ?? [];
  return (
    <div className={`verdict-panel tone-${v.level}`} data-testid="verdict" data-level={v.level}>
      <p className="verdict-headline" data-testid="verdict-headline">
        <WithCode text={v.headline} />
      </p>
      {causes.length > 0 && (
        <>
          <h2 className="verdict-sub">{causes.length === 1 ? "The cause" : "The causes, largest cost first, a root cause before the symptom it explains (they can overlap: each is the time it alone explains)"}</h2>
          <ol className="causes" data-testid="verdict-causes">
            {causes.map((c) => (
              <li key={c.code} className="cause" data-testid="cause" data-code={c.code}>
                <div className="cause-head">
                  {onFinding ? (
                    <button type="button" className="btn link code" title={`Go to finding ${c.code}`} onClick={() => { onFinding(c.code); }}>
                      {c.code}
                    </button>
                  ) : (
                    <a className="code" href={`#finding-${c.code}`}>
                      {c.code}
                    </a>
                  )}
                  <strong className="cause-title">{c.title}</strong>
                  <span className="cause-cost" data-testid="cause-cost">
                    {cost(c.seconds, c.share_of_runtime)}
                  </span>
                  {c.confidence !== "high" && (
                    <span className="muted small" title={c.confidence === "low" ? "an estimate or an upper bound" : "partly estimated"}>
                      {c.confidence} confidence
                    </span>
                  )}
                </div>
                <p className="cause-summary">
                  <WithCode text={c.summary} />
                </p>
                {c.action && (
                  <p className="cause-action">
                    <strong>What to do:</strong> <WithCode text={c.action} />
                  </p>
                )}
              </li>
            ))}
          </ol>
        </>
      )}
      {v.where_time_went && (
        <p className="where-time-went" data-testid="where-time-went">
          <WithCode text={v.where_time_went} />
        </p>
      )}
      {caveats.length > 0 && (
        <div className="caveats" data-testid="caveats">
          <strong className="small">Caveats</strong>
          <ul className="small">
            {caveats.map((c, i) => (
              <li key={i}>
                <WithCode text={c} />
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

/** Every data-bearing interface (Darshan module) with its own totals: a DFS or DAOS job shows its bytes here. */
function Interfaces({ rows }: { rows: Interface[] }) {
  return (
    <ScrollBox className="interfaces table-wrap" label="Interfaces (times summed over ranks)">
      <table className="data compact" data-testid="interfaces">
        <caption className="small muted">Interfaces (times summed over ranks)</caption>
        <thead>
          <tr>
            <th scope="col">Interface</th>
            <th scope="col" className="num">Read</th>
            <th scope="col" className="num">Written</th>
            <th scope="col" className="num">Time</th>
            <th scope="col">In the totals</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.name} data-testid="interface-row">
              <th scope="row">
                {r.name}
                {r.partial && (
                  <span className="badge sev-warning" title="Darshan ran out of memory for this module: its totals are lower bounds">
                    partial<span className="sr-only">: Darshan ran out of memory for this module, its totals are lower bounds</span>
                  </span>
                )}
              </th>
              <td className="num">{bytes(r.bytes_read)}</td>
              <td className="num">{bytes(r.bytes_written)}</td>
              <td className="num" title={`read ${seconds(r.read_s)} · write ${seconds(r.write_s)} · metadata ${seconds(r.meta_s)} · ${count(r.operations)} operations · ${count(r.records)} records`}>
                {humanSeconds(r.read_s + r.write_s + r.meta_s)}
              </td>
              <td className="small">
                {r.counted ? "counted" : <span className="muted">not counted</span>}
                {r.note && <span className="muted">: {r.note}</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}

/** Text whose `backticked` spans are commands or code: shown as code, everything still plain text (no HTML). */
export function WithCode({ text }: { text: string }) {
  const parts = text.split("`");
  if (parts.length < 3 || parts.length % 2 === 0) return <>{text}</>;
  return (
    <>
      {parts.map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : <span key={i}>{part}</span>))}
    </>
  );
}
