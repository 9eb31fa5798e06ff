import { useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useState } from "react";
import { api, call, type Me, onUnauthorized, tokenStore } from "./api/client";
import { Link, match, navigate, useLocation } from "./lib/router";
import { queryClient } from "./lib/query";
import { useTheme } from "./lib/theme";
import { ChatSkipContext, CHAT_INPUT_ID, focusChat } from "./lib/chatfocus";
import { ErrorBoundary } from "./components/ErrorBoundary";
import { AnalysisPage } from "./pages/Analysis";
import { ComparePage } from "./pages/Compare";
import { DocPage } from "./pages/Doc";
import { JobsPage } from "./pages/Jobs";
import { SignInPage } from "./pages/SignIn";
import { UploadPage } from "./pages/Upload";
import { isStaff, SessionContext } from "./session";
import { NotFound } from "./components/NotFound";
import { refreshUnread, setUnread, UnreadBadge, useUnread, useUnreadTitle } from "./components/unread";

export function App() {
  const [theme, toggleTheme] = useTheme();
  // A token to try (kept from an earlier visit, or just given on the sign-in page): who it belongs to is asked once.
  const [hasToken, setHasToken] = useState(() => tokenStore.get() !== null);
  const meQ = useQuery({
    queryKey: ["me"],
    queryFn: async () => {
      try {
        return await call(api.GET("/api/v1/me"));
      } catch (e) {
        tokenStore.clear(); // a token the server does not know is dropped: the sign-in page follows
        throw e;
      }
    },
    enabled: hasToken,
    staleTime: Infinity,
  });
  const me: Me | null = hasToken && !meQ.isError ? (meQ.data ?? null) : null;
  const checking = hasToken && meQ.isPending;
  const [chatSkip, setChatSkip] = useState(false);
  const loc = useLocation();
  const unread = useUnread();
  useUnreadTitle(me ? unread.replies : 0);

  const signOut = useCallback(() => {
    tokenStore.clear();
    // Nothing of this user's stays in the cache for whoever signs in next
    queryClient.clear();
    setHasToken(false);
  }, []);

  useEffect(() => onUnauthorized(signOut), [signOut]);

  useEffect(() => {
    if (meQ.data) setUnread(meQ.data.unread_replies, meQ.data.unread_threads);
  }, [meQ.data]);
  // A thread read on a job's page clears its marker: ask again on every move between pages.
  const signedIn = me !== null;
  useEffect(() => {
    if (signedIn) refreshUnread();
  }, [loc.path, signedIn]);

  const themeButton = (
    <button
      type="button"
      className="btn ghost theme-toggle"
      onClick={toggleTheme}
      aria-label={`Switch to ${theme === "dark" ? "light" : "dark"} theme`}
      title={`Switch to ${theme === "dark" ? "light" : "dark"} theme`}
    >
      <span className="theme-icon" aria-hidden="true">
        {theme === "dark" ? "☀" : "☾"}
      </span>
      <span className="theme-label">{theme === "dark" ? " Light" : " Dark"}</span>
    </button>
  );

  if (checking) {
    return (
      <div className="center-page" role="status">
        Checking your token…
      </div>
    );
  }
  if (!me) {
    return (
      <SignInPage
        themeButton={themeButton}
        onSignedIn={(m) => {
          queryClient.setQueryData(["me"], m);
          setHasToken(true);
          setUnread(m.unread_replies, m.unread_threads);
          if (loc.path === "/signin") navigate("/", { replace: true });
        }}
      />
    );
  }

  const staff = isStaff(me);
  const path = loc.path;
  let page;
  let m: Record<string, string> | null;
  if (path === "/" || path === "/signin") page = <JobsPage scope="mine" key="mine" />;
  else if (path === "/upload") page = <UploadPage />;
  else if (path === "/jobs") page = <JobsPage scope="mine" key="mine" />;
  else if (path === "/all") page = staff ? <JobsPage scope="all" key="all" /> : <NotFound what="page" />;
  else if ((m = match("/analyses/:id", path))) page = <AnalysisPage id={m.id ?? ""} key={m.id} />;
  else if ((m = match("/compare/:a/:b", path))) page = <ComparePage a={m.a ?? ""} b={m.b ?? ""} key={`${m.a ?? ""}/${m.b ?? ""}`} />;
  else if ((m = match("/docs/:id", path))) page = <DocPage id={m.id ?? ""} key={m.id} />;
  else page = <NotFound what="page" />;

  // The unread total sits on the list that holds those threads: the help desk's is all jobs.
  const nav: { to: string; label: string; also?: string[]; unread?: boolean }[] = [
    { to: "/upload", label: "Upload" },
    { to: "/jobs", label: "My jobs", also: ["/"], unread: !staff },
    ...(staff ? [{ to: "/all", label: "All jobs", unread: true }] : []),
  ];

  return (
    <SessionContext.Provider value={{ me, signOut }}>
      <ChatSkipContext.Provider value={setChatSkip}>
        {chatSkip && (
          <a
            className="skip-link"
            href={`#${CHAT_INPUT_ID}`}
            onClick={(e) => {
              if (focusChat()) e.preventDefault();
            }}
          >
            Skip to chat
          </a>
        )}
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="topbar">
          <Link to="/" className="brand" aria-label="iodiag home">
            iodiag
          </Link>
          <nav aria-label="Main">
            <ul>
              {nav.map((n) => {
                const current = path === n.to || (n.also?.includes(path) ?? false);
                return (
                  <li key={n.to}>
                    <Link to={n.to} aria-current={current ? "page" : undefined}>
                      {n.label}
                      {n.unread && (
                        <>
                          {" "}
                          <UnreadBadge n={unread.replies} testId="nav-unread" />
                        </>
                      )}
                    </Link>
                  </li>
                );
              })}
            </ul>
          </nav>
          <div className="topbar-right">
            <span className="who" data-testid="who">
              {me.user} <span className="badge role">{me.role}</span>
            </span>
            {themeButton}
            <button type="button" className="btn ghost" onClick={signOut}>
              Sign out
            </button>
          </div>
        </header>
        <main id="main" tabIndex={-1}>
          <ErrorBoundary page={pageName(path)} key={path}>
            {page}
          </ErrorBoundary>
        </main>
      </ChatSkipContext.Provider>
    </SessionContext.Provider>
  );
}

/** The page a path shows, in words, for the error boundary's message. */
function pageName(path: string): string {
  if (path.startsWith("/analyses/")) return "job report";
  if (path.startsWith("/compare/")) return "compare";
  if (path.startsWith("/docs/")) return "guide";
  if (path === "/upload") return "upload";
  if (path === "/all") return "all jobs";
  return "jobs";
}
