import { Link } from "../lib/router";

export function NotFound({ what, detail }: { what: string; detail?: string }) {
  return (
    <div className="page narrow" data-testid="not-found">
      <h1>Not found</h1>
      <p>{detail ?? `There is no such ${what}, or it is not yours to see.`}</p>
      <p>
        <Link to="/jobs">Back to your jobs</Link>
      </p>
    </div>
  );
}
