import { Component, type ErrorInfo, type ReactNode } from "react";
import { Link } from "../lib/router";

type Props = { children: ReactNode; page: string };
type State = { error: Error | null };

/** One page's fault stays on that page: the top bar, the other pages and the chat keep working, and the
 *  reader gets a sentence and a way on instead of a blank screen. Keyed by the path, so leaving the page
 *  clears it. */
export class ErrorBoundary extends Component<Props, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo) {
    // Kept in the console for whoever reports it; the page shows the one-line message.
    console.error(`iodiag: the ${this.props.page} page failed`, error, info.componentStack);
  }

  override render() {
    const { error } = this.state;
    if (error === null) return this.props.children;
    return (
      <div className="page narrow" role="alert" data-testid="page-error">
        <h1>This page could not be shown</h1>
        <p>
          Something in the {this.props.page} page went wrong while showing it ({error.message || error.name}). Your
          data is safe; other pages still work.
        </p>
        <p>
          <button type="button" className="btn" onClick={() => {
              window.location.reload();
            }}>
            Reload the page
          </button>{" "}
          <Link to="/jobs">Back to your jobs</Link>
        </p>
      </div>
    );
  }
}
