"""``iodiag eval``: evaluations of iodiag against ground truth.

``iodiag eval triggers`` builds every scenario of the labeled corpus into a Darshan log, analyzes it
and prints per-code precision, recall and F1 with every miss and false alarm. Exit status: 0 when
F1 is 1.0 and every scenario ran, 1 otherwise (so CI fails), 2 on bad input (one line on stderr).

Registered on the main app by ``register(app)``; the heavy imports happen inside the command.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from iodiag.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, command_group, quiet_broken_pipe
from iodiag.cli.knowledge_cmd import evaluate as knowledge_evaluate
from iodiag.evals.tables import results_table

if TYPE_CHECKING:
    from iodiag.evals.triggers import TriggerEval

R = TypeVar("R")


class EvalFormat(StrEnum):
    text = "text"
    json = "json"


def _error(message: str, *, internal: bool = False) -> None:
    label = "internal error" if internal else "error"
    line = Text.assemble((f"iodiag: {label}:", "bold red"), " ", " ".join(message.split()))
    Console(stderr=True, highlight=False, soft_wrap=True).print(line, soft_wrap=True)


def _run_eval(
    compute: Callable[[Callable[[str], None]], R],
    fmt: EvalFormat,
    verb: str,
    *,
    json_text: Callable[[R], str],
    print_text: Callable[[R, Console], None],
    passed: Callable[[R], bool],
    usage_errors: tuple[type[Exception], ...],
) -> NoReturn:
    """What every scored eval command does around its own scoring: progress on a terminal, bad input as one line
    and exit 2, an internal error as one line and exit 1, the result as text or JSON, exit 0 only when it passed."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    show = err.is_terminal and fmt == EvalFormat.text

    def progress(name: str) -> None:
        if show:
            err.print(Text(f"  {verb} {name}"[:70].ljust(70)), end="\r", soft_wrap=True)

    try:
        result = compute(progress)
    except usage_errors as exc:
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
            sys.stdout.write(json_text(result))
            sys.stdout.flush()
        else:
            width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 120
            print_text(result, Console(highlight=False, width=width, emoji=False))
    except BrokenPipeError:
        quiet_broken_pipe()
    raise typer.Exit(EXIT_OK if passed(result) else EXIT_FAILED)


# Options several eval commands share, declared once
FormatOption = Annotated[EvalFormat, typer.Option("--format", "-f", help="Output format.", case_sensitive=False)]
CacheDirOption = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir",
        help="Where built logs are kept, keyed by spec hash (default: ~/.cache/iodiag/scenarios).",
        show_default=False,
        metavar="DIR",
    ),
]
DevOption = Annotated[bool, typer.Option("--dev", help="A development set to tune on: no seal, no first-sight record.")]


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
    fmt: FormatOption = EvalFormat.text,
    cache_dir: CacheDirOption = None,
) -> None:
    """Score every finding against the labeled scenario corpus: per-code precision, recall and F1.

    Exits 1 unless F1 is 1.0 and every scenario ran; 2 on bad input.
    """
    from iodiag.evals.triggers import CorpusError, print_triggers, run_triggers, to_json

    def text(result: TriggerEval, console: Console) -> None:
        print_triggers(result, console)
        # The same scenarios' ranking labels, beside F1 (the logs are built already; `iodiag eval ranking`
        # also scores the expert-labelled real logs).
        from iodiag.evals.ranking import ranking_line, scenario_results

        console.print(ranking_line(scenario_results(scenarios, cache_dir), "scenarios"))

    _run_eval(
        lambda progress: run_triggers(scenarios, cache_dir, progress=progress),
        fmt,
        "building and analyzing",
        json_text=to_json,
        print_text=text,
        passed=lambda r: r.perfect,
        usage_errors=(CorpusError,),
    )


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
    fmt: FormatOption = EvalFormat.text,
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
    _run_eval(
        lambda progress: run_ranking(scenarios, cache_dir, labels, logs, progress, which),
        fmt,
        "analyzing",
        json_text=lambda r: r.model_dump_json(indent=2) + "\n",
        print_text=print_ranking,
        passed=lambda r: all(s.perfect for s in r.sets),
        usage_errors=(CorpusError,),
    )


