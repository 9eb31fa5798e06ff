"""``iodiag ask LOG [QUESTION]``: ask about a job in plain words; without a question, the job is explained.

The answer streams to the terminal (provisional while the model writes, replaced by the checked answer if
the verifier changes it), then a line saying where it came from (model, repaired, template) and its sources.

``register`` adds it to the app; the narration layer (and the model) load inside the command.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from iodiag.cli.common import EXIT_OK, EXIT_USAGE, CliError, error_line, fail, quiet_broken_pipe, stdout_console

if TYPE_CHECKING:
    from iodiag.narration.models import Answer, AnswerChunk


def ask(
    log: Annotated[Path, typer.Argument(help="The job's Darshan log (.darshan).", show_default=False, metavar="LOG")],
    question: Annotated[
        str | None,
        typer.Argument(help="Your question; leave it out to have the job explained.", show_default=False),
    ] = None,
    no_model: Annotated[
        bool, typer.Option("--no-model", help="Answer from templates only: no language model, instant.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the checked answer as JSON (no streaming).")] = False,
    previous: Annotated[
        Path | None,
        typer.Option(
            "--previous",
            help="An earlier run's log: questions like 'did my change help?' are answered by comparing with it.",
            show_default=False,
            metavar="LOG",
        ),
    ] = None,
) -> None:
    """Ask a question about a job's I/O, answered from its findings and the tuning documents.

    Every number, file, rank, finding code and document in the answer is checked against the report; what
    cannot be checked is removed, and if too little is left the answer is written from templates instead.
    """
    try:
        code = _ask(log, question or "", no_model, as_json, previous)
    except typer.Exit:
        raise
    except BrokenPipeError:
        quiet_broken_pipe()
        raise typer.Exit(EXIT_OK) from None
    except Exception as exc:
        fail(exc)
    raise typer.Exit(code)


def _ask(log: Path, question: str, no_model: bool, as_json: bool, previous: Path | None = None) -> int:
    from iodiag.analysis import analyze
    from iodiag.core.settings import get_settings
    from iodiag.ingest import LogReadError, load_profile
    from iodiag.narration.service import Narrator

    try:
        report = analyze(load_profile(str(log), include=("HEATMAP",)))
        earlier = analyze(load_profile(str(previous), include=("HEATMAP",))) if previous is not None else None
    except LogReadError as exc:
        error_line(str(exc))
        return EXIT_USAGE
    comparison = None
    if earlier is not None:
        from iodiag.comparison import NotComparable, compare

        try:
            comparison = compare(earlier, report)
        except NotComparable as exc:
            raise CliError(f"--previous {previous}: {exc}") from None
    settings = get_settings()
    if no_model:
        settings = settings.model_copy(update={"llm_provider": "none"})
    try:
        narrator = Narrator(settings)
    except ValueError as exc:  # a broken prompts directory
        raise CliError(str(exc)) from None
    chunks = narrator.answer(
        report, question, comparison=comparison, previous_start=earlier.job.start if earlier is not None else None
    )
    if as_json:
        answer = _final(chunks)
        sys.stdout.write(answer.model_dump_json(indent=2) + "\n")
        sys.stdout.flush()
        return EXIT_OK
    console = stdout_console()
    answer = _stream(chunks, console) if console.is_terminal else _final(chunks)
    if console.is_terminal:
        from rich.markdown import Markdown  # markdown-it loads only when a terminal shows the answer

        console.print(Markdown(answer.text))
    else:  # unwrapped, so a long file name stays one string for whoever reads the output
        console.print(Text(answer.text), soft_wrap=True)
    console.print(_footer(answer), soft_wrap=True)
    return EXIT_OK


def _final(chunks: Iterator[AnswerChunk]) -> Answer:
    for chunk in chunks:
        if chunk.final and chunk.answer is not None:
            return chunk.answer
    raise RuntimeError("the narrator ended without an answer")


def _stream(chunks: Iterator[AnswerChunk], console: Console) -> Answer:
    """Show the provisional text as it arrives (dimmed); return the checked answer."""
    from rich.console import Group
    from rich.live import Live

    draft = ""
    with Live(Text(""), console=console, transient=True, auto_refresh=False) as live:
        for chunk in chunks:
            draft += chunk.delta
            if chunk.final and chunk.answer is not None:
                return chunk.answer
            live.update(Group(Text(draft, style="dim"), Text("… checking", style="dim italic")), refresh=True)
    raise RuntimeError("the narrator ended without an answer")


def _footer(answer: Answer) -> Text:
    v = answer.verifier
    if answer.provenance == "template":
        where = "template answer"
        if v.attempts:
            where += f" (the model's draft{'s' if v.attempts > 1 else ''} failed verification)"
            if answer.note and "verification" not in answer.note:
                where = f"template answer ({answer.note})"
        elif answer.note:
            where += f" ({answer.note})"
    elif answer.provenance == "model-repaired":
        where = f"{answer.model}, checked: {v.sentences_removed} unsupported sentence(s) removed"
        if v.attempts > 1:
            where += ", second draft"
    else:
        where = f"{answer.model}, checked: every claim found in the report or the documents"
    caught = len(v.violations) if answer.provenance != "model" else 0
    line = Text.assemble(("— ", "dim"), (where, "bold"), (f" · {answer.elapsed_s:.1f} s", "dim"))
    if caught:
        line.append(f" · {caught} problem(s) caught", style="dim")
    if answer.citations:
        line.append("\nSources: ", style="bold")
        line.append("; ".join(f"[{c.id}] {c.title}".strip() for c in answer.citations))
    return line


def register(app: typer.Typer) -> None:
    app.command()(ask)
