import type { Schemas } from "../api/client";
import { bytes, count, seconds } from "../lib/format";
import { ScrollBox } from "../lib/scroll";
import { CellLabel } from "./CellLabel";
import "../styles/report.css";

type LayerStats = Schemas["LayerStats"];

function LayerTable({ layers, caption }: { layers: LayerStats[]; caption: string }) {
  const ops = (o: Schemas["OpStats"] | undefined) => (o?.ops ? `${count(o.ops)} · ${bytes(o.bytes)} · ${seconds(o.time_s)}` : "–");
  const size = (o: Schemas["OpStats"] | undefined) => (o?.ops ? bytes(o.median_bytes ?? o.mean_bytes) : "–");
  const coll = (c: number | null | undefined, i: number | null | undefined) => (c === null || c === undefined ? "–" : `${count(c)} / ${count(i ?? 0)}`);
  return (
    <ScrollBox label={`Across the I/O stack: ${caption}`} className="table-wrap cards-narrow">
      <table className="data compact crosslayer">
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">layer</th>
            <th scope="col">writes (ops · bytes · time)</th>
            <th scope="col" className="num">median write</th>
            <th scope="col">reads (ops · bytes · time)</th>
            <th scope="col" className="num">median read</th>
            <th scope="col" className="num">metadata</th>
            <th scope="col" className="num">ranks (writers)</th>
            <th scope="col" className="num">collective / independent writes</th>
            <th scope="col">Lustre stripes</th>
          </tr>
        </thead>
        <tbody>
          {layers.map((l) => (
            <tr key={l.layer}>
              <th scope="row">{l.layer}</th>
              <td><CellLabel>writes (ops · bytes · time)</CellLabel>{ops(l.writes)}</td>
              <td className="num"><CellLabel>median write</CellLabel>{size(l.writes)}</td>
              <td><CellLabel>reads (ops · bytes · time)</CellLabel>{ops(l.reads)}</td>
              <td className="num"><CellLabel>median read</CellLabel>{size(l.reads)}</td>
              <td className="num"><CellLabel>metadata</CellLabel>{seconds(l.meta_time_s)}</td>
              <td className="num"><CellLabel>ranks (writers)</CellLabel>
                {l.ranks ?? "–"}
                {l.writer_ranks !== null && l.writer_ranks !== undefined ? ` (${l.writer_ranks})` : ""}
              </td>
              <td className="num"><CellLabel>collective / independent writes</CellLabel>{coll(l.collective_writes, l.independent_writes)}</td>
              <td><CellLabel>Lustre stripes</CellLabel>
                {l.stripe_count ? `${l.stripe_count} × ${bytes(l.stripe_size)}` : "–"}
                {(l.osts ?? []).length > 0 ? ` (OSTs ${(l.osts ?? []).slice(0, 8).join(", ")}${(l.osts ?? []).length > 8 ? "…" : ""})` : ""}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}

export function CrossLayer({ cl }: { cl: Schemas["CrossLayerSummary"] }) {
  const agg = (v: number | null | undefined) => (v === null || v === undefined ? "–" : `${v.toFixed(v < 10 ? 2 : 0)}×`);
  return (
    <section className="card" aria-labelledby="crosslayer-title">
      <h2 id="crosslayer-title">Across the I/O stack</h2>
      <p>{cl.summary_text}</p>
      <p className="muted small">
        Write aggregation {agg(cl.write_aggregation)} · read aggregation {agg(cl.read_aggregation)} (MPI-IO requests per POSIX request: above 1, requests were
        combined on the way down; below 1, split)
      </p>
      <LayerTable layers={cl.job_layers} caption="Whole job, per layer" />
      {cl.files.length > 0 && (
        <>
          <h3>Per file ({count(cl.files.length)} of {count(cl.files_total)})</h3>
          {cl.files.map((f) => (
            <details key={f.record_id} className="cl-file">
              <summary>
                <span className="path">{f.path}</span>{" "}
                <span className="muted small">
                  write aggregation {agg(f.write_aggregation)}, read {agg(f.read_aggregation)}
                </span>
              </summary>
              <p className="small">{f.summary_text}</p>
              <LayerTable layers={f.layers} caption={`Layers of ${f.path}`} />
            </details>
          ))}
        </>
      )}
    </section>
  );
}
