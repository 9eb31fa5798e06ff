// The thread between the help desk and the job's owner: staff draft a reply from the verdict and the fixes
// (checked against the report like any answer), edit it and send it; the owner reads it here and answers.
// Replies are Markdown (either side may write **bold** or link a guide): rendered by lib/markdown, which builds
// React elements, so no reply text is ever HTML.
import { useQuery } from "@tanstack/react-query";
import { type RefObject, useEffect, useRef, useState } from "react";
import { type AnalysisOut, api, call, type Schemas } from "../api/client";
import { ErrorNote, Spinner } from "../components/badges";
import { dateTime } from "../lib/format";
import { Markdown } from "../lib/markdown";
import { isStaff, useSession } from "../session";
import "../styles/report.css";
import { asApiError } from "../lib/query";

type Reply = Schemas["ReplyOut"];

/**
 * "Messages (2 unread)": near the top of the report, a link that scrolls to the thread and focuses it. Shown
 * while the thread has something to read (or, for staff, always: they write there).
 */
export function MessagesLink({ unread, count, onGo }: { unread: number; count: number | null; onGo: () => void }) {
  const { me } = useSession();
  if (!isStaff(me) && !count && !unread) return null;
  return (
    <a
      href="#replies-title"
      className={`messages-link${unread > 0 ? " has-unread" : ""}`}
      data-testid="messages-link"
      onClick={(e) => {
        e.preventDefault();
        onGo();
      }}
    >
      Messages{unread > 0 ? ` (${String(unread)} unread)` : count ? ` (${String(count)})` : ""}
    </a>
  );
}

/** Scroll the thread into view and give it focus (its heading is announced). */
export function goToThread(ref: RefObject<HTMLElement | null>): void {
  const el = ref.current;
  if (!el) return;
  el.scrollIntoView({ behavior: "smooth", block: "start" });
  el.focus({ preventScroll: true });
}

export function ReplyThread({
  a,
  unread = 0,
  onRead,
  onCount,
  sectionRef,
}: {
  a: AnalysisOut;
  /** The caller's unread replies in this thread (AnalysisOut.unread_replies, until they are read). */
  unread?: number;
  /** The thread was shown with unread replies, and the server now counts them read. */
  onRead?: () => void;
  /** How many replies the thread holds, once loaded. */
  onCount?: (n: number) => void;
  sectionRef?: RefObject<HTMLElement | null>;
}) {
  const { me } = useSession();
  const staff = isStaff(me);
  const mine = me.user === a.owner;
  const [text, setText] = useState("");
  const [drafted, setDrafted] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const [actionError, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<"draft" | "send" | null>(null);

  const thread = useQuery({
    queryKey: ["analysis", a.id, "replies"],
    queryFn: () => call(api.GET("/api/v1/analyses/{analysis_id}/replies", { params: { path: { analysis_id: a.id } } })),
    staleTime: 0,
  });
  const replies: Reply[] | null = thread.data?.replies ?? null;
  const threadError = thread.error ? asApiError(thread.error).message : null;
  const error = actionError ?? threadError;
  // A reply sent (or read) changes the thread: ask the server for it again
  const load = async () => {
    await thread.refetch();
  };

  useEffect(() => {
    if (replies) onCount?.(replies.length);
  }, [replies, onCount]);

  // Shown (scrolled into view, or focused by "Messages"): the thread counts as read for the caller.
  const ownRef = useRef<HTMLElement>(null);
  const ref = sectionRef ?? ownRef;
  const marking = useRef(false);
  const hasReplies = (replies?.length ?? 0) > 0;
  useEffect(() => {
    const el = ref.current;
    if (!el || unread <= 0 || !hasReplies) return;
    const markRead = () => {
      if (marking.current) return;
      marking.current = true;
      call(api.POST("/api/v1/analyses/{analysis_id}/replies/read", { params: { path: { analysis_id: a.id } } }))
        .then(() => {
          onRead?.();
        })
        .catch(() => {
          /* still unread: the next look tries again */
        })
        .finally(() => {
          marking.current = false;
        });
    };
    const seen = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) markRead();
      },
      { threshold: 0.25 },
    );
    seen.observe(el);
    el.addEventListener("focus", markRead);
    return () => {
      seen.disconnect();
      el.removeEventListener("focus", markRead);
    };
  }, [ref, unread, hasReplies, a.id, onRead]);

  const draft = async () => {
    setBusy("draft");
    setError(null);
    try {
      const d = await call(api.POST("/api/v1/analyses/{analysis_id}/replies/draft", { params: { path: { analysis_id: a.id } } }));
      setText(d.text);
      setDrafted(true);
      setNote(
        d.verified
          ? `Drafted from the report (${d.citations.join(", ")}); every sentence checked against its facts. Edit before sending.`
          : "Drafted from the report, but some sentences could not be checked: read it carefully before sending.",
      );
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(null);
    }
  };

  const send = async () => {
    if (!text.trim()) return;
    setBusy("send");
    setError(null);
    try {
      await call(
        api.POST("/api/v1/analyses/{analysis_id}/replies", {
          params: { path: { analysis_id: a.id } },
          body: { text, drafted },
        }),
      );
      setText("");
      setDrafted(false);
      setNote(null);
      await load();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(null);
    }
  };

  const canWrite = staff || mine;
  // Nothing to show an owner before the help desk has written: the card appears with the first reply.
  if (!staff && replies !== null && replies.length === 0 && !error) return null;
  return (
    <section ref={ref} tabIndex={-1} className="card replies-card" aria-labelledby="replies-title" data-testid="reply-thread" data-unread={unread}>
      <h2 id="replies-title">
        {staff ? "Reply to the job's owner" : "Messages from the help desk"}
        {unread > 0 && <span className="badge unread-badge"> {unread} unread</span>}
      </h2>
      {replies === null && !error && <Spinner label="Loading messages…" />}
      {replies && replies.length > 0 && (
        <ol className="replies">
          {replies.map((r) => (
            <li key={r.id} className={r.role === "user" ? "from-owner" : "from-staff"} data-testid="reply">
              <div className="muted small">
                <strong>{r.author}</strong> {r.role === "user" ? "(owner)" : `(${r.role})`} ·{" "}
                <time dateTime={r.created_at}>{dateTime(r.created_at)}</time>
              </div>
              <Markdown source={r.text} breaks className="md reply-text" />
            </li>
          ))}
        </ol>
      )}
      {replies && replies.length === 0 && staff && <p className="muted small">No messages yet. {a.owner} sees what you send here on this page.</p>}
      {error && <ErrorNote error={error} />}
      {canWrite && (
        <form
          className="reply-form"
          onSubmit={(e) => {
            e.preventDefault();
            void send();
          }}
        >
          <label htmlFor="reply-text">{staff ? `Message to ${a.owner}` : "Your answer"}</label>
          <textarea
            id="reply-text"
            rows={staff ? 8 : 3}
            maxLength={8000}
            value={text}
            onChange={(e) => {
              setText(e.target.value);
            }}
            data-testid="reply-text"
          />
          {note && (
            <p className="muted small" data-testid="draft-note">
              {note}
            </p>
          )}
          <div className="actions">
            {staff && (
              <button type="button" className="btn small" disabled={busy !== null} onClick={() => void draft()} data-testid="draft-reply">
                {busy === "draft" ? "Drafting…" : "Draft reply"}
              </button>
            )}
            <button type="submit" className="btn primary small" disabled={busy !== null || !text.trim()} data-testid="send-reply">
              {busy === "send" ? "Sending…" : "Send"}
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
