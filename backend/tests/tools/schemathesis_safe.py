"""Run the schemathesis CLI with one CPython 3.11 bug defused.

Hypothesis describes a strategy's lambdas by parsing their source with ``ast.parse``; deep in a recursive
schema, CPython 3.11 can raise ``SystemError: AST constructor recursion depth mismatch`` from there (a CPython
bug, fixed in later releases). The description is only used in a repr, so a failure becomes the generic
description Hypothesis already uses when it cannot read a lambda's source, and the fuzzing goes on.
"""

from __future__ import annotations

import sys

from hypothesis.internal import lambda_sources

_original = lambda_sources._lambda_description


def _safe(f, *args, **kwargs):  # type: ignore[no-untyped-def]
    try:
        return _original(f, *args, **kwargs)
    except SystemError:
        return "lambda: <unknown>"


lambda_sources._lambda_description = _safe

if __name__ == "__main__":
    from schemathesis.cli import schemathesis

    sys.argv[0] = "schemathesis"
    sys.exit(schemathesis())
