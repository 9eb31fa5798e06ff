import { useState } from "react";
import type { Finding } from "../api/client";
import { SeverityBadge } from "../components/badges";
import type { Knowledge, KnowledgeDoc } from "../lib/knowledge";
import { bytes, cost, count, metric, seconds } from "../lib/format";
import { CodeBlock, codeBlocks, CopyButton, describeCode } from "../lib/markdown";
import { Link } from "../lib/router";
import { ScrollBox } from "../lib/scroll";
import { WithCode } from "./Header";

const RANKS_SHOWN = 32;

export function findingWindow(f: Finding): [number, number] | null {
  const s = (f.evidence ?? []).find((m) => m.name === "window_start")?.value;
  const e = (f.evidence ?? []).find((m) => m.name === "window_end")?.value;
  return typeof s === "number" && typeof e === "number" ? [s, e] : null;
}

/** Findings about OSTs (a slow OST, an overloaded one): their plot is the OST plot, and its metric is time. */
export const OST_CODES: ReadonlySet<string> = new Set(["L04", "L05"]);

export function FindingCard({
  f,
  knowledge,
  selected,
  onSelect,
  plottable,
  ostPlot = false,
}: {
  f: Finding;
  knowledge: Knowledge | null;
  selected: boolean;
  onSelect: () => void;
  plottable: boolean;
  /** The report has an OST plot: a finding about OSTs (L04, L05) is shown there, on I/O time. */
  ostPlot?: boolean;
}) {
  const [allRanks, setAllRanks] = useState(false);
  const win = findingWindow(f);
  const evidence = f.evidence ?? [];
  const files = f.files ?? [];
  const filesTotal = f.files_total;
  const allR = f.ranks ?? [];
  const recs = f.recommendations ?? [];
  const canShow = plottable && (allR.length > 0 || win !== null || (ostPlot && OST_CODES.has(f.code)));
  const ranks = allRanks ? allR : allR.slice(0, RANKS_SHOWN);
  const docs = knowledge?.docsForCode(f.code) ?? [];
  return (
    <article
      id={`finding-${f.code}`}
      className={`finding card sev-${f.severity}${selected ? " selected" : ""}`}
      aria-labelledby={`finding-${f.code}-title`}
      tabIndex={-1}
      data-testid="finding"
    >
      <header>
        <SeverityBadge s={f.severity} />
        <span className="code">{f.code}</span>
        <h3 id={`finding-${f.code}-title`}>{f.title}</h3>
        <span className="muted small layer">{f.layer}</span>
        {canShow && (
          <button type="button" className={`btn small${selected ? " primary" : ""}`} aria-pressed={selected} onClick={onSelect}>
            {selected ? "Shown in plots" : "Show in plots"}
          </button>
        )}
      </header>
      <FindingCost f={f} />
      <p className="message">
        <WithCode text={f.message} />
      </p>
      {evidence.length > 0 && (
        <details className="evidence" open={f.severity === "critical" || f.severity === "warning"}>
          <summary>Evidence</summary>
          <ScrollBox label={`Evidence for ${f.code}`}>
            <table className="data compact">
              <tbody>
                {evidence.map((m) => (
                  <tr key={m.name}>
                    <th scope="row">
                      <code>{m.name}</code>
                    </th>
                    <td className="num">{metric(m.value, m.unit)}</td>
                    <td className="muted small">{m.description}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        </details>
      )}
      {files.length > 0 && (
        <details className="files" open={files.length <= 3}>
          <summary>
            Affected files ({count(filesTotal || files.length)}
            {filesTotal > files.length ? `, ${files.length} shown` : ""})
          </summary>
          <ul className="file-list">
            {files.map((fe) => (
              <li key={fe.record_id}>
                <span className="path" data-testid="file-path">
                  {fe.path}
                </span>
                {(fe.metrics ?? []).length > 0 && (
                  <span className="muted small">
                    {" "}
                    {(fe.metrics ?? []).map((m) => `${m.name} ${metric(m.value, m.unit)}`).join(" · ")}
                  </span>
                )}
              </li>
            ))}
          </ul>
        </details>
      )}
      {allR.length > 0 && (
        <p className="ranks">
          <strong>Ranks:</strong> {ranks.join(", ")}
          {allR.length > RANKS_SHOWN && (
            <>
              {allRanks ? " " : ` … (${count(allR.length)} in all) `}
              <button
                type="button"
                className="btn link small"
                onClick={() => {
                  setAllRanks(!allRanks);
                }}
              >
                {allRanks ? "show fewer" : "show all"}
              </button>
            </>
          )}
        </p>
      )}
      {win && (
        <p className="muted small">
          Time window: {seconds(win[0])} – {seconds(win[1])} after job start
        </p>
      )}
      {f.source_lines && f.source_lines.length > 0 && (
        <details className="source-lines" open>
          <summary>Source lines that issued these requests</summary>
          <ScrollBox label={`Source lines for ${f.code}`}>
            <table className="data compact">
              <thead>
                <tr>
                  <th scope="col">location</th>
                  <th scope="col">function</th>
                  <th scope="col" className="num">segments</th>
                  <th scope="col" className="num">bytes</th>
                  <th scope="col" className="num">ranks</th>
                </tr>
              </thead>
              <tbody>
                {f.source_lines.map((s, i) => (
                  <tr key={i}>
                    <td className="path">
                      {s.file}:{s.line}
                      {s.call_chain.length > 1 && (
                        <details>
                          <summary className="small">call chain</summary>
                          <ol className="chain">
                            {s.call_chain.map((c, j) => (
                              <li key={j}>
                                <code>{c.function}</code> <span className="muted">{c.file}:{c.line}</span>{" "}
                                <span className="muted small">{c.address}</span>
                              </li>
                            ))}
                          </ol>
                        </details>
                      )}
                    </td>
                    <td>
                      <code>{s.function}</code>
                    </td>
                    <td className="num">{count(s.segments)}</td>
                    <td className="num">{bytes(s.bytes)}</td>
                    <td className="num">{count(s.ranks)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        </details>
      )}
      {(f.actions ?? []).length > 0 && (
        <div className="actions" data-testid="actions">
          <h4>For this job</h4>
          <ul>
            {(f.actions ?? []).map((a) => (
              <li key={a.recommendation + a.command}>
                <div className="action-line">
                  <code className="wrap">{a.command}</code>
                  <CopyButton text={a.command} what={describeCode(a.command)} />
                </div>
                <div className="small">
                  {a.effect}. Where: {a.where}.
                </div>
              </li>
            ))}
          </ul>
        </div>
      )}
      {recs.length > 0 && (
        <div className="recommendations">
          <h4>What to do</h4>
          <ul>
            {recs.map((id) => (
              <Recommendation key={id} id={id} code={f.code} layer={f.layer} knowledge={knowledge} />
            ))}
          </ul>
        </div>
      )}
      {recs.length === 0 && docs.length > 0 && (
        <p className="small">
          Read more:{" "}
          {docs.map((d, i) => (
            <span key={d.id}>
              {i > 0 && " · "}
              <Link to={`/docs/${d.id}`}>{d.title}</Link>
            </span>
          ))}
        </p>
      )}
    </article>
  );
}

/** What the finding costs in run time (from `impact`), and the detection rule's own severity where the cost graded it differently. */
function FindingCost({ f }: { f: Finding }) {
  const im = f.impact ?? null;
  // Reports from before schema 2.0 carry neither field.
  const detected = (f as { detected_severity?: string }).detected_severity;
  const differs = detected !== undefined && detected !== f.severity;
  if (!im && !differs) return null;
  const basisKind = im ? (/^(measured|modelled)\b/.exec(im.basis)?.[1] ?? null) : null;
  return (
    <p className="finding-cost small" data-testid="finding-cost">
      {im &&
        (im.seconds !== null ? (
          <>
            <span className="cost" title={im.basis}>
              costs {cost(im.seconds, im.share_of_runtime)}
            </span>{" "}
            <span className="muted basis" title={im.basis}>
              {basisKind ?? "estimate"}
              {im.confidence !== "high" ? `, ${im.confidence} confidence` : ""}
            </span>
          </>
        ) : (
          <span className="muted cost-unknown">cost unknown: {im.basis}</span>
        ))}
      {differs && im && <span className="muted"> · </span>}
      {differs && (
        <span
          className="muted detected"
          data-testid="detected-severity"
          title="The severity the detection rule (Drishti's, for the checks that come from Drishti) gives on its own; the badge is graded from what the finding costs."
        >
          detection rule alone: {detected}
        </span>
      )}
    </p>
  );
}

const DOCS_SHOWN = 3;

function Recommendation({ id, code, layer, knowledge }: { id: string; code: string; layer: string; knowledge: Knowledge | null }) {
  const [allDocs, setAllDocs] = useState(false);
  const rec = knowledge?.recommendations.get(id);
  // Most specific guide first: it explains this finding, is mainly about this recommendation,
  // is about the finding's layer, names the finding in its title.
  const score = (d: KnowledgeDoc) =>
    4 * Number(d.codes.includes(code)) + 2 * Number(d.recommendations[0] === id) + Number(d.layer === layer) + Number(d.title.includes(code));
  const docs = [...(knowledge?.docsForRecommendation(id) ?? [])].sort((a, b) => score(b) - score(a));
  const shownDocs = allDocs ? docs : docs.slice(0, DOCS_SHOWN);
  const snippets = docs
    .slice(0, 2)
    .flatMap((d) => codeBlocks(d.body).map((c) => ({ ...c, doc: d })))
    .slice(0, 4);
  return (
    <li className="recommendation" data-testid="recommendation">
      <strong>{rec?.title ?? id}</strong>
      {rec && <span>: {rec.summary}</span>}
      {docs.length > 0 && (
        <div className="small">
          Guide{docs.length > 1 ? "s" : ""}:{" "}
          {shownDocs.map((d, i) => (
            <span key={d.id}>
              {i > 0 && " · "}
              <Link to={`/docs/${d.id}`}>{d.title}</Link>
            </span>
          ))}
          {docs.length > DOCS_SHOWN && (
            <>
              {" "}
              <button
                type="button"
                className="btn link small"
                onClick={() => {
                  setAllDocs(!allDocs);
                }}
              >
                {allDocs ? "fewer" : `+${String(docs.length - DOCS_SHOWN)} more`}
              </button>
            </>
          )}
        </div>
      )}
      {snippets.length > 0 && (
        <details className="snippets">
          <summary className="small">Copyable snippets ({snippets.length})</summary>
          {snippets.map((sn, i) => (
            <div key={i}>
              <p className="muted small">from {sn.doc.title}</p>
              <CodeBlock text={sn.text} lang={sn.lang} />
            </div>
          ))}
        </details>
      )}
    </li>
  );
}
