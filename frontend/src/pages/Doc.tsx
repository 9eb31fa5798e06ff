import { useEffect } from "react";
import { NotFound } from "../components/NotFound";
import { Spinner } from "../components/badges";
import { useKnowledge } from "../lib/knowledge";
import { Markdown } from "../lib/markdown";

export function DocPage({ id }: { id: string }) {
  const k = useKnowledge();
  const doc = k?.docs.get(id);
  useEffect(() => {
    document.title = `${doc?.title ?? "Guide"} · iodiag`;
  }, [doc]);
  if (!k) return <div className="page"><Spinner label="Loading the guide…" /></div>;
  if (!doc) return <NotFound what="guide" detail={`There is no knowledge document “${id}”.`} />;
  return (
    <div className="page narrow doc">
      <p>
        <button type="button" className="btn link" onClick={() => { window.history.back(); }}>
          ← Back
        </button>
      </p>
      <p className="muted small">
        {doc.layer}
        {doc.codes.length > 0 && ` · explains ${doc.codes.join(", ")}`} · updated {doc.updated}
      </p>
      <Markdown source={doc.body} topLevel={1} />
      {doc.sources.length > 0 && (
        <section>
          <h2>Sources</h2>
          <ul>
            {doc.sources.map((s) => (
              <li key={s}>
                {/^https?:\/\//.test(s) ? (
                  <a href={s} target="_blank" rel="noopener noreferrer">
                    {s}
                  </a>
                ) : (
                  s
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}
