// What a first-time user sees before they have any analysis: where Darshan logs are, how to upload
// one, and a sample log one click away (POST /api/v1/analyses/sample, the same answer as an upload).
import { useState } from "react";
import { api, ApiError, call } from "../api/client";
import { focusHeadingOnArrival } from "../lib/focus";
import { Link, navigate } from "../lib/router";

/** Analyze the bundled sample log and open its analysis. */
export function SampleButton({ primary = false }: { primary?: boolean }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      const out = await call(api.POST("/api/v1/analyses/sample"));
      const to = `/analyses/${encodeURIComponent(out.id)}`;
      focusHeadingOnArrival(to);
      navigate(to);
    } catch (e) {
      setError(e instanceof ApiError && e.status === 503 ? "This server has no sample log: upload one of your own." : e instanceof Error ? e.message : String(e));
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" className={`btn${primary ? " primary" : ""}`} disabled={busy} onClick={() => void run()} data-testid="try-sample">
        {busy ? "Starting the sample…" : "Try a sample log"}
      </button>
      {error && (
        <span className="error small" role="alert">
          {error}
        </span>
      )}
    </>
  );
}

/** Where a job's Darshan log usually is. */
export function WhereLogsAre() {
  return (
    <>
      <p>
        Darshan writes one log per job when the job ends, into the site&apos;s log directory, by date:{" "}
        <code>$DARSHAN_LOGPATH/YYYY/M/D/</code> (month and day without leading zeros, for example <code>2025/3/7/</code>). The file is named after you,
        the program and the job id: <code>you_app_id123456-…darshan</code>.
      </p>
      <p>
        <code>darshan-config --log-path</code> prints the directory; to list today&apos;s logs:{" "}
        <code>ls -lt $(darshan-config --log-path)/$(date +%Y/%-m/%-d)/ | head</code>. No log? Darshan may not be loaded for your job (ask your help
        desk), or the job was killed before it ended.
      </p>
    </>
  );
}

/** The jobs page of a user without any analysis yet. */
export function EmptyJobs() {
  return (
    <section className="card empty-state" data-testid="empty-state" aria-labelledby="empty-title">
      <h2 id="empty-title">No analyses yet</h2>
      <p>Upload a job&apos;s Darshan log (a <code>.darshan</code> file) to find out why its I/O was slow and what to change.</p>
      <ol>
        <li>
          <strong>Find the log.</strong> <WhereLogsAre />
        </li>
        <li>
          <strong>Upload it</strong>: drag it onto the upload page, or choose it there.
        </li>
        <li>
          <strong>Read the report</strong>: the verdict first, then each finding with what it costs and what to set; ask questions about it in the
          chat.
        </li>
      </ol>
      <div className="cta">
        <Link to="/upload" className="btn primary">
          Upload a .darshan log
        </Link>
        <span className="muted">or see what a report looks like:</span>
        <SampleButton />
      </div>
    </section>
  );
}
