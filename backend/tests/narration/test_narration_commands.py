"""Commands in chat answers are pasteable: the template route shows a command exactly, in a code span whose
fence outlasts the backticks inside it, even when the path it names holds a quote (``it's``), backticks or
``$``; it is never cleaned into single quotes that the path's own quote breaks."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from iodiag.analysis.models import Report
from iodiag.analysis.outcomes.shell import shell_quote
from iodiag.narration.checking.untrusted import UNSHOWN_COMMAND, quote_command, quoted_spans, strip_quoted
from iodiag.narration.models import Answer
from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import knowledge, template_settings
from tests.render.test_commands import hostile_report, md_codes

DIRS = ["/lus/scratch/it's", "/lus/scratch/a `id`  b $HOME", "/lus/scratch/x'$(reboot)'y <b>"]


@pytest.fixture(scope="module")
def narrator() -> Narrator:
    return Narrator(template_settings(), knowledge=knowledge())


def ask(narrator: Narrator, rep: Report, question: str) -> Answer:
    chunks = list(narrator.answer(rep, question, []))
    answer = chunks[-1].answer
    assert answer is not None and answer.provenance == "template"
    assert answer.verifier.passed, answer.verifier.violations
    return answer


def lfs_commands(text: str) -> list[str]:
    """The lfs commands in an answer, as a Markdown reader (the web UI, a pasted ticket) sees its code."""
    return [c for c in md_codes(text) if c.startswith("lfs setstripe")]


@pytest.mark.parametrize("directory", DIRS, ids=["quote", "backticks", "substitution"])
def test_the_chat_gives_a_pasteable_command_for_a_path_with_a_quote(
    narrator: Narrator, tmp_path: Path, directory: str
) -> None:
    rep = hostile_report(tmp_path, directory)
    for question in ("Why is my job slow?", "What exact lfs command should I run?", "How do I fix it?"):
        answer = ask(narrator, rep, question)
        commands = lfs_commands(answer.text)
        assert commands, (question, answer.text)
        for c in commands:
            assert shlex.split(c)[-1] == directory, (question, c)
        # The old form: the verdict's command cleaned into single quotes, which the path's quote closes.
        assert f"'lfs setstripe -c 4 -S 1M {shell_quote(directory)}'" not in answer.text


def test_quote_command_fences_and_quoted_spans_read_it_back() -> None:
    for cmd in ("lfs setstripe -c 4 /x", "lfs setstripe '/a `b`  c'", "lfs setstripe '/a ``b`` `c`'"):
        span = quote_command(cmd, 300)
        assert quoted_spans(f"Run {span} now.") == [cmd]
        assert strip_quoted(f"Run {span} now.") == "Run   now."
    assert quote_command("a `b`", 300) == "`` a `b` ``"  # ends with a backtick: padded, one space each side
    # A command that no line can show exactly, or one too long for a prompt, is cleaned and says so.
    shown = quote_command("lfs setstripe '/a\nb'", 300)
    assert UNSHOWN_COMMAND in shown and "\n" not in shown
    assert UNSHOWN_COMMAND in quote_command("lfs setstripe /" + "x" * 400, 300)
    # Single-backtick spans read as before.
    assert quoted_spans("a `x` and `y z`.") == ["x", "y z"]
