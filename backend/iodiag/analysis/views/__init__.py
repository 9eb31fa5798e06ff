"""Views: what the checks, outcomes and plots read, derived once per job from the profile.

``context.Context`` holds the profile's tables and memoises every view on it; the other modules derive
trace phases and rank statistics (``trace``), heatmap bins (``heatmap``), the per-layer summary across
the I/O stack (``stack``), Lustre layouts and OST load (``lustre``), files and ranks as the job used
them (``file_usage``, ``rank_usage``), request sizes, call counts and source lines. Views judge nothing:
they never import a check, a hit builder or an outcome.
"""
