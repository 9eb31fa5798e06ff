// Server state: every fetch and poll goes through TanStack Query, so a page never sets state after it has
// gone (no `live` flags), polls stop on their own, and two views of one resource share one request.
import { QueryClient } from "@tanstack/react-query";
import { ApiError } from "../api/client";

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx is an answer (not found, not yours): asking again cannot change it. The pages that should
      // retry a 5xx or a lost connection say so with their own refetchInterval.
      retry: false,
      refetchOnWindowFocus: false,
      staleTime: 30_000,
    },
  },
});

/** Any thrown value as the API's error (status 0: no answer from the server). */
export function asApiError(e: unknown): ApiError {
  return e instanceof ApiError ? e : new ApiError(e instanceof Error ? e.message : String(e), 0);
}

/** Poll again after `ms` while the server is down or erring (status 0 or 5xx); stop on a 4xx. */
export function retryServerErrors(error: unknown, ms: number): number | false {
  const s = asApiError(error).status;
  return s === 0 || s >= 500 ? ms : false;
}
