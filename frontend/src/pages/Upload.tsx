import { useQuery } from "@tanstack/react-query";
import { type DragEvent, useEffect, useRef, useState } from "react";
import { api, ApiError, call, type UploadHandle, uploadLog } from "../api/client";
import { SampleButton, WhereLogsAre } from "../components/FirstSteps";
import { focusHeadingOnArrival } from "../lib/focus";
import { bytes, percent } from "../lib/format";
import { navigate } from "../lib/router";
import { useSession } from "../session";

export function UploadPage() {
  const [file, setFile] = useState<File | null>(null);
  const [jobId, setJobId] = useState("");
  const [nodes, setNodes] = useState("");
  const [over, setOver] = useState(false);
  const [progress, setProgress] = useState<{ loaded: number; total: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const handle = useRef<UploadHandle | null>(null);
  const { me } = useSession();
  // A first-time user (no analysis yet) is offered the sample log and told where logs are.

  useEffect(() => {
    document.title = "Upload · iodiag";
    return () => handle.current?.abort();
  }, []);

  // First time here (no upload yet): where the logs are is shown open.
  const firstQ = useQuery({
    queryKey: ["analyses", "first", me.user],
    queryFn: () => call(api.GET("/api/v1/analyses", { params: { query: { owner: me.user, limit: 1 } } })),
  });
  const firstTime = firstQ.data?.total === 0;

  const pick = (f: File | undefined) => {
    if (!f) return;
    setFile(f);
    setError(f.name.endsWith(".darshan") ? null : "That file does not end in .darshan; the server will check whether it is a Darshan log.");
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    pick(e.dataTransfer.files[0]);
  };

  const start = async () => {
    if (!file) return;
    setError(null);
    setProgress({ loaded: 0, total: file.size });
    const n = Number(nodes);
    handle.current = uploadLog(
      file,
      { job_id: jobId.trim() || undefined, nodes: Number.isInteger(n) && n > 0 ? n : undefined },
      (loaded, total) => {
        setProgress({ loaded, total });
      },
    );
    try {
      const out = await handle.current.promise;
      const to = `/analyses/${encodeURIComponent(out.id)}`;
      focusHeadingOnArrival(to);
      navigate(to);
    } catch (e) {
      setProgress(null);
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      handle.current = null;
    }
  };

  const busy = progress !== null;
  const frac = progress && progress.total > 0 ? progress.loaded / progress.total : 0;
  return (
    <div className="page narrow">
      <h1>Upload a Darshan log</h1>
      <p className="muted">
        Drop a job's <code>.darshan</code> log here. It is analyzed on the server; you can follow the analysis and then read the report and ask
        questions about it.
      </p>
      <div
        className={`dropzone${over ? " over" : ""}${file ? " has-file" : ""}`}
        data-testid="dropzone"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => {
          setOver(false);
        }}
        onDrop={onDrop}
      >
        {file ? (
          <p>
            <strong className="path">{file.name}</strong> <span className="muted">({bytes(file.size)})</span>
          </p>
        ) : (
          <p>
            <span className="hint-mouse">Drag and drop a .darshan file here, or</span>
            <span className="hint-touch">Pick the job&apos;s .darshan log:</span>
          </p>
        )}
        <button
          type="button"
          className="btn"
          disabled={busy}
          onClick={() => {
            inputRef.current?.click();
          }}
        >
          {file ? "Choose another file" : "Choose a file"}
        </button>
        <input
          ref={inputRef}
          type="file"
          accept=".darshan,application/octet-stream"
          className="sr-only"
          aria-label="Darshan log file"
          data-testid="file-input"
          tabIndex={-1}
          onChange={(e) => {
            pick(e.target.files?.[0]);
            e.target.value = "";
          }}
        />
      </div>
      {firstTime && !busy && (
        <div className="sample-offer" data-testid="sample-offer">
          <span>No log at hand? See what a report looks like first:</span>
          <SampleButton />
        </div>
      )}
      <details className="where-logs" open={firstTime}>
        <summary>Where is my job&apos;s Darshan log?</summary>
        <WhereLogsAre />
      </details>
      <details className="upload-options">
        <summary>Optional: facts the log lacks</summary>
        <div className="form-row">
          <label htmlFor="job-id">Scheduler job id</label>
          <input
            id="job-id"
            value={jobId}
            onChange={(e) => {
              setJobId(e.target.value);
            }}
            placeholder="e.g. 4373053"
            pattern="[A-Za-z0-9_][A-Za-z0-9._\[\]\-]{0,63}"
          />
        </div>
        <div className="form-row">
          <label htmlFor="nodes">Compute nodes</label>
          <input
            id="nodes"
            type="number"
            min={1}
            value={nodes}
            onChange={(e) => {
              setNodes(e.target.value);
            }}
          />
        </div>
      </details>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {busy && (
        <div className="upload-progress" aria-live="polite">
          <progress max={1} value={frac} aria-label="Upload progress" />
          <span>
            Uploading… {percent(frac)} ({bytes(progress.loaded)} of {bytes(progress.total)})
          </span>
          <button type="button" className="btn small" onClick={() => handle.current?.abort()}>
            Cancel
          </button>
        </div>
      )}
      <p>
        <button type="button" className="btn primary" disabled={!file || busy} onClick={() => void start()}>
          Upload and analyze
        </button>
      </p>
    </div>
  );
}
