import { type ReactNode, type SyntheticEvent, useState } from "react";
import { api, ApiError, call, type Me, tokenStore } from "../api/client";

export function SignInPage({ onSignedIn, themeButton }: { onSignedIn: (me: Me) => void; themeButton: ReactNode }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: SyntheticEvent) => {
    e.preventDefault();
    const t = token.trim();
    if (!t) {
      setError("Paste your API token.");
      return;
    }
    setBusy(true);
    setError(null);
    tokenStore.set(t);
    try {
      const me = await call(api.GET("/api/v1/me"));
      setToken("");
      onSignedIn(me);
    } catch (err) {
      tokenStore.clear();
      setError(err instanceof ApiError && err.status === 401 ? "That token is not valid (or was revoked)." : err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="signin">
      <div className="signin-theme">{themeButton}</div>
      <form className="card signin-card" onSubmit={(e) => void submit(e)} method="post" action="#" autoComplete="off">
        <h1>
          <span className="brand">iodiag</span>
        </h1>
        <p className="muted">Why was my job's I/O slow? Sign in with your API token to upload a Darshan log and read its diagnosis.</p>
        <label htmlFor="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          value={token}
          autoFocus
          spellCheck={false}
          autoComplete="off"
          onChange={(e) => {
            setToken(e.target.value);
          }}
          aria-describedby="token-help"
          aria-invalid={error ? true : undefined}
        />
        <p id="token-help" className="muted small">
          Ask your help desk for one, or run <code>iodiag token create --user YOU</code>. It is kept in this tab only.
        </p>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="btn primary" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
