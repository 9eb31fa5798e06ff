"""``iodiag eval``: evaluations of iodiag against ground truth.

``iodiag eval triggers`` builds every scenario of the labeled corpus into a Darshan log, analyzes it
and prints per-code precision, recall and F1 with every miss and false alarm. Exit status: 0 when
F1 is 1.0 and every scenario ran, 1 otherwise (so CI fails), 2 on bad input (one line on stderr).

Registered on the main app by ``register(app)``; the heavy imports happen inside the command.
"""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from iodiag.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, command_group
from iodiag.cli.knowledge_cmd import evaluate as knowledge_evaluate


class EvalFormat(StrEnum):
    text = "text"
    json = "json"


def _error(message: str, *, internal: bool = False) -> None:
    label = "internal error" if internal else "error"
    line = Text.assemble((f"iodiag: {label}:", "bold red"), " ", " ".join(message.split()))
    Console(stderr=True, highlight=False, soft_wrap=True).print(line, soft_wrap=True)


def triggers(
    scenarios: Annotated[
        Path | None,
        typer.Option(
            "--scenarios",
            "-s",
            help="Directory of scenario YAML files (default: the repository's evals/scenarios).",
            show_default=False,
            metavar="DIR",
        ),
    ] = None,
    fmt: Annotated[
        EvalFormat, typer.Option("--format", "-f", help="Output format.", case_sensitive=False)
    ] = EvalFormat.text,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir",
            help="Where built logs are kept, keyed by spec hash (default: ~/.cache/iodiag/scenarios).",
            show_default=False,
            metavar="DIR",
        ),
    ] = None,
) -> None:
    """Score every finding against the labeled scenario corpus: per-code precision, recall and F1.

    Exits 1 unless F1 is 1.0 and every scenario ran; 2 on bad input.
    """
    from iodiag.evals.triggers import CorpusError, print_triggers, run_triggers, to_json

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    show = err.is_terminal and fmt == EvalFormat.text

    def progress(name: str) -> None:
        if show:
            err.print(Text(f"  building and analyzing {name}"), end="\r", soft_wrap=True)

    try:
        result = run_triggers(scenarios, cache_dir, progress=progress)
    except CorpusError as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_USAGE) from None
    except OSError as exc:
        _error(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
        raise typer.Exit(EXIT_USAGE) from None
    except Exception as exc:
        if os.environ.get("IODIAG_DEBUG", "") not in ("", "0"):
            raise
        _error(f"{type(exc).__name__}: {exc}", internal=True)
        raise typer.Exit(EXIT_FAILED) from None
    if show:
        err.print(" " * 60, end="\r")
    try:
        if fmt == EvalFormat.json:
            sys.stdout.write(to_json(result))
            sys.stdout.flush()
        else:
            width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 120
            console = Console(highlight=False, width=width, emoji=False)
            print_triggers(result, console)
            # The same scenarios' ranking labels, beside F1 (the logs are built already; `iodiag eval ranking`
            # also scores the expert-labelled real logs).
            from iodiag.evals.ranking import ranking_line, scenario_results

            console.print(ranking_line(scenario_results(scenarios, cache_dir), "scenarios"))
    except BrokenPipeError:
        # The reader of stdout went away (`| head`): stop quietly, without a second error at exit.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
    raise typer.Exit(EXIT_OK if result.perfect else EXIT_FAILED)


def ranking(
    scenarios: Annotated[
        Path | None,
        typer.Option("--scenarios", "-s", help="Scenario directory (default: evals/scenarios).", metavar="DIR"),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option("--labels", help="Real-log labels (default: evals/real/labels.yaml).", metavar="FILE"),
    ] = None,
    logs: Annotated[
        Path | None,
        typer.Option("--logs", help="Where the labelled real logs are (default: ../shared/logs).", metavar="DIR"),
    ] = None,
    only: Annotated[str, typer.Option("--only", help="scenarios, real or both.", metavar="SET")] = "both",
    fmt: Annotated[
        EvalFormat, typer.Option("--format", "-f", help="Output format.", case_sensitive=False)
    ] = EvalFormat.text,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Built scenario logs (default: ~/.cache/iodiag/scenarios).")
    ] = None,
) -> None:
    """Score the verdict: top-1 cause accuracy, io_matters accuracy and precision of critical+warning findings,
    on the labelled scenarios and on expert-labelled real logs.

    Exits 1 unless every score is 1.0 and every case ran; 2 on bad input.
    """
    from iodiag.evals.ranking import print_ranking, run_ranking
    from iodiag.evals.triggers import CorpusError

    if only not in ("scenarios", "real", "both"):
        _error(f"--only must be scenarios, real or both, not {only!r}")
        raise typer.Exit(EXIT_USAGE)
    which = ("scenarios", "real") if only == "both" else (only,)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    show = err.is_terminal and fmt == EvalFormat.text

    def progress(name: str) -> None:
        if show:
            err.print(Text(f"  analyzing {name}"[:70].ljust(70)), end="\r", soft_wrap=True)

    try:
        result = run_ranking(scenarios, cache_dir, labels, logs, progress, which)
    except CorpusError as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_USAGE) from None
    if show:
        err.print(" " * 70, end="\r")
    if fmt == EvalFormat.json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 120
        print_ranking(result, Console(highlight=False, width=width, emoji=False))
    raise typer.Exit(EXIT_OK if all(s.perfect for s in result.sets) else EXIT_FAILED)


