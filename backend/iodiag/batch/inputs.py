"""The logs a batch runs on: directories, glob patterns and files, expanded, hashed and de-duplicated."""

from __future__ import annotations

import glob
import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

_CHUNK = 1 << 20
_GLOB_CHARS = frozenset("*?[")


class InputError(ValueError):
    """A bad argument: a path that does not exist, or a pattern that matches nothing."""


@dataclass(frozen=True)
class LogItem:
    path: Path
    sha256: str | None = None
    size: int = 0
    error: str | None = None  # the file could not be read (no hash)
    members: tuple[Path, ...] = ()  # a combined job: every log of it (``path`` is the first)


def expand(args: Iterable[str]) -> list[Path]:
    """Every log the arguments name, in a stable order, each file once.

    A directory gives every ``*.darshan`` file under it (recursively: the facility log tree is dated
    directories); a pattern with ``*``, ``?`` or ``[`` is a glob (``**`` crosses directories); anything
    else must be an existing file, whatever its name.
    """
    out: list[Path] = []
    seen: set[Path] = set()

    def add(p: Path) -> None:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            out.append(p)

    for arg in args:
        path = Path(arg)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.darshan") if p.is_file())
            for p in found:
                add(p)
        elif _GLOB_CHARS & set(arg):
            matches = sorted(glob.glob(arg, recursive=True))
            files = [Path(m) for m in matches if Path(m).is_file()]
            dirs = [Path(m) for m in matches if Path(m).is_dir()]
            for d in dirs:
                files.extend(sorted(p for p in d.rglob("*.darshan") if p.is_file()))
            if not files:
                raise InputError(f"{arg}: the pattern matches no file")
            for p in files:
                add(p)
        elif path.is_file():
            add(path)
        elif path.exists():
            raise InputError(f"{arg}: not a file or directory")
        else:
            raise InputError(f"{arg}: no such file or directory")
    return out


def sha256_file(path: Path) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def hash_all(paths: list[Path], on_each: Callable[[], None] | None = None) -> list[LogItem]:
    items: list[LogItem] = []
    for p in paths:
        try:
            sha, size = sha256_file(p)
            items.append(LogItem(p, sha, size))
        except OSError as exc:
            items.append(LogItem(p, error=f"cannot read file ({exc.strerror or exc})"))
        if on_each is not None:
            on_each()
    return items


def unique(items: list[LogItem]) -> tuple[list[LogItem], int]:
    """Byte-identical logs are one job: keep the first path of each content; returns how many were dropped."""
    seen: set[str] = set()
    out: list[LogItem] = []
    for it in items:
        if it.sha256 is not None:
            if it.sha256 in seen:
                continue
            seen.add(it.sha256)
        out.append(it)
    return out, len(items) - len(out)


# Darshan's own log names: USER_EXE_idJOBID-PID_MONTH-DAY-SECONDS-HASH_N.darshan. Logs of one job (one per
# process of a Python job, one per step of a workflow script) share the user and the job id.
_DARSHAN_NAME = re.compile(r"^(?P<user>[^_]+)_.+_id(?P<jobid>\d+)-\d+_")


def job_key(path: Path) -> tuple[str, str] | None:
    """(user, job id) from a log's standard Darshan name; None for other names and job id 0."""
    m = _DARSHAN_NAME.match(path.name)
    if m is None or int(m["jobid"]) == 0:
        return None
    return m["user"], m["jobid"]


def combined_sha(shas: Iterable[str]) -> str:
    """The content key of a combined job: the same logs give the same key, whatever their order."""
    return hashlib.sha256("\n".join(sorted(shas)).encode()).hexdigest()


def group_jobs(items: list[LogItem]) -> tuple[list[LogItem], int]:
    """Logs with the same (user, job id) in their Darshan names become one combined item; returns the items
    and how many jobs were combined. Unreadable logs, other names and jobs of one log stay as they are."""
    groups: dict[tuple[str, str], list[LogItem]] = {}
    out: list[LogItem | tuple[str, str]] = []
    for it in items:
        key = job_key(it.path) if it.sha256 is not None else None
        if key is None:
            out.append(it)
            continue
        if key not in groups:
            groups[key] = []
            out.append(key)
        groups[key].append(it)
    result: list[LogItem] = []
    combined = 0
    for entry in out:
        if isinstance(entry, LogItem):
            result.append(entry)
            continue
        members = groups[entry]
        if len(members) == 1:
            result.append(members[0])
            continue
        combined += 1
        result.append(
            LogItem(
                path=members[0].path,
                sha256=combined_sha(m.sha256 for m in members if m.sha256 is not None),
                size=sum(m.size for m in members),
                members=tuple(m.path for m in members),
            )
        )
    return result, combined
