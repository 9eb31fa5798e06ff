"""Commands with a log path are pasteable into a POSIX shell whatever the path holds: for paths made of
arbitrary text (quotes, spaces, ``$``, backticks, newlines, any Unicode), the command the analysis writes
parses back (shlex, and bash itself for a sample) to exactly that path as one word, and the action safety
check keeps it."""

from __future__ import annotations

import posixpath
import shlex
import subprocess

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from iodiag.analysis.models import Action, Layer
from iodiag.analysis.outcomes.action_safety import ActionFacts, check_action, facts_for, layout_action
from iodiag.analysis.outcomes.actions import lustre_layouts
from iodiag.analysis.outcomes.shell import expands_outside_quotes, shell_quote
from iodiag.analysis.views.context import Context
from tests.profiles import MiB, make_profile

MOUNTS = (("/", "rootfs"), ("/lus", "lustre"))
# One segment of a path: any text but the separator and NUL (which no POSIX path holds).
SEGMENT = st.text(st.characters(exclude_characters="/\x00", exclude_categories=("Cs",)), min_size=1, max_size=40)
HOSTILE = [
    "it's",
    "a b  c",
    "$HOME",
    "`reboot`",
    "x'$(id)'y",
    'say "hi"',
    "line\nbreak",
    "tab\there",
    "semi; rm -rf ~",
    "\\back\\slash\\",
    "'",
    "''",
    "-c",
    "*?[a]",
    "ünï côdé ✓ 日本",
    "\u202eevil",  # a bidi override
    "!bang",
    "~user",
    "#comment",
]


def _lustre_command(directory: str) -> str | None:
    """The layout command the analysis writes for a 64-rank shared file in ``directory`` on one OST."""
    px = {"id": 1, "rank": -1, "POSIX_WRITES": 512, "POSIX_BYTES_WRITTEN": 512 * 16 * MiB}
    px |= {"POSIX_ACCESS1_ACCESS": 16 * MiB, "POSIX_ACCESS1_COUNT": 512}
    lu = {"id": 1, "rank": -1, "stripe_size": MiB, "stripe_count": 1, "osts": (7,)}
    path = f"{directory}/out.h5"
    profile = make_profile({"POSIX": [px], "LUSTRE": [lu]}, nprocs=64, names={1: path}, mounts=MOUNTS)
    ctx = Context(profile)
    (lay,) = lustre_layouts(ctx)
    if lay.command is not None:
        assert not check_action(layout_action(lay.command), facts_for(ctx, Layer.LUSTRE), first=True)
    return lay.command


def _bash_words(command: str) -> list[str]:
    """What bash makes of ``command``'s words: each printed by printf, NUL-separated so a word may hold a
    newline."""
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", f"printf '%s\\0' {command}"],
        capture_output=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": "/nonexistent"},
    )
    return done.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=60))
@example("it's.h5")
@example('a\'$b `c` "d"\n e')
def test_a_quoted_word_reads_back_as_itself(path: str) -> None:
    quoted = shell_quote(path)
    assert shlex.split(f"lfs setstripe -c 4 {quoted}") == ["lfs", "setstripe", "-c", "4", path]
    assert not expands_outside_quotes(quoted)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SEGMENT, min_size=1, max_size=3))
def test_the_layout_command_for_any_directory_gives_it_back(segments: list[str]) -> None:
    assume(not any(s in (".", "..") for s in segments))  # would name another directory
    directory = "/lus/scratch/" + "/".join(segments)
    command = _lustre_command(directory)
    assert command is not None, directory  # a strange name still gets its command
    words = shlex.split(command)
    assert words[:2] == ["lfs", "setstripe"] and words[-1] == directory


@pytest.mark.parametrize("name", HOSTILE)
def test_bash_itself_reads_the_layout_command_back(name: str) -> None:
    directory = f"/lus/scratch/{name}"
    command = _lustre_command(directory)
    assert command is not None
    words = _bash_words(command)
    assert words[-1] == directory and len(words) == len(shlex.split(command)), words


@settings(max_examples=40, deadline=None)
@given(st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), min_size=1, max_size=30))
def test_bash_agrees_with_shlex_on_a_sample(path: str) -> None:
    command = f"tar -cf inputs.tar -C {shell_quote(path)} ."
    assert _bash_words(command) == shlex.split(command) == ["tar", "-cf", "inputs.tar", "-C", path, "."]


def test_expansion_is_seen_only_where_the_shell_expands() -> None:
    assert expands_outside_quotes("echo $HOME")
    assert expands_outside_quotes("echo `id`")
    assert expands_outside_quotes('echo "$HOME"')  # double quotes still expand
    assert expands_outside_quotes("echo 'a'\"$b\"")
    assert not expands_outside_quotes("echo '$HOME `id`'")
    assert not expands_outside_quotes("echo \\$HOME")
    assert not expands_outside_quotes('export MPICH_MPIIO_HINTS="*:romio_cb_write=enable"')
    # The form shell_quote gives a quote in a path: the $ after it is still inside single quotes.
    quoted = shell_quote(posixpath.join("/lus", "it's $HOME"))
    assert quoted == "'/lus/it'\"'\"'s $HOME'" and not expands_outside_quotes(f"lfs setstripe -c 4 {quoted}")


def test_a_path_with_a_quote_and_a_dollar_keeps_its_action() -> None:
    """The safety check used to read ``'"'"'`` as the end of the quoting and drop such a path's command."""
    path = "/lus/scratch/it's $HOME"
    facts = ActionFacts(job_dirs=frozenset({path}), files_per_dir={path: 1}, lustre=True)
    action = Action(
        recommendation="lustre-stripe-count",
        command=f"lfs setstripe -c 4 -S 4M {shell_quote(path)}",
        where="shell, on the output directory before the job creates the file",
        effect="",
    )
    assert not check_action(action, facts)
    command = _lustre_command(path)
    assert command is not None and command.endswith(f" {shell_quote(path)}")
