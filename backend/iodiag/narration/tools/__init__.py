"""Typed tools over a report, offered to a model that can call functions (OpenAI ``tools``).

The prompt holds the facts that fit in the window, picked for the question; a model that can call functions
can also look up what a question needs beyond them. ``results`` holds what the tools take and give,
``queries`` the tools themselves (pure functions of the report), ``calling`` the offer and the calling loop.
"""

from iodiag.narration.tools.calling import (
    MAX_CALLS_PER_ROUND,
    MAX_TOOL_ROUNDS,
    RESULT_TOKENS,
    TOOLS,
    Answered,
    Tool,
    ToolRun,
    failure,
    reserve_tokens,
    run,
    run_calls,
    schemas,
    to_content,
)
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
    MAX_RECOMMEND_FINDINGS,
    FileLayoutArgs,
    NoArgs,
    QueryArgs,
    RecommendArgs,
    ToolError,
    ToolResult,
    TopFilesArgs,
    TopOstsArgs,
    TopRanksArgs,
)

__all__ = [
    "MAX_CALLS_PER_ROUND",
    "MAX_RECOMMEND_FINDINGS",
    "MAX_TOOL_ROUNDS",
    "RESULT_TOKENS",
    "TOOLS",
    "Answered",
    "FileLayoutArgs",
    "NoArgs",
    "QueryArgs",
    "RecommendArgs",
    "Tool",
    "ToolError",
    "ToolResult",
    "ToolRun",
    "TopFilesArgs",
    "TopOstsArgs",
    "TopRanksArgs",
    "costs",
    "failure",
    "file_layout",
    "layer_gap",
    "query",
    "recommend",
    "reserve_tokens",
    "run",
    "run_calls",
    "schemas",
    "to_content",
    "top_files",
    "top_osts",
    "top_ranks",
]
