// The knowledge base the report links to: the recommendation registry and the knowledge documents,
// generated from the backend by `npm run gen:api` (src/api/knowledge.gen.json) and loaded on demand.
import { useQuery } from "@tanstack/react-query";

export interface KnowledgeDoc {
  id: string;
  title: string;
  layer: string;
  codes: string[];
  recommendations: string[];
  facility: string | null;
  sources: string[];
  updated: string;
  body: string;
}
export interface Recommendation {
  id: string;
  title: string;
  summary: string;
}
export interface Knowledge {
  recommendations: Map<string, Recommendation>;
  docs: Map<string, KnowledgeDoc>;
  /** Documents that explain a recommendation id. */
  docsForRecommendation: (id: string) => KnowledgeDoc[];
  /** Documents that explain a finding code. */
  docsForCode: (code: string) => KnowledgeDoc[];
}

let loading: Promise<Knowledge> | null = null;

export function loadKnowledge(): Promise<Knowledge> {
  loading ??= import("../api/knowledge.gen.json").then((mod) => {
    const raw: { recommendations: Recommendation[]; docs: KnowledgeDoc[] } = mod.default;
    const docs = new Map(raw.docs.map((d) => [d.id, d]));
    const recommendations = new Map(raw.recommendations.map((r) => [r.id, r]));
    return {
      docs,
      recommendations,
      docsForRecommendation: (id) => raw.docs.filter((d) => d.recommendations.includes(id) && !d.facility),
      docsForCode: (code) => raw.docs.filter((d) => d.codes.includes(code) && !d.facility),
    };
  });
  return loading;
}

export function useKnowledge(): Knowledge | null {
  const q = useQuery({ queryKey: ["knowledge"], queryFn: loadKnowledge, staleTime: Infinity });
  return q.data ?? null;
}
