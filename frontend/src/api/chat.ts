// Questions about an analysis, answered as Server-Sent Events. EventSource cannot send an
// Authorization header, so the stream is read from fetch() and parsed here.
import { type Answer, ApiError, apiError, tokenStore, type Schemas } from "./client";
import type { paths } from "./schema";

export interface SseEvent {
  event: string;
  data: string;
}

/** Split an SSE byte stream into events (comments and retry/id fields are ignored). */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let event = "message";
  let data: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
      if (buf[nl] === "\r" && nl === buf.length - 1) break; // a \r\n split across chunks: wait for the \n
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf.startsWith("\r\n", nl) ? 2 : 1));
      if (line === "") {
        if (data.length) yield { event, data: data.join("\n") };
        event = "message";
        data = [];
      } else if (line.startsWith(":")) {
        continue;
      } else {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? "" : line.slice(colon + 1);
        if (val.startsWith(" ")) val = val.slice(1);
        if (field === "event") event = val;
        else if (field === "data") data.push(val);
      }
    }
  }
  if (data.length) yield { event, data: data.join("\n") };
}

export interface AskHandlers {
  onDelta: (delta: string) => void;
  onReset: () => void;
  /** The question waits for an answer slot (the server says how many are ahead); the time limit starts later. */
  onQueued?: (detail: string) => void;
}

type ChatBody = Schemas["ChatIn"];

/** Ask a question; streams deltas to the handlers and resolves with the final, checked answer. */
export async function ask(
  analysisId: string,
  question: string,
  handlers: AskHandlers,
  signal?: AbortSignal,
): Promise<Answer> {
  const template: keyof paths = "/api/v1/analyses/{analysis_id}/chat";
  const url = template.replace("{analysis_id}", encodeURIComponent(analysisId));
  const token = tokenStore.get();
  const body: ChatBody = { question };
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "text/event-stream",
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
      signal: signal ?? null,
    });
  } catch (e) {
    if (signal?.aborted) throw new ApiError("cancelled", 0);
    throw new ApiError(`cannot reach the server (${e instanceof Error ? e.message : String(e)})`, 0);
  }
  if (!res.ok || !res.body) {
    let err: unknown = null;
    try {
      err = await res.json();
    } catch {
      /* not JSON */
    }
    throw apiError(err, res.status, res.statusText);
  }
  for await (const ev of readSse(res.body)) {
    if (ev.event === "token") {
      const { delta } = JSON.parse(ev.data) as { delta?: string };
      if (delta) handlers.onDelta(delta);
    } else if (ev.event === "reset") {
      handlers.onReset();
    } else if (ev.event === "queued") {
      const { detail } = JSON.parse(ev.data) as { detail?: string };
      handlers.onQueued?.(detail ?? "waiting for an answer slot");
    } else if (ev.event === "final") {
      return JSON.parse(ev.data) as Answer;
    } else if (ev.event === "error") {
      const { detail } = JSON.parse(ev.data) as { detail?: string };
      throw new ApiError(detail ?? "the answer failed", 500);
    }
  }
  throw new ApiError("the answer stream ended without a final answer", 0);
}