def answers(
    route: Annotated[str, typer.Option("--route", help="template, model or both.", metavar="ROUTE")] = "both",
    cases: Annotated[
        Path | None,
        typer.Option(
            "--cases",
            help="Cases file or folder (default: every cases*.yaml in the repository's evals/answers/).",
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
    fmt: FormatOption = EvalFormat.text,
    cache_dir: CacheDirOption = None,
) -> None:
    """Score iodiag compare on before/after scenario pairs: resolved and new findings, I/O time, io_matters.

    Exits 1 unless every pair's labels are met and every pair ran; 2 on bad input.
    """
    from iodiag.evals.compare import print_compare_eval, run_compare_eval, to_json
    from iodiag.evals.triggers import CorpusError

    _run_eval(
        lambda progress: run_compare_eval(pairs, cache_dir, progress=progress),
        fmt,
        "building and comparing",
        json_text=to_json,
        print_text=print_compare_eval,
        passed=lambda r: r.perfect,
        usage_errors=(CorpusError,),
    )


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
    fmt: FormatOption = EvalFormat.text,
    cache_dir: CacheDirOption = None,
) -> None:
    """Score the regression flag on labelled series of runs: flagged where I/O time is far above usual, only there.

    Exits 1 unless every run's flag matches its label; 2 on bad input.
    """
    from iodiag.evals.history import print_history_eval, run_history_eval, to_json
    from iodiag.evals.triggers import CorpusError

    _run_eval(
        lambda progress: run_history_eval(series, cache_dir, progress=progress),
        fmt,
        "building and analyzing",
        json_text=to_json,
        print_text=print_history_eval,
        passed=lambda r: r.perfect,
        usage_errors=(CorpusError,),
    )


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
    fmt: FormatOption = EvalFormat.text,
) -> None:
    """Score how the narrator classifies questions: accuracy overall and per intent, every miss listed.

    Exits 1 below the 0.95 target; 2 on bad input.
    """
    from iodiag.evals.intents import print_intent_eval, run_intent_eval
    from iodiag.evals.triggers import CorpusError
    from iodiag.ingest import LogReadError

    _run_eval(
        lambda _progress: run_intent_eval(questions, log),
        fmt,
        "classifying",
        json_text=lambda r: r.model_dump_json(indent=2) + "\n",
        print_text=print_intent_eval,
        passed=lambda r: r.passed,
        usage_errors=(CorpusError, LogReadError),
    )


def blind(
    folder: Annotated[Path, typer.Argument(help="A sealed blind set: evals/blind/<set>/ (labels, SEAL, logs/).")],
    drishti: Annotated[
        Path | None,
        typer.Option("--drishti", help="Drishti 0.8's executable, to score the peer on the same logs.", metavar="EXE"),
    ] = None,
    truth: Annotated[
        str, typer.Option("--truth", help="labels (a blind labeller's) or construction (the generator's).")
    ] = "labels",
    development: DevOption = False,
    fmt: FormatOption = EvalFormat.text,
) -> None:
    """Score the verdict on a sealed blind set by class: top-1 class, io_matters (true/false/unknown), precision
    and recall of critical+warning; Drishti beside it with --drishti. The first scoring is kept in
    FIRST_SIGHT.<truth>.json and never overwritten: later runs say they are re-scores.

    Exits 0 when the set was scored, 2 on bad input (unsealed set, a file changed after sealing).
    """
    from iodiag.evals.blind import run_blind
    from iodiag.evals.triggers import CorpusError

    peer = _drishti_runner(drishti) if drishti is not None else None
    _run_eval(
        lambda progress: run_blind(folder, peer, progress, truth=truth, development=development),
        fmt,
        "analyzing",
        json_text=lambda r: r.model_dump_json(indent=1) + "\n",
        print_text=_print_blind,
        passed=lambda r: not any(c.error for c in r.cases),
        usage_errors=(CorpusError,),
    )


def _drishti_runner(exe: Path) -> Callable[[Path], str | None]:
    import subprocess
    import tempfile

    def run(log: Path) -> str | None:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [str(exe.resolve()), "--csv", "--export_dir", tmp, str(log.resolve())],
                cwd=tmp,
                capture_output=True,
                timeout=300,
                check=False,
            )
            found = sorted(Path(tmp).rglob("*.csv"))
            return found[0].read_text() if found else None

    return run


