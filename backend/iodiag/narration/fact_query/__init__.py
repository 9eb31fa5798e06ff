"""Questions about plain facts of the log, answered from the report's numbers in the first sentence.

The intents are about findings; "did it use HDF5?", "how many bytes did rank 3 write?" or "what file system was
the output on?" are about the job's facts, and a finding near them is not their answer. This package turns such a
question into a typed :class:`Query` (a metric, a scope, an operation), runs it over the report's counters
(interfaces, files, per-rank records, Lustre layouts, OSTs) and words the answer as one sentence whose every
number is a :class:`Fact` value, so the verifier checks it like any other. A question it does not recognise
gives None and the finding-centred answer stands alone.

Per-rank questions say what Darshan did not keep: a file every rank opened is often reduced to one shared
record holding only totals and the fastest and slowest rank.

Where things are, lowest first (a module imports only those above it):

* ``query``: the :class:`Query` model and its metrics;
* ``vocabulary``: the words and patterns questions are read by;
* ``names``: the files and groups of files a question names;
* ``parse``: questions to queries (:func:`parse`, :func:`parse_about`);
* ``common``: what every answer is written with;
* ``ranks``, ``files``, ``job``: the answers, by what they are about;
* ``answer``: :func:`answer`, the metric-to-answer table and the caveats of partial or corrupt logs.

Adding a metric: a name in ``query.Metric``, a rule in ``parse``, a function in ``ranks``/``files``/``job`` and
its line in ``answer._ANSWERS``.
"""

from iodiag.narration.fact_query.answer import answer, damaged_lead
from iodiag.narration.fact_query.common import SMALL_REQUEST
from iodiag.narration.fact_query.names import group_named, group_regex, name_pattern
from iodiag.narration.fact_query.parse import parse, parse_about, program_as_job
from iodiag.narration.fact_query.query import Direction, Metric, Query, Scope
from iodiag.narration.fact_query.vocabulary import BOUND_SHARE, INTERFACES

__all__ = [
    "BOUND_SHARE",
    "INTERFACES",
    "SMALL_REQUEST",
    "Direction",
    "Metric",
    "Query",
    "Scope",
    "answer",
    "damaged_lead",
    "group_named",
    "group_regex",
    "name_pattern",
    "parse",
    "parse_about",
    "program_as_job",
]
