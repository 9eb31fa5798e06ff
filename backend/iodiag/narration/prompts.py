"""Versioned prompt templates and the template route's phrase book, loaded by name from ``prompts/``.

A prompt is ``prompts/<name>.v<version>.md``: YAML front matter (``name``, ``version``, ``inputs``), then
the text, with ``{{input}}`` placeholders. Loading by name takes the highest version unless one is asked
for. Every failure names the file and what is wrong: a missing template, a placeholder that is not a
declared input (or the reverse), a render call that leaves an input out or passes an unknown one.

The phrase book (``prompts/phrases.v<version>.yaml``) holds every sentence the template route writes:
why each finding matters, each recommendation's fix per I/O library and file system, and the
connecting sentences of each answer kind.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

_FILE = re.compile(r"^(?P<name>[a-z][a-z0-9-]*)\.v(?P<version>\d+)\.(?P<ext>md|yaml)$")
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")
# {{#name}} ... {{/name}}: text shown only when input ``name`` is not empty (an empty section would only
# distract a small model).
_SECTION = re.compile(r"\{\{#([a-z_][a-z0-9_]*)\}\}(.*?)\{\{/\1\}\}\n?", re.DOTALL)
_BRACES = re.compile(r"\{\{|\}\}")


class PromptError(ValueError):
    """A prompt template that cannot be loaded or rendered; the message says which and why."""


class PromptMeta(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    version: int = Field(ge=1)
    inputs: tuple[str, ...] = ()
    description: str = ""


class PromptTemplate(BaseModel):
    model_config = ConfigDict(frozen=True)

    meta: PromptMeta
    path: Path
    body: str

    @property
    def id(self) -> str:
        return f"{self.meta.name}.v{self.meta.version}"

    def render(self, **inputs: str) -> str:
        missing = [k for k in self.meta.inputs if k not in inputs]
        unknown = sorted(set(inputs) - set(self.meta.inputs))
        if missing:
            raise PromptError(f"prompt {self.id}: missing input(s) {', '.join(missing)}")
        if unknown:
            raise PromptError(f"prompt {self.id}: unknown input(s) {', '.join(unknown)}")
        body = _SECTION.sub(lambda m: m.group(2) if inputs[m.group(1)].strip() else "", self.body)
        # One pass, so text substituted in (which may hold "{{" from a log) is never expanded again.
        return _PLACEHOLDER.sub(lambda m: inputs[m.group(1)], body).strip() + "\n"


def _split_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise PromptError(f"{path}: no front matter (the file must start with a '---' line)")
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            try:
                front = yaml.safe_load("".join(lines[1:i])) or {}
            except yaml.YAMLError as exc:
                raise PromptError(f"{path}: invalid front matter ({' '.join(str(exc).split())})") from None
            if not isinstance(front, dict):
                raise PromptError(f"{path}: front matter must be a mapping")
            return front, "".join(lines[i + 1 :])
    raise PromptError(f"{path}: front matter is not closed by a '---' line")


def load_template(path: Path) -> PromptTemplate:
    m = _FILE.match(path.name)
    if m is None or m.group("ext") != "md":
        raise PromptError(f"{path}: a prompt file is named NAME.vN.md")
    try:
        front, body = _split_front_matter(path.read_text(encoding="utf-8"), path)
        meta = PromptMeta.model_validate(front)
    except OSError as exc:
        raise PromptError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except ValidationError as exc:
        what = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'front matter'}: {e['msg']}" for e in exc.errors())
        raise PromptError(f"{path}: {what}") from None
    if meta.name != m.group("name") or meta.version != int(m.group("version")):
        raise PromptError(f"{path}: front matter says {meta.name}.v{meta.version}, the file name disagrees")
    sections = _SECTION.findall(body)
    flat = _SECTION.sub(lambda m: m.group(2), body)
    used = set(_PLACEHOLDER.findall(flat)) | {name for name, _ in sections}
    if used != set(meta.inputs):
        raise PromptError(f"{path}: placeholders {sorted(used)} do not match the declared inputs {sorted(meta.inputs)}")
    if _BRACES.search(_PLACEHOLDER.sub("", flat)):
        raise PromptError(f"{path}: stray '{{{{' or '}}}}' outside a placeholder or an unclosed section")
    return PromptTemplate(meta=meta, path=path, body=body)


class PromptLibrary:
    """The templates of one prompts directory, read once."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._cache: dict[tuple[str, int | None], PromptTemplate] = {}

    def _versions(self, name: str, ext: str) -> dict[int, Path]:
        out = {}
        for p in self.directory.glob(f"{name}.v*.{ext}"):
            m = _FILE.match(p.name)
            if m and m.group("name") == name:
                out[int(m.group("version"))] = p
        return out

    def _pick(self, name: str, version: int | None, ext: str) -> Path:
        if not self.directory.is_dir():
            raise PromptError(f"{self.directory}: no prompts directory")
        versions = self._versions(name, ext)
        if not versions:
            have = sorted({m.group("name") for p in self.directory.iterdir() if (m := _FILE.match(p.name))})
            raise PromptError(f"no prompt '{name}' in {self.directory} (have: {', '.join(have) or 'none'})")
        if version is None:
            return versions[max(versions)]
        if version not in versions:
            raise PromptError(f"no version {version} of prompt '{name}' in {self.directory}")
        return versions[version]

    def get(self, name: str, version: int | None = None) -> PromptTemplate:
        key = (name, version)
        if key not in self._cache:
            self._cache[key] = load_template(self._pick(name, version, "md"))
        return self._cache[key]

    def render(self, name: str, **inputs: str) -> str:
        return self.get(name).render(**inputs)

    def phrases(self, version: int | None = None) -> Phrasebook:
        return _load_phrasebook(self._pick("phrases", version, "yaml"))


