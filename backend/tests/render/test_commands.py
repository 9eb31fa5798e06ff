"""Commands in the HTML and Markdown reports: shown as code (not as literal backticks, not escaped into
prose), exactly as they must be typed, and still pasteable when a path in them holds quotes, backticks,
``$``, markup or a line break; everything else from the log stays escaped. Also: no label of the header's
bar pictures runs past its picture."""

from __future__ import annotations

import html
import re
import shlex
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from iodiag.analysis import analyze
from iodiag.analysis.models import Report
from iodiag.analysis.outcomes.shell import shell_quote
from iodiag.ingest import load_profile
from iodiag.render.code import split_code
from iodiag.render.html import render_html
from iodiag.render.markdown import md_command, md_command_block, render_markdown
from iodiag.synth.build import build_log
from iodiag.synth.scenario import Scenario
from tests.conftest import REPO, shared_log, wheel_log

DRISHTI = shared_log("drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan")
FILL_TIME = "H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);"
INJECTION = REPO / "evals" / "answers" / "scenarios" / "injection-file-names.yaml"
HOSTILE_DIR = "/lus/scratch/it's <script>alert(1)</script> `id` $HOME &amp;  x"
CODE = re.compile(r'<code class="cmd">(.*?)</code>', re.S)
VERDICT = re.compile(r'<p class="verdict[^"]*">(.*?)</p>', re.S)


def hostile_log(tmp_path: Path, directory: str = HOSTILE_DIR) -> Path:
    """The answers eval's injection scenario with the shared file moved into ``directory`` and written in 1 MiB
    pieces: 16 ranks writing one shared file on one Lustre OST, so the headline's cause is L01 and both the
    headline and the L01 card carry an ``lfs setstripe`` command on the file's directory."""
    spec = yaml.safe_load(INJECTION.read_text())
    old = spec["files"][0]["path"]
    new = f"{directory}/out.h5"
    spec["files"][0]["path"] = new
    for step in spec["program"]:
        if step["file"] == old:
            step.update(file=new, size="1MiB", count=200, seconds_per_op=0.02)
    return build_log(Scenario.model_validate(spec), tmp_path / "hostile.darshan")


def hostile_report(tmp_path: Path, directory: str = HOSTILE_DIR) -> Report:
    return analyze(load_profile(str(hostile_log(tmp_path, directory))))


def commonmark(md: str) -> str:
    """Markdown as a CommonMark reader renders it, raw HTML allowed (so escaping is what keeps it out)."""
    return MarkdownIt("commonmark").render(md)


def md_codes(md: str) -> list[str]:
    """The text of every code span and code block a CommonMark reader finds (a block without its last newline)."""
    out = []
    for m in re.finditer(r"<code(?: class=\"[^\"]*\")?>(.*?)</code>", commonmark(md), re.S):
        out.append(html.unescape(m.group(1)))
    return [c[:-1] if c.endswith("\n") else c for c in out]


def lfs_target(command: str) -> str:
    words = shlex.split(command)
    assert words[:2] == ["lfs", "setstripe"], command
    return words[-1]


@pytest.fixture(scope="module")
def drishti() -> Report:
    return analyze(load_profile(str(DRISHTI)))


# --- a real log whose headline holds a command -------------------------------------------------------------


def test_html_headline_shows_the_command_as_code(drishti: Report) -> None:
    assert f"`{FILL_TIME}`" in drishti.verdict.headline  # the verdict writes it between backticks
    page = render_html(drishti)
    (verdict,) = VERDICT.findall(page)
    assert f'<code class="cmd">{html.escape(FILL_TIME)}</code>' in verdict
    assert "`" not in verdict  # no literal backticks left
    # The finding's card shows the same command as code, with what it does and where it goes.
    assert page.count(f'<code class="cmd">{html.escape(FILL_TIME)}</code>') >= 2
    assert "<p><strong>For this job:</strong></p>" in page


def test_markdown_headline_has_the_command_in_a_code_span(drishti: Report) -> None:
    md = render_markdown(drishti)
    headline = md.splitlines()[2]
    assert headline.startswith("**") and f"`{FILL_TIME}`" in headline
    assert "\\`" not in md  # backticks of real code spans are not escaped
    assert md_codes(md).count(FILL_TIME) >= 2  # the headline and the card's "For this job"
    assert "<em>" not in commonmark(headline)  # the escaping of the prose around it still holds


# --- a log whose file names hold markup, quotes, backticks, $ and a line break --------------------------


def test_hostile_path_stays_escaped_and_the_command_pasteable_in_html(tmp_path: Path) -> None:
    report = hostile_report(tmp_path)
    assert "`" in report.verdict.headline and shell_quote(HOSTILE_DIR) in report.verdict.headline
    page = render_html(report)
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    commands = [html.unescape(c) for c in CODE.findall(page)]
    lfs = [c for c in commands if c.startswith("lfs ")]
    assert len(lfs) >= 2  # the headline and the L01 card
    assert all(lfs_target(c) == HOSTILE_DIR for c in lfs)
    (verdict,) = VERDICT.findall(page)
    assert html.escape(shell_quote(HOSTILE_DIR)) in verdict  # one code element holds the whole command


