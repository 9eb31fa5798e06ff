import { useQuery } from "@tanstack/react-query";
import { type ReactNode, type SyntheticEvent, useEffect, useMemo, useRef, useState } from "react";
import { ask } from "../api/chat";
import { type Answer, api, ApiError, call, type Citation } from "../api/client";
import { CHAT_INPUT_ID, focusChat, useChatSkip } from "../lib/chatfocus";
import type { Knowledge } from "../lib/knowledge";
import { Markdown } from "../lib/markdown";
import { Link } from "../lib/router";
import { useScrolls } from "../lib/scroll";
import { asApiError } from "../lib/query";

const SUGGESTED = ["Why is my job slow?", "Which file is worst?", "What exactly should I set?"];

interface Turn {
  key: string;
  role: "user" | "assistant";
  text: string;
  answer: Answer | null;
  streaming?: boolean;
  waiting?: string;
  error?: string;
}

const PROVENANCE: Record<Answer["provenance"], { label: string; title: string }> = {
  model: { label: "model", title: "Written by the language model and checked against the report" },
  "model-repaired": { label: "repaired", title: "Written by the language model; sentences the checker could not verify were removed or replaced" },
  template: { label: "template", title: "Composed from the report by fixed templates (no language model)" },
};

export function ChatPanel({
  analysisId,
  knowledge,
  findingCodes,
  onCiteFinding,
}: {
  analysisId: string;
  knowledge: Knowledge | null;
  findingCodes: Set<string>;
  onCiteFinding: (code: string) => void;
}) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [question, setQuestion] = useState("");
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | null>(null);
  const seq = useRef(0);
  const logRef = useRef<HTMLDivElement>(null);
  // A conversation longer than its box scrolls: then the keyboard can scroll it too.
  const logScrolls = useScrolls(logRef);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const panelRef = useRef<HTMLElement>(null);
  // Narrow screens: the chat is below the report; the floating "Ask" button shows while it is out of view.
  const [inView, setInView] = useState(false);
  useChatSkip();

  useEffect(() => {
    const el = panelRef.current;
    if (!el || typeof IntersectionObserver === "undefined") return;
    const io = new IntersectionObserver((entries) => {
      for (const e of entries) setInView(e.isIntersecting);
    });
    io.observe(el);
    return () => {
      io.disconnect();
    };
  }, []);

  // The conversation so far, asked again each time the panel opens (this visit's turns follow it). Not on a
  // reconnect: the turns asked since would then be shown twice.
  const historyQ = useQuery({
    queryKey: ["analysis", analysisId, "chat"],
    queryFn: () => call(api.GET("/api/v1/analyses/{analysis_id}/chat", { params: { path: { analysis_id: analysisId } } })),
    staleTime: 0,
    refetchOnReconnect: false,
  });
  const loadError = historyQ.error ? asApiError(historyQ.error).message : null;
  const shown = useMemo(
    () => [
      ...(historyQ.data?.messages ?? []).map((m): Turn => ({ key: `h${m.id}`, role: m.role, text: m.text, answer: m.answer ?? null })),
      ...turns,
    ],
    [historyQ.data, turns],
  );
  useEffect(
    () => () => {
      abort.current?.abort();
    },
    [analysisId],
  );

  useEffect(() => {
    const el = logRef.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [shown]);

  const send = async (q: string) => {
    const text = q.trim();
    if (!text || busy) return;
    setBusy(true);
    setQuestion("");
    seq.current += 1;
    const id = `t${String(seq.current)}`;
    setTurns((t) => [...t, { key: `${id}q`, role: "user", text, answer: null }, { key: `${id}a`, role: "assistant", text: "", answer: null, streaming: true }]);
    const update = (fn: (t: Turn) => Turn) => {
      setTurns((ts) => ts.map((t) => (t.key === `${id}a` ? fn(t) : t)));
    };
    abort.current = new AbortController();
    try {
      const answer = await ask(
        analysisId,
        text,
        {
          onDelta: (d) => {
            update((t) => ({ ...t, text: t.text + d }));
          },
          onReset: () => {
            update((t) => ({ ...t, text: "" }));
          },
          onQueued: (detail) => {
            update((t) => ({ ...t, waiting: detail }));
          },
        },
        abort.current.signal,
      );
      update((t) => ({ ...t, text: answer.text, answer, streaming: false }));
    } catch (e) {
      const msg = e instanceof ApiError ? e.message : String(e);
      update((t) => ({ ...t, streaming: false, error: msg }));
    } finally {
      setBusy(false);
      abort.current = null;
      inputRef.current?.focus();
    }
  };

  const onSubmit = (e: SyntheticEvent) => {
    e.preventDefault();
    void send(question);
  };

  const cite = {
    finding: (code: string, key: string): ReactNode =>
      findingCodes.has(code) ? (
        <button
          key={key}
          type="button"
          className="cite-inline"
          onClick={() => {
            onCiteFinding(code);
          }}
        >
          {code}
        </button>
      ) : null,
    doc: (id: string, key: string): ReactNode =>
      knowledge?.docs.has(id) ? (
        <Link key={key} to={`/docs/${id}`} className="cite-inline" title={knowledge.docs.get(id)?.title ?? id} aria-label={`guide: ${knowledge.docs.get(id)?.title ?? id}`}>
          [guide]
        </Link>
      ) : null,
  };

  return (
    <>
      <aside className="chat card" aria-labelledby="chat-title" data-testid="chat" ref={panelRef}>
        <h2 id="chat-title">Ask about this job</h2>
        <div className="chat-log" ref={logRef} role="log" aria-live="polite" aria-busy={busy} aria-label="Conversation" tabIndex={logScrolls ? 0 : undefined}>
          {loadError && <p className="error">{loadError}</p>}
          {shown.length === 0 && !loadError && (
            <p className="muted small">
              Answers come from this job's findings and the tuning guides; every claim is checked against the report.
            </p>
          )}
          {shown.map((t) => (
            <div key={t.key} className={`msg ${t.role}`} data-testid={`msg-${t.role}`}>
              {t.role === "user" ? (
                <p className="q">{t.text}</p>
              ) : (
                <>
                  {t.streaming ? (
                    <p className="streaming" data-testid="streaming">
                      {t.text || (t.waiting ? `Waiting: ${t.waiting}` : "Thinking…")}
                      <span className="cursor" aria-hidden="true">
                        ▍
                      </span>
                    </p>
                  ) : (
                    t.text && <Markdown source={t.text} breaks cite={cite} />
                  )}
                  {t.error && <p className="error">{t.error}</p>}
                  {t.answer && <AnswerMeta answer={t.answer} knowledge={knowledge} findingCodes={findingCodes} onCiteFinding={onCiteFinding} />}
                </>
              )}
            </div>
          ))}
        </div>
        <div className="suggested" role="group" aria-label="Suggested questions">
          {SUGGESTED.map((s) => (
            <button key={s} type="button" className="btn small chip" disabled={busy} onClick={() => void send(s)}>
              {s}
            </button>
          ))}
        </div>
        <form className="chat-form" onSubmit={onSubmit}>
          <label htmlFor="chat-q" className="sr-only">
            Your question
          </label>
          <textarea
            id={CHAT_INPUT_ID}
            ref={inputRef}
            rows={2}
            value={question}
            maxLength={4000}
            placeholder="Ask a question about this job…"
            onChange={(e) => {
              setQuestion(e.target.value);
            }}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey) {
                e.preventDefault();
                void send(question);
              }
            }}
          />
          <button type="submit" className="btn primary" disabled={busy || !question.trim()}>
            {busy ? "Answering…" : "Ask"}
          </button>
        </form>
      </aside>
      <button
        type="button"
        className="btn primary ask-fab"
        hidden={inView}
        aria-label="Ask about this job"
        data-testid="ask-fab"
        onClick={() => {
          focusChat();
        }}
      >
        Ask
      </button>
    </>
  );
}

