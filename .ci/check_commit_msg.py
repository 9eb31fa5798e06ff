"""The commit-message check (pre-commit's commit-msg stage): a subject of at most 72 characters that says what
changed, then, if there is more, a blank line and a body that says why. Exit 1 with one line per problem."""

from __future__ import annotations

import sys
from pathlib import Path

MAX_SUBJECT = 72


def problems(message: str) -> list[str]:
    # git's own comment lines (the editor template) are not part of the message
    lines = [ln.rstrip() for ln in message.splitlines() if not ln.startswith("#")]
    while lines and not lines[-1]:
        lines.pop()
    if not lines or not lines[0].strip():
        return ["the subject line is empty"]
    out = []
    subject = lines[0]
    if len(subject) > MAX_SUBJECT:
        out.append(f"the subject is {len(subject)} characters; keep it to {MAX_SUBJECT} and put the why in the body")
    if subject.endswith("."):
        out.append("the subject ends with a period")
    if len(lines) > 1 and lines[1].strip():
        out.append("the subject and the body need a blank line between them")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: check_commit_msg.py COMMIT_MSG_FILE", file=sys.stderr)
        return 2
    found = problems(Path(argv[1]).read_text(encoding="utf-8", errors="replace"))
    for p in found:
        print(f"commit message: {p}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
