// A small history-API router: the app has a handful of routes and needs no more.
import { type AnchorHTMLAttributes, type MouseEvent, useSyncExternalStore } from "react";

const listeners = new Set<() => void>();
function subscribe(fn: () => void): () => void {
  listeners.add(fn);
  window.addEventListener("popstate", fn);
  return () => {
    listeners.delete(fn);
    window.removeEventListener("popstate", fn);
  };
}
function snapshot(): string {
  return window.location.pathname + window.location.search;
}

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === snapshot()) return;
  if (opts.replace) window.history.replaceState(null, "", to);
  else window.history.pushState(null, "", to);
  for (const fn of listeners) fn();
  if (!opts.replace) window.scrollTo(0, 0);
}

export interface Location {
  path: string;
  query: URLSearchParams;
}

export function useLocation(): Location {
  const loc = useSyncExternalStore(subscribe, snapshot);
  const q = loc.indexOf("?");
  return { path: q < 0 ? loc : loc.slice(0, q), query: new URLSearchParams(q < 0 ? "" : loc.slice(q)) };
}

/** Match "/analyses/:id" against a path; the parameters, decoded, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split("/");
  const s = path.replace(/\/+$/, "").split("/");
  if (p.length !== s.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const a = p[i] ?? "";
    const b = s[i] ?? "";
    if (a.startsWith(":")) {
      if (!b) return null;
      try {
        out[a.slice(1)] = decodeURIComponent(b);
      } catch {
        return null;
      }
    } else if (a !== b) return null;
  }
  return out;
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string };

export function Link({ to, onClick, children, ...rest }: LinkProps) {
  const handle = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return (
    <a href={to} onClick={handle} {...rest}>
      {children}
    </a>
  );
}