function AnswerMeta({
  answer,
  knowledge,
  findingCodes,
  onCiteFinding,
}: {
  answer: Answer;
  knowledge: Knowledge | null;
  findingCodes: Set<string>;
  onCiteFinding: (code: string) => void;
}) {
  const p = PROVENANCE[answer.provenance];
  const citation = (c: Citation) => {
    const label = c.title ? `${c.id} · ${c.title}` : c.id;
    if (c.kind === "finding") {
      return findingCodes.has(c.id) ? (
        <button
          type="button"
          className="cite"
          title={label}
          onClick={() => {
            onCiteFinding(c.id);
          }}
        >
          {label}
        </button>
      ) : (
        <span className="cite">{label}</span>
      );
    }
    const doc = knowledge?.docs.get(c.id);
    return (
      <Link to={`/docs/${c.id}`} className="cite doc" title={doc?.title ?? (c.title || c.id)}>
        Guide: {doc?.title ?? (c.title || c.id)}
      </Link>
    );
  };
  return (
    <div className="answer-meta">
      <span className="sr-only">Answer source: </span>
      <span className={`badge prov-${answer.provenance}`} title={p.title + (answer.note ? ` (${answer.note})` : "")} data-testid="provenance">
        {p.label}
      </span>
      <span className="sr-only">({p.title})</span>
      {answer.model && <span className="muted small">{answer.model}</span>}
      {(answer.citations ?? []).length > 0 && (
        <ul className="citations" aria-label="Sources" data-testid="citations">
          {(answer.citations ?? []).map((c) => (
            <li key={`${c.kind}:${c.id}`}>{citation(c)}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
