"""Offering the tools to a model and answering its calls (OpenAI ``tools``).

:func:`run` never raises: an unknown tool, arguments that are not JSON or do not validate, or a name the report
does not hold all come back as an error result the model can read and correct. :func:`run_calls` answers one
round within the room left in the context window.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from iodiag.analysis.models import Report
from iodiag.narration.budget import MESSAGE_OVERHEAD, MIN_PROMPT_TOKENS
from iodiag.narration.checking.facts import Fact
from iodiag.narration.checking.untrusted import clean, quote, quote_command
from iodiag.narration.tools.queries import (
    costs,
    file_layout,
    layer_gap,
    query,
    recommend,
    top_files,
    top_osts,
    top_ranks,
)
from iodiag.narration.tools.results import (
    MAX_TEXT,
    FileLayoutArgs,
    NoArgs,
    QueryArgs,
    RecommendArgs,
    ToolArgs,
    ToolError,
    ToolFailure,
    ToolResult,
    TopFilesArgs,
    TopOstsArgs,
    TopRanksArgs,
)

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 2
MAX_CALLS_PER_ROUND = 3  # a small model that loops on calls must not fill the window with results
RESULT_TOKENS = 768  # room kept in the window for the calls and their results, all rounds together

A = TypeVar("A", bound=ToolArgs)
R = TypeVar("R", bound=ToolResult)


@dataclass(frozen=True)
class Tool(Generic[A, R]):
    name: str
    description: str  # one line: what the model reads to choose it
    args: type[A]
    fn: Callable[[Report, A], R]

    def __call__(self, report: Report, args: A) -> R:
        return self.fn(report, args)

    def schema(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry: a function with a JSON Schema for its arguments."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": _schema(self.args)},
        }


TOOLS: dict[str, Tool[Any, Any]] = {
    t.name: t
    for t in (
        Tool("costs", "The causes of the job's slow I/O, ranked, with seconds and share of the run.", NoArgs, costs),
        Tool(
            "query",
            "Look up one fact from the log's counters (bytes, times, calls, ranks, files, file system, stripes, "
            "OSTs, interfaces) for the job, a file, an interface or a rank; the answer is a sentence with numbers.",
            QueryArgs,
            query,
        ),
        Tool(
            "recommend",
            "Concrete commands (where they go, what they change, seconds they can save) for one finding "
            "or, without a code, for the costliest findings.",
            RecommendArgs,
            recommend,
        ),
        Tool("top_files", "The files with the most I/O time, bytes or operations.", TopFilesArgs, top_files),
        Tool(
            "top_ranks",
            "The busiest rank and the ranks findings name, with their evidence.",
            TopRanksArgs,
            top_ranks,
        ),
        Tool(
            "top_osts",
            "The Lustre OSTs with the most I/O time or bytes, and the median OST.",
            TopOstsArgs,
            top_osts,
        ),
        Tool(
            "layer_gap",
            "Time, bytes and operations per I/O layer (HDF5/PnetCDF, MPI-IO, POSIX) and the gaps between them.",
            NoArgs,
            layer_gap,
        ),
        Tool(
            "file_layout",
            "The Lustre stripe layout of one file, where the report has it.",
            FileLayoutArgs,
            file_layout,
        ),
    )
}


def schemas() -> list[dict[str, Any]]:
    """Every tool as an OpenAI ``tools`` entry, in the order they are offered."""
    return [t.schema() for t in TOOLS.values()]


def reserve_tokens(count: Callable[[str], int], context_tokens: int, answer_tokens: int) -> int | None:
    """Tokens to keep free in the window for the tools (their schemas, the calls and results), or None when
    the window is too small to offer them and still hold a useful prompt."""
    need = count(json.dumps(schemas(), separators=(",", ":"))) + RESULT_TOKENS
    return need if context_tokens - answer_tokens - need >= MIN_PROMPT_TOKENS else None


@dataclass(frozen=True)
class ToolRun:
    """One call, run: the ``tool`` message's content and the facts its result adds to the grounding."""

    name: str
    ok: bool
    content: str
    facts: list[Fact] = field(default_factory=list)