def answers(
    route: Annotated[str, typer.Option("--route", help="template, model or both.", metavar="ROUTE")] = "both",
    cases: Annotated[
        Path | None,
        typer.Option(
            "--cases",
            help="Cases file (default: the repository's evals/answers/cases.yaml).",
            show_default=False,
            metavar="FILE",
        ),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the scores and every answer here.", metavar="FILE")
    ] = None,
    show: Annotated[bool, typer.Option("--show", help="Print every answer.")] = False,
) -> None:
    """Score the narrator on evals/answers/: intent, citations, grounding, fallbacks, latency."""
    from iodiag.evals.answers import DEFAULT_CASES, EvalError, run_answers_eval

    if route not in ("template", "model", "both"):
        _error(f"--route must be template, model or both, not {route!r}")
        raise typer.Exit(EXIT_USAGE)
    try:
        code = run_answers_eval(cases or DEFAULT_CASES, route, json_out, show)  # type: ignore[arg-type]
    except EvalError as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_USAGE) from None
    raise typer.Exit(code)


def compare_pairs(
    pairs: Annotated[
        Path | None,
        typer.Option(
            "--pairs",
            "-p",
            help="Directory of before/after pair files (default: the repository's evals/compare).",
            show_default=False,
            metavar="DIR",
        ),
    ] = None,
    fmt: Annotated[
        EvalFormat, typer.Option("--format", "-f", help="Output format.", case_sensitive=False)
    ] = EvalFormat.text,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir",
            help="Where built logs are kept, keyed by spec hash (default: ~/.cache/iodiag/scenarios).",
            show_default=False,
            metavar="DIR",
        ),
    ] = None,
) -> None:
    """Score iodiag compare on before/after scenario pairs: resolved and new findings, I/O time, io_matters.

    Exits 1 unless every pair's labels are met and every pair ran; 2 on bad input.
    """
    from iodiag.evals.compare import print_compare_eval, run_compare_eval, to_json
    from iodiag.evals.triggers import CorpusError

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    show = err.is_terminal and fmt == EvalFormat.text

    def progress(name: str) -> None:
        if show:
            err.print(Text(f"  building and comparing {name}"[:70].ljust(70)), end="\r", soft_wrap=True)

    try:
        result = run_compare_eval(pairs, cache_dir, progress=progress)
    except CorpusError as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_USAGE) from None
    except OSError as exc:
        _error(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
        raise typer.Exit(EXIT_USAGE) from None
    except Exception as exc:
        if os.environ.get("IODIAG_DEBUG", "") not in ("", "0"):
            raise
        _error(f"{type(exc).__name__}: {exc}", internal=True)
        raise typer.Exit(EXIT_FAILED) from None
    if show:
        err.print(" " * 70, end="\r")
    try:
        if fmt == EvalFormat.json:
            sys.stdout.write(to_json(result))
            sys.stdout.flush()
        else:
            width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 120
            print_compare_eval(result, Console(highlight=False, width=width, emoji=False))
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
    raise typer.Exit(EXIT_OK if result.perfect else EXIT_FAILED)


def history_series(
    series: Annotated[
        Path | None,
        typer.Option(
            "--series",
            "-s",
            help="Directory of labelled run-series files (default: the repository's evals/history).",
            show_default=False,
            metavar="DIR",
        ),
    ] = None,
    fmt: Annotated[
        EvalFormat, typer.Option("--format", "-f", help="Output format.", case_sensitive=False)
    ] = EvalFormat.text,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir",
            help="Where built logs are kept, keyed by spec hash (default: ~/.cache/iodiag/scenarios).",
            show_default=False,
            metavar="DIR",
        ),
    ] = None,
) -> None:
    """Score the regression flag on labelled series of runs: flagged where I/O time is far above usual, only there.

    Exits 1 unless every run's flag matches its label; 2 on bad input.
    """
    from iodiag.evals.history import print_history_eval, run_history_eval, to_json
    from iodiag.evals.triggers import CorpusError

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    show = err.is_terminal and fmt == EvalFormat.text

    def progress(name: str) -> None:
        if show:
            err.print(Text(f"  building and analyzing {name}"[:70].ljust(70)), end="\r", soft_wrap=True)

    try:
        result = run_history_eval(series, cache_dir, progress=progress)
    except CorpusError as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_USAGE) from None
    except OSError as exc:
        _error(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
        raise typer.Exit(EXIT_USAGE) from None
    if show:
        err.print(" " * 70, end="\r")
    if fmt == EvalFormat.json:
        sys.stdout.write(to_json(result))
    else:
        width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 120
        print_history_eval(result, Console(highlight=False, width=width, emoji=False))
    raise typer.Exit(EXIT_OK if result.perfect else EXIT_FAILED)


def intents(
    questions: Annotated[
        Path | None,
        typer.Option(
            "--questions",
            "-q",
            help="Labelled questions (default: the repository's evals/intents/questions.yaml).",
            show_default=False,
            metavar="FILE",
        ),
    ] = None,
    log: Annotated[
        Path | None,
        typer.Option(
            "--log",
            help="Classify against this log's report (default: the Drishti sample).",
            show_default=False,
            metavar="LOG",
        ),
    ] = None,
    fmt: Annotated[
        EvalFormat, typer.Option("--format", "-f", help="Output format.", case_sensitive=False)
    ] = EvalFormat.text,
) -> None:
    """Score how the narrator classifies questions: accuracy overall and per intent, every miss listed.

    Exits 1 below the 0.95 target; 2 on bad input.
    """
    from iodiag.evals.intents import print_intent_eval, run_intent_eval
    from iodiag.evals.triggers import CorpusError
    from iodiag.ingest import LogReadError

    try:
        result = run_intent_eval(questions, log)
    except (CorpusError, LogReadError) as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_USAGE) from None
    except Exception as exc:
        if os.environ.get("IODIAG_DEBUG", "") not in ("", "0"):
            raise
        _error(f"{type(exc).__name__}: {exc}", internal=True)
        raise typer.Exit(EXIT_FAILED) from None
    if fmt == EvalFormat.json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 120
        print_intent_eval(result, Console(highlight=False, width=width, emoji=False))
    raise typer.Exit(EXIT_OK if result.passed else EXIT_FAILED)


def register(app: typer.Typer) -> None:
    """Add the ``eval`` command group to ``app``."""
    eval_app = command_group(app, "eval", "Evaluate iodiag against ground truth (labeled scenario logs).")
    eval_app.command("triggers")(triggers)
    eval_app.command("answers")(answers)
    eval_app.command("ranking")(ranking)
    eval_app.command("compare")(compare_pairs)
    eval_app.command("history")(history_series)
    eval_app.command("intents")(intents)
    # The same scorer as ``iodiag knowledge eval``, listed with the other evals.
    eval_app.command("retrieval")(knowledge_evaluate)
