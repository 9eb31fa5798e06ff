"""Shell words from untrusted text: the one quoting function every command with a log path goes through.

A file name in a Darshan log is whatever the job's user called it: spaces, quotes (``it's.h5``), ``$``,
backticks, ``;``, newlines and any Unicode. A command we print must be pasteable into a POSIX shell and
give back exactly that name as one word, without expanding or running anything.
"""

from __future__ import annotations

import shlex

__all__ = ["expands_outside_quotes", "shell_quote"]


def shell_quote(arg: str) -> str:
    """``arg`` as one POSIX ``sh`` word that expands to exactly ``arg``.

    ``shlex.quote`` semantics: safe words stay bare; anything else goes in single quotes, inside which the
    shell takes every character literally (``$``, backticks, backslashes, newlines), and each single quote
    of ``arg`` closes the quotes, adds a double-quoted ``'`` and reopens them (``'it'"'"'s.h5'``). One
    function, so that the commands and the safety check that looks for quoted paths agree on the form.
    """
    return shlex.quote(arg)


def expands_outside_quotes(command: str) -> bool:
    """Whether a POSIX shell would expand ``$`` or a backtick in ``command``: one outside quotes, or inside
    double quotes (where the shell still expands them); single-quoted ones and backslash-escaped ones are
    literal.

    Tracks single quotes, double quotes and backslashes as the shell does, so the ``'"'"'`` that
    ``shell_quote`` puts for a quote in a path does not read as the end of the quoting (which would make a
    ``$`` later in the same path look live).
    """
    state = ""  # "" outside quotes, "'" inside single quotes, '"' inside double quotes
    i = 0
    while i < len(command):
        ch = command[i]
        if state == "'":
            if ch == "'":
                state = ""
        elif ch == "\\":
            i += 1  # the next character is literal (inside double quotes too, for the ones that matter here)
        elif ch in "$`":
            return True
        elif ch == '"':
            state = "" if state == '"' else '"'
        elif ch == "'" and state == "":
            state = "'"
        i += 1
    return False