# --- the template route's phrase book ------------------------------------------------------------


class FixText(BaseModel):
    """A recommendation's fix, worded for the user's I/O library and file system (most specific wins)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    default: str
    posix: str | None = None
    stdio: str | None = None
    daos: str | None = None  # DAOS through its DFS API: no POSIX or STDIO call to change
    mpiio: str | None = None
    hdf5: str | None = None
    pnetcdf: str | None = None
    lustre: str | None = None
    gpfs: str | None = None
    single: str | None = None  # one process, or a data loader's processes that share no communicator

    def pick(self, contexts: list[str]) -> str:
        for c in contexts:
            text: str | None = getattr(self, c, None)
            if text:
                return text
        return self.default


class FacilityPath(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    prefix: str
    facility: str
    system: str


class Phrasebook(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    version: int
    why: dict[str, str]  # finding code -> why it matters
    fixes: dict[str, FixText]  # recommendation id -> the fix
    facilities: dict[str, tuple[str, ...]]  # facility -> words that name it in a question
    facility_paths: tuple[FacilityPath, ...] = ()  # where a path says which facility ran the job
    say: dict[str, str]  # the connecting sentences, with {placeholders} filled by templates.py
    examples_path: Path | None = None  # labelled questions beside it (intent_examples.py); set on load

    def sentence(self, key: str, **values: object) -> str:
        try:
            text = self.say[key]
        except KeyError:
            raise PromptError(f"phrase book {self.name}.v{self.version}: no sentence '{key}'") from None
        try:
            return text.format(**values)
        except (KeyError, IndexError) as exc:
            raise PromptError(f"phrase book sentence '{key}': missing value {exc}") from None


@lru_cache(maxsize=8)
def _load_phrasebook(path: Path) -> Phrasebook:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PromptError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise PromptError(f"{path}: invalid YAML ({' '.join(str(exc).split())})") from None
    try:
        book = Phrasebook.model_validate(data)
    except ValidationError as exc:
        what = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        raise PromptError(f"{path}: {what}") from None
    m = _FILE.match(path.name)
    if m and (book.name != m.group("name") or book.version != int(m.group("version"))):
        raise PromptError(f"{path}: it says {book.name}.v{book.version}, the file name disagrees")
    return book.model_copy(update={"examples_path": path.parent / f"intent-examples.v{book.version}.yaml"})