def _print_blind(result: object, console: Console) -> None:

    from iodiag.evals.blind import BlindScore, summary_rows

    assert isinstance(result, BlindScore)
    when = _scoring_state(result.first_sight, result.seal)
    table = results_table(
        f"Blind set {result.set}, truth: {result.truth} ({when}; seal {result.seal[:12]})",
        ("tool", "cases", "top-1 class", "io_matters", "precision", "recall", "F1"),
    )
    for row in summary_rows(result):
        table.add_row(*row)
    console.print(table)
    per = results_table(
        "Precision / recall of critical+warning, per class",
        ["class", *(f"{t.tool} {m}" for t in result.tools for m in ("P", "R"))],
    )
    classes = sorted({c for t in result.tools for c in t.per_class})
    for cls in classes:
        cells: list[str] = []
        for t in result.tools:
            scores = t.per_class.get(cls, {})
            cells += [_ratio_text(scores.get("precision")), _ratio_text(scores.get("recall"))]
        per.add_row(cls, *cells)
    console.print(per)
    for c in result.cases:
        p = c.iodiag
        if c.error or p is None:
            console.print(f"  {c.case}: error: {c.error}")
        elif p.top_class != c.truth.top_class or p.io_matters != c.truth.io_matters:
            console.print(
                f"  {c.case}: top {p.top_class} (truth {c.truth.top_class}), io_matters {p.io_matters} "
                f"(truth {c.truth.io_matters})"
            )


def questions(
    folder: Annotated[Path, typer.Argument(help="A question set: evals/questions/<set>/ (questions.yaml, SEAL).")],
    route: Annotated[
        str, typer.Option("--route", help="default (the service's own, model if configured) or template.")
    ] = "default",
    development: DevOption = False,
    fmt: FormatOption = EvalFormat.text,
) -> None:
    """Score answers to a blind question set: answered in the first sentence, every fact right, wrong claims,
    actions where one is due, latency. The first scoring is kept in FIRST_SIGHT.<route>.json, never overwritten.

    Exits 0 when the set was scored, 2 on bad input (unsealed set, a file changed after sealing).
    """
    from iodiag.evals.questions import run_questions
    from iodiag.evals.triggers import CorpusError

    if route not in ("default", "template"):
        raise typer.BadParameter("--route is default or template")
    _run_eval(
        lambda progress: run_questions(folder, route, progress, development=development),
        fmt,
        "asking",
        json_text=lambda r: r.model_dump_json(indent=1) + "\n",
        print_text=_print_questions,
        passed=lambda r: not any(c.error for c in r.cases),
        usage_errors=(CorpusError,),
    )


def _print_questions(result: object, console: Console) -> None:

    from iodiag.evals.questions import QuestionScore

    assert isinstance(result, QuestionScore)
    when = _scoring_state(result.first_sight, result.seal)
    table = results_table(f"Questions {result.set}, route {result.route} ({when})", ("measure", "value"))
    table.add_row("questions", str(result.questions))
    table.add_row("answered in the first sentence", f"{result.first_sentence:.1%}")
    table.add_row("every fact right", f"{result.facts_right:.1%}")
    table.add_row("answers with a wrong claim", str(result.wrong_answers))
    table.add_row(
        f"actions right ({result.actions_due} due)",
        f"{result.actions_right:.1%}" if result.actions_right is not None else "n/a",
    )
    table.add_row("median answer", f"{result.median_s:.2f} s")
    console.print(table)
    for c in result.cases:
        if c.error:
            console.print(f"  {c.id}: error: {c.error}")
        elif not (c.first_ok and c.facts_ok) or c.wrong or c.action_ok is False:
            console.print(f"  {c.id}: {c.question!r}: missing {c.missing} wrong {c.wrong} action {c.action_ok}")


def _scoring_state(first_sight: bool, seal: str) -> str:
    """How a sealed-set score reads: the one first sight, a development set, or a re-score."""
    if first_sight:
        return "first sight"
    if seal.startswith("development"):
        return "development set"
    return "RE-SCORE (the first-sight numbers are in FIRST_SIGHT.*.json)"


def _ratio_text(x: object) -> str:
    return f"{x:.2f}" if isinstance(x, float) else "n/a"


def register(app: typer.Typer) -> None:
    """Add the ``eval`` command group to ``app``."""
    eval_app = command_group(app, "eval", "Evaluate iodiag against ground truth (labeled scenario logs).")
    eval_app.command("triggers")(triggers)
    eval_app.command("answers")(answers)
    eval_app.command("ranking")(ranking)
    eval_app.command("compare")(compare_pairs)
    eval_app.command("history")(history_series)
    eval_app.command("intents")(intents)
    eval_app.command("blind")(blind)
    eval_app.command("questions")(questions)
    # The same scorer as ``iodiag knowledge eval``, listed with the other evals.
    eval_app.command("retrieval")(knowledge_evaluate)
