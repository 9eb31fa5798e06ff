// The typed API client: every request and response type comes from schema.d.ts, which
// `npm run gen:api` generates from the backend's OpenAPI schema.
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema";

export type Schemas = components["schemas"];
export type AnalysisSummary = Schemas["AnalysisSummary"];
export type AnalysisOut = Schemas["AnalysisOut"];
export type AnalysisPage = Schemas["AnalysisPage"];
export type Finding = Schemas["Finding"];
export type Report = Schemas["Report"];
export type PlotData = Schemas["PlotData"];
export type Answer = Schemas["Answer"];
export type Citation = Schemas["Citation"];
export type ChatMessage = Schemas["ChatMessageOut"];
export type Me = Schemas["MeOut"];
export type SubmitOut = Schemas["SubmitOut"];
export type TriageIn = Schemas["TriageIn"];
export type Severity = Schemas["Severity"];
export type ListQuery = NonNullable<paths["/api/v1/analyses"]["get"]["parameters"]["query"]>;
export type TriageStatus = Schemas["Triage"]["status"];
export type HistoryOut = Schemas["HistoryOut"];
export type RunPoint = Schemas["RunPoint"];
export type Regression = Schemas["Regression"];
export type Comparison = Schemas["Comparison"];
export type RunSummary = Schemas["RunSummary"];
export type FindingChange = Schemas["FindingChange"];
export type MetricRow = Schemas["MetricRow"];

const TOKEN_KEY = "iodiag.token";

/** The token lives in sessionStorage only: never in a URL, never logged. */
export const tokenStore = {
  get(): string | null {
    return sessionStorage.getItem(TOKEN_KEY);
  },
  set(token: string): void {
    sessionStorage.setItem(TOKEN_KEY, token);
  },
  clear(): void {
    sessionStorage.removeItem(TOKEN_KEY);
  },
};

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();
/** Called when the server rejects the token (401): the app signs out. */
export function onUnauthorized(fn: Listener): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}
function unauthorized(): void {
  for (const fn of unauthorizedListeners) fn();
}

const auth: Middleware = {
  onRequest({ request }) {
    const token = tokenStore.get();
    if (token) request.headers.set("Authorization", `Bearer ${token}`);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) unauthorized();
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: "" });
api.use(auth);

/** An API failure: the server's one-line `detail` and the HTTP status (0: no answer). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export function apiError(error: unknown, status: number, statusText = ""): ApiError {
  let detail = "";
  if (error && typeof error === "object" && "detail" in error) {
    const d: unknown = error.detail;
    detail = typeof d === "string" ? d : JSON.stringify(d);
  } else if (typeof error === "string") {
    detail = error;
  }
  return new ApiError(detail || `${status} ${statusText || "request failed"}`, status);
}

/** Unwrap an openapi-fetch result: the data, or an ApiError. */
export async function call<T>(
  p: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let r: { data?: T; error?: unknown; response: Response };
  try {
    r = await p;
  } catch (e) {
    throw new ApiError(`cannot reach the server (${e instanceof Error ? e.message : String(e)})`, 0);
  }
  if (r.error !== undefined || !r.response.ok) throw apiError(r.error, r.response.status, r.response.statusText);
  return r.data as T;
}

/** Fetch a text output (report.md, report.html) with the token. */
export async function fetchText(path: string): Promise<string> {
  const token = tokenStore.get();
  const res = await fetch(path, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  if (res.status === 401) unauthorized();
  if (!res.ok) {
    let body: unknown = null;
    try {
      body = await res.json();
    } catch {
      /* not JSON */
    }
    throw apiError(body, res.status, res.statusText);
  }
  return res.text();
}

export interface UploadHandle {
  promise: Promise<SubmitOut>;
  abort: () => void;
}

/**
 * Upload a log with XMLHttpRequest (fetch cannot report upload progress). The response type is
 * the generated SubmitOut; the request is the multipart form the OpenAPI schema describes.
 */
export function uploadLog(
  file: File,
  fields: { job_id?: string; nodes?: number; cb_nodes?: number },
  onProgress: (loaded: number, total: number) => void,
): UploadHandle {
  const xhr = new XMLHttpRequest();
  const promise = new Promise<SubmitOut>((resolve, reject) => {
    const form = new FormData();
    form.append("file", file, file.name);
    if (fields.job_id) form.append("job_id", fields.job_id);
    if (fields.nodes) form.append("nodes", String(fields.nodes));
    if (fields.cb_nodes) form.append("cb_nodes", String(fields.cb_nodes));
    const path: keyof paths = "/api/v1/analyses";
    xhr.open("POST", path);
    const token = tokenStore.get();
    if (token) xhr.setRequestHeader("Authorization", `Bearer ${token}`);
    xhr.responseType = "json";
    xhr.upload.onprogress = (e) => {
      onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    };
    xhr.onload = () => {
      const body: unknown = xhr.response;
      if (xhr.status === 401) unauthorized();
      if (xhr.status >= 200 && xhr.status < 300) resolve(body as SubmitOut);
      else reject(apiError(body, xhr.status, xhr.statusText));
    };
    xhr.onerror = () => {
      reject(new ApiError("the upload failed: cannot reach the server", 0));
    };
    xhr.onabort = () => {
      reject(new ApiError("upload cancelled", 0));
    };
    xhr.send(form);
  });
  return { promise, abort: () => { xhr.abort(); } };
}
