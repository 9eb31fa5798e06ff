import { useState } from "react";
import { type AnalysisOut, fetchText } from "../api/client";
import { DeleteButton } from "./Delete";

function download(name: string, text: string, type: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => {
    URL.revokeObjectURL(url);
  }, 1000);
}

export function Exports({ a }: { a: AnalysisOut }) {
  const [note, setNote] = useState<string | null>(null);
  const base = `iodiag-${(a.job_id ?? a.id).replace(/[^A-Za-z0-9._-]/g, "_")}`;
  const run = async (what: "copy-md" | "md" | "html" | "json" | "link") => {
    setNote(null);
    try {
      if (what === "html") {
        download(`${base}.html`, await fetchText(a.links.report_html), "text/html");
        setNote("HTML report downloaded.");
      } else if (what === "json") {
        download(`${base}.json`, await fetchText(a.links.report_json), "application/json");
        setNote("JSON report downloaded.");
      } else if (what === "link") {
        // The page's own address: whoever opens it signs in with their own token (none is in the URL).
        await navigator.clipboard.writeText(new URL(`/analyses/${encodeURIComponent(a.id)}`, window.location.origin).href);
        setNote("Report link copied.");
      } else {
        const md = await fetchText(a.links.report_md);
        if (what === "md") {
          download(`${base}.md`, md, "text/markdown");
          setNote("Markdown report downloaded.");
        } else {
          await navigator.clipboard.writeText(md);
          setNote("Markdown copied: paste it into the ticket reply.");
        }
      }
    } catch (e) {
      setNote(`Export failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  return (
    <div className="exports" role="group" aria-label="Export the report">
      <button type="button" className="btn small" onClick={() => void run("copy-md")} aria-label="Copy Markdown report">
        Copy Markdown
      </button>
      <button type="button" className="btn small" onClick={() => void run("md")}>
        Download .md
      </button>
      <button type="button" className="btn small" onClick={() => void run("html")}>
        Download HTML
      </button>
      <button type="button" className="btn small" onClick={() => void run("json")}>
        Download JSON
      </button>
      <button type="button" className="btn small" onClick={() => void run("link")}>
        Copy report link
      </button>
      <DeleteButton a={a} />
      {note && (
        <span className="muted small" role="status">
          {note}
        </span>
      )}
    </div>
  );
}
