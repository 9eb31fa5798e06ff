import type { AnalysisOut, Report } from "../api/client";
import { Counts } from "../components/bits";
import { bytes, count, dateTime, percent, seconds } from "../lib/format";

/** A plain verdict on how much I/O matters for this job. */
export function verdict(report: Report): { tone: "critical" | "warning" | "info" | "ok"; text: string } {
  const share = report.io_share?.share_slowest;
  const j = report.findings.find((f) => f.code === "J02" || f.code === "J01");
  if (share === undefined) {
    return { tone: "info", text: "The log does not say how much of the run time went to I/O." };
  }
  if (j?.code === "J01" || share < 0.05) {
    return { tone: "ok", text: "I/O is not the bottleneck: look at computation and communication first." };
  }
  if (j?.code === "J02" || share >= 0.3) {
    return { tone: j?.severity === "critical" || share >= 0.5 ? "critical" : "warning", text: "I/O takes a large share of the run time: fixing it pays." };
  }
  return { tone: "info", text: "I/O is a noticeable but not dominant part of the run time." };
}

export function ReportHeader({ a, report }: { a: AnalysisOut; report: Report }) {
  const job = report.job;
  const io = report.io_share;
  const v = verdict(report);
  return (
    <section className="report-head card" aria-labelledby="report-title">
      <div className="head-main">
        <h1 id="report-title">
          Job {a.job_id ?? String(job.jobid)} <span className="exe">{job.exe}</span>
        </h1>
        <p className="logname muted small">
          log <span className="path">{a.filename}</span>
        </p>
        <dl className="facts">
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
            <dd>{seconds(job.runtime_s)}</dd>
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
                <dd>{bytes(io.bytes_read)}</dd>
              </div>
              <div>
                <dt>Written</dt>
                <dd>{bytes(io.bytes_written)}</dd>
              </div>
            </>
          )}
          <div>
            <dt>Owner</dt>
            <dd>{a.owner}</dd>
          </div>
        </dl>
      </div>
      <div className={`io-share tone-${v.tone}`} data-testid="io-verdict">
        <div className="share-num">
          <span className="big">{io ? percent(io.share_slowest) : "–"}</span>
          <span className="muted small">of the run time in I/O{io?.slowest_rank !== null && io?.slowest_rank !== undefined ? ` (busiest rank ${io.slowest_rank})` : ""}</span>
        </div>
        {io && (
          <div className="share-bar" aria-hidden="true">
            <span style={{ width: `${Math.min(100, io.share_slowest * 100)}%` }} />
          </div>
        )}
        <p className="verdict">{v.text}</p>
        {io && (
          <p className="muted small">
            mean rank {percent(io.share_mean)} · read {seconds(io.read_s)} · write {seconds(io.write_s)} · metadata {seconds(io.meta_s)} (summed over ranks)
          </p>
        )}
        <Counts c={report.counts} />
      </div>
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