def run(report: Report, name: str, arguments: str | Mapping[str, Any] | None) -> ToolRun:
    """Run one call as a model asked for it; never raises."""
    tool = TOOLS.get(name)
    if tool is None:
        return failure(name, f"unknown tool {clean(name, 60)!r}; tools: {', '.join(TOOLS)}")
    try:
        raw = json.loads(arguments) if isinstance(arguments, str) and arguments.strip() else (arguments or {})
    except json.JSONDecodeError as exc:
        return failure(name, f"arguments are not JSON: {exc.msg}")
    if not isinstance(raw, Mapping):
        return failure(name, "arguments must be a JSON object")
    try:
        args = tool.args.model_validate(dict(raw))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
        return failure(name, f"bad arguments: {problems}")
    try:
        result = tool(report, args)
    except ToolError as exc:
        return failure(name, str(exc))
    except Exception:  # a bug in a tool must cost the model one answer's tool round, not the answer
        log.exception("tool %s failed", name)
        return failure(name, "the tool failed")
    return ToolRun(name, True, to_content(result), result.facts())


@dataclass(frozen=True)
class Answered:
    """One round of calls, answered: (call id, content) per call in order, their facts, and the room left."""

    results: list[tuple[str, str]]
    facts: list[Fact]
    room: int


def run_calls(
    report: Report, calls: Sequence[tuple[str, str, str]], count: Callable[[str], int], room: int
) -> Answered:
    """Answer every call (id, name, arguments) of one round, within ``room`` tokens of the window.

    Every call gets an answer, as the protocol wants; calls past ``MAX_CALLS_PER_ROUND`` and results that do not
    fit get an error instead, and add no facts.
    """
    results: list[tuple[str, str]] = []
    facts: list[Fact] = []
    for i, (call_id, name, arguments) in enumerate(calls):
        if i >= MAX_CALLS_PER_ROUND:
            ran = failure(name, f"not run: at most {MAX_CALLS_PER_ROUND} calls at a time")
        else:
            ran = run(report, name, arguments)
        cost = count(ran.content) + count(arguments) + MESSAGE_OVERHEAD
        if cost > room:
            ran = failure(name, "the result is too long for the context window: ask for fewer items or one code")
            cost = count(ran.content) + count(arguments) + MESSAGE_OVERHEAD
        room -= cost
        results.append((call_id, ran.content))
        facts += ran.facts
    return Answered(results, facts, room)


def failure(name: str, error: str) -> ToolRun:
    return ToolRun(name, False, ToolFailure(tool=clean(name, 60), error=error).model_dump_json())


def to_content(result: BaseModel) -> str:
    """A result as the ``tool`` message's JSON: log text cleaned and in backticks, as in every prompt (text
    from the log is data, never instructions), floats cut to six digits (they cost tokens, not precision)."""
    return json.dumps(_compact(result.model_dump(mode="json")), separators=(",", ":"), ensure_ascii=False)


_LOG_KEYS = frozenset({"path", "command"})


def _compact(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _compact(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_compact(v, key) for v in value]
    if isinstance(value, float) and math.isfinite(value):
        # Below 1e-4, JSON writes an exponent ("3.1e-06"), which a model copies and a reader misreads; a share
        # or a time that small is 0 to the fourth decimal.
        return float(f"{value:.6g}") if abs(value) >= 1e-4 else 0.0
    if isinstance(value, str):
        if key == "command" and value:
            return quote_command(value, MAX_TEXT)  # exact: to be pasted, its paths already shell-quoted
        return quote(value, MAX_TEXT) if key in _LOG_KEYS and value else clean(value, 400)
    return value


# Not sent to the model: pydantic's titles (tokens, and nothing a model needs) and length bounds, which
# llama.cpp's server turns into a grammar of one optional rule per character and then refuses ("number of
# rules ... exceeds sane defaults"). The arguments are still validated against the full model on our side.
_NOT_SENT = frozenset({"title", "maxLength", "minLength"})


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    """The arguments' JSON Schema as the model sees it (``_NOT_SENT`` left out)."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in _NOT_SENT or not isinstance(v, str | int)}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    schema: dict[str, Any] = strip(model.model_json_schema())
    schema.setdefault("properties", {})
    return schema
