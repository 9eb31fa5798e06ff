// Unread replies from the other side of a job's thread: the caller's total (GET /api/v1/me) is shared
// by the nav, the page title ("(3) All jobs · iodiag") and the lists, which refresh it when they poll.
import { useEffect, useSyncExternalStore } from "react";
import { api, call } from "../api/client";

type Unread = { replies: number; threads: number };
let current: Unread = { replies: 0, threads: 0 };
const listeners = new Set<() => void>();

/** Publish the caller's unread totals (from a MeOut). */
export function setUnread(replies: number, threads: number): void {
  if (replies === current.replies && threads === current.threads) return;
  current = { replies, threads };
  for (const fn of listeners) fn();
}

/** Ask the server again (after a list loads, on navigation); failures leave the last totals. */
export function refreshUnread(): void {
  call(api.GET("/api/v1/me"))
    .then((m) => {
      setUnread(m.unread_replies, m.unread_threads);
    })
    .catch(() => undefined);
}

function subscribe(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export function useUnread(): Unread {
  return useSyncExternalStore(subscribe, () => current);
}

export function unreadText(n: number): string {
  return `${String(n)} unread ${n === 1 ? "reply" : "replies"}`;
}

/** The page title carries the total, "(3) …", whatever the page sets it to. */
export function useUnreadTitle(n: number): void {
  useEffect(() => {
    const apply = () => {
      const base = document.title.replace(/^\(\d+\) /, "");
      const want = n > 0 ? `(${String(n)}) ${base}` : base;
      if (document.title !== want) document.title = want;
    };
    apply();
    const el = document.querySelector("title");
    if (!el) return;
    const seen = new MutationObserver(apply);
    seen.observe(el, { childList: true, characterData: true, subtree: true });
    return () => {
      seen.disconnect();
    };
  }, [n]);
}

/** A count badge whose accessible text is "N unread replies"; nothing when there are none. */
export function UnreadBadge({ n, testId = "unread-badge" }: { n: number; testId?: string }) {
  if (n <= 0) return null;
  const text = unreadText(n);
  return (
    <span className="badge unread" title={text} data-testid={testId}>
      <span aria-hidden="true">{n}</span>
      <span className="sr-only">{text}</span>
    </span>
  );
}
