import { useState } from "react";
import { type AnalysisOut, api, call } from "../api/client";
import { navigate } from "../lib/router";
import { useSession } from "../session";

/** Delete an analysis (its owner or an admin): a second click confirms. */
export function DeleteButton({ a }: { a: AnalysisOut }) {
  const { me } = useSession();
  const [armed, setArmed] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (me.role !== "admin" && me.user !== a.owner) return null;
  const run = async () => {
    try {
      await call(api.DELETE("/api/v1/analyses/{analysis_id}", { params: { path: { analysis_id: a.id } } }));
      navigate("/jobs", { replace: true });
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      setArmed(false);
    }
  };
  return (
    <>
      {armed ? (
        <>
          <button type="button" className="btn small danger" onClick={() => void run()}>
            Delete for good
          </button>
          <button
            type="button"
            className="btn small"
            onClick={() => {
              setArmed(false);
            }}
          >
            Keep
          </button>
        </>
      ) : (
        <button
          type="button"
          className="btn small"
          onClick={() => {
            setArmed(true);
          }}
        >
          Delete…
        </button>
      )}
      {error && (
        <span className="error small" role="alert">
          {error}
        </span>
      )}
    </>
  );
}