def test_hostile_path_stays_escaped_and_the_command_pasteable_in_markdown(tmp_path: Path) -> None:
    report = hostile_report(tmp_path)
    md = render_markdown(report)
    rendered = commonmark(md)
    assert "<script" not in rendered and "&lt;script&gt;" in rendered
    lfs = [c for c in md_codes(md) if c.startswith("lfs ")]
    assert len(lfs) >= 2 and all(lfs_target(c) == HOSTILE_DIR for c in lfs), lfs
    # The span's fence is longer than the backticks in the path.
    assert f"``lfs setstripe -c 8 -S 1M {shell_quote(HOSTILE_DIR)}``" in md


def test_a_path_with_a_line_break_gets_its_command_as_a_block(tmp_path: Path) -> None:
    directory = "/lus/scratch/new\nline it's"
    report = hostile_report(tmp_path, directory)
    md = render_markdown(report)
    lfs = [c for c in md_codes(md) if c.startswith("lfs ")]
    assert len(lfs) >= 2 and all(lfs_target(c) == directory for c in lfs), lfs
    # In HTML the code element keeps the line break (white-space: pre-wrap), so a copy keeps it too.
    page = render_html(report)
    codes = [html.unescape(c) for c in CODE.findall(page)]
    assert any(lfs_target(c) == directory for c in codes if c.startswith("lfs "))
    assert "code.cmd { white-space: pre-wrap;" in page


# --- the pieces ----------------------------------------------------------------------------------------


def test_split_code_takes_known_commands_whole_and_log_text_as_prose() -> None:
    cmd = "lfs setstripe -c 4 '/lus/a `b` c'"
    text = f"on /lus/x`y for 4 writers: set `export A=1`, then `{cmd}`."
    assert split_code(text, [cmd], ["/lus/x`y"]) == [
        (False, "on /lus/x`y for 4 writers: set "),
        (True, "export A=1"),
        (False, ", then "),
        (True, cmd),
        (False, "."),
    ]
    # CommonMark's rule for the rest: runs of equal length pair up, an unmatched run is literal.
    assert split_code("a ``b`c`` d") == [(False, "a "), (True, "b`c"), (False, " d")]
    assert split_code("a ` b") == [(False, "a ` b")]
    assert split_code("`` `x` ``") == [(True, "`x`")]


def test_md_command_picks_the_fence_and_padding() -> None:
    assert md_command("lfs setstripe -c 4 /x") == "`lfs setstripe -c 4 /x`"
    assert md_command("a `b` c") == "``a `b` c``"
    assert md_command("a ``b`` `c`") == "``` a ``b`` `c` ```"  # ends with a backtick: padded (one space stripped)
    assert md_command("a\nb") is None
    for cmd in ("lfs setstripe '/a ``b`` `c`'", "`x`", "printf '%s' '$HOME'"):
        span = md_command(cmd)
        assert span is not None and md_codes(span) == [cmd]
    block = md_command_block("lfs setstripe '/a\n```\nb'")
    assert md_codes("\n".join(block)) == ["lfs setstripe '/a\n```\nb'"]


# --- labels inside their pictures ---------------------------------------------------------------------


def test_header_bar_labels_fit_their_picture() -> None:
    """sample-badost's "13.0 min (>99%)" ran 16 px past the 560 px picture, clipped to "13.0 min (>99"."""
    from tests.render.test_svg_plots import svg_text_overflows

    page = render_html(analyze(load_profile(str(wheel_log("sample-badost.darshan")))))
    assert ">13.0 min (&gt;99%)</text>" in page
    assert svg_text_overflows(page) == []


def test_names_in_backticks_in_finding_messages_show_as_code_in_both_exports() -> None:
    # J03 on a Python environment names its `*.pyc` files between backticks; the card's message shows them as
    # code in HTML and as a code span in Markdown, never as literal or escaped backticks
    rep = analyze(load_profile(str(shared_log("darshan-logs/hdf5_diagonal_write_only/hdf5_file_opens_only.darshan"))))
    storm = rep.finding("J03")
    assert storm is not None and "`*.pyc`" in storm.message
    page = render_html(rep)
    assert '<code class="cmd">*.pyc</code>' in page
    prose = re.sub(r"<code[^>]*>.*?</code>|<pre[^>]*>.*?</pre>|<script.*?</script>", "", page, flags=re.S)
    assert "`" not in prose
    md = render_markdown(rep)
    assert "`*.pyc`" in md and "\\`" not in md
    html_of_md = MarkdownIt().render(md)
    assert "<code>*.pyc</code>" in html_of_md
