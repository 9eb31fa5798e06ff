"""Read the Markdown tuning documents and cut them into sections to index.

A document is ``knowledge/docs/<id>.md``: YAML front matter (validated by :class:`DocMeta`), then
Markdown. Each ``##`` section becomes one chunk that carries the document title and the heading;
text before the first ``##`` becomes an "Overview" chunk. A section longer than
:data:`MAX_CHUNK_WORDS` is split on paragraph boundaries, because the embedder only sees the first
256 tokens of a chunk and a long section would be represented by its opening alone.

Chunk ids are ``<doc id>#<heading slug>`` (``-2``, ``-3`` for later parts of a split section or a
repeated heading), so they survive edits to other sections and other documents.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from iodiag.knowledge.models import DocMeta

MAX_CHUNK_WORDS = 350
# Bumped whenever chunking changes: it is part of every content hash, so the next build re-embeds.
CHUNKER_VERSION = "1"
OVERVIEW = "Overview"

_FENCE = re.compile(r"^\s*(```|~~~)")
_SLUG_DROP = re.compile(r"[^a-z0-9]+")


class DocError(ValueError):
    """A knowledge document that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    title: str
    heading: str
    text: str
    position: int

    def embedding_text(self) -> str:
        # The title and heading give a short section its context ("Stripe count" alone is vague).
        return f"{self.title}: {self.heading}\n{self.text}"


@dataclass(frozen=True)
class Doc:
    meta: DocMeta
    path: Path
    content_hash: str
    chunks: tuple[Chunk, ...]


def _split_front_matter(text: str, path: Path) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise DocError(f"{path}: no front matter (the file must start with a '---' line)")
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1 :])
    raise DocError(f"{path}: front matter is not closed by a '---' line")


def _field_errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(front matter)"
        parts.append(f"field '{where}': {err['msg']}")
    return "; ".join(parts)


def parse_meta(front: str, path: Path) -> DocMeta:
    try:
        raw = yaml.safe_load(front)
    except yaml.YAMLError as exc:
        raise DocError(f"{path}: front matter is not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(raw, dict):
        raise DocError(f"{path}: front matter must be a YAML mapping")
    try:
        meta = DocMeta.model_validate(raw)
    except ValidationError as exc:
        raise DocError(f"{path}: invalid front matter: {_field_errors(exc)}") from None
    if meta.id != path.stem:
        raise DocError(f"{path}: field 'id': '{meta.id}' does not match the file name '{path.stem}.md'")
    return meta


def slugify(heading: str) -> str:
    return _SLUG_DROP.sub("-", heading.lower()).strip("-") or "section"


def _sections(body: str) -> list[tuple[str, list[str]]]:
    """(heading, lines) per ``##`` section; a ``##`` inside a code fence is not a heading."""
    sections: list[tuple[str, list[str]]] = [(OVERVIEW, [])]
    in_fence = False
    for line in body.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        if not in_fence and line.startswith("## "):
            sections.append((line[3:].strip().rstrip("#").strip(), []))
        elif not in_fence and len(sections) == 1 and line.startswith("# ") and not "".join(sections[0][1]).strip():
            continue  # the document's own H1 repeats the title
        else:
            sections[-1][1].append(line)
    return [(h, lines) for h, lines in sections if "\n".join(lines).strip()]


def _paragraphs(lines: list[str]) -> list[str]:
    """Blank-line separated blocks; a code fence stays in one block whatever it contains."""
    paras: list[str] = []
    cur: list[str] = []
    in_fence = False
    for line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
        if not in_fence and not line.strip():
            if cur:
                paras.append("\n".join(cur))
                cur = []
        else:
            cur.append(line)
    if cur:
        paras.append("\n".join(cur))
    return paras


def _words(text: str) -> int:
    return len(text.split())


def _pack(paras: list[str], limit: int) -> list[str]:
    """Greedy packing of whole paragraphs into parts of at most ``limit`` words.

    A single paragraph over the limit is cut on word boundaries (losing its line breaks), since
    it cannot be split anywhere more natural.
    """
    pieces: list[str] = []
    for p in paras:
        if _words(p) <= limit:
            pieces.append(p)
        else:
            words = p.split()
            pieces.extend(" ".join(words[i : i + limit]) for i in range(0, len(words), limit))
    parts: list[str] = []
    cur: list[str] = []
    size = 0
    for p in pieces:
        n = _words(p)
        if cur and size + n > limit:
            parts.append("\n\n".join(cur))
            cur, size = [], 0
        cur.append(p)
        size += n
    if cur:
        parts.append("\n\n".join(cur))
    return parts


def chunk_body(doc_id: str, title: str, body: str, max_words: int = MAX_CHUNK_WORDS) -> tuple[Chunk, ...]:
    chunks: list[Chunk] = []
    used: set[str] = set()
    for heading, lines in _sections(body):
        base = f"{doc_id}#{slugify(heading)}"
        for part in _pack(_paragraphs(lines), max_words):
            cid, n = base, 1
            while cid in used:  # a later part, a repeated heading, or "Foo 2" after "Foo" part 2
                n += 1
                cid = f"{base}-{n}"
            used.add(cid)
            chunks.append(Chunk(cid, doc_id, title, heading, part.strip(), len(chunks)))
    return tuple(chunks)


def load_doc(path: Path) -> Doc:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DocError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")  # an editor's byte-order mark is not part of the front matter
    except UnicodeDecodeError:
        raise DocError(f"{path}: not UTF-8 text") from None
    front, body = _split_front_matter(text, path)
    meta = parse_meta(front, path)
    chunks = chunk_body(meta.id, meta.title, body)
    if not chunks:
        raise DocError(f"{path}: the document has no text after its front matter")
    digest = hashlib.sha256(CHUNKER_VERSION.encode() + b"\0" + raw).hexdigest()
    return Doc(meta, path, digest, chunks)


def scan_docs(directory: Path) -> tuple[list[Doc], list[str]]:
    """Every readable document, and one line per problem (bad document, duplicate id)."""
    if not directory.is_dir():
        return [], [f"{directory}: knowledge directory does not exist"]
    docs: list[Doc] = []
    problems: list[str] = []
    seen: dict[str, Path] = {}
    for path in sorted(directory.glob("*.md")):
        try:
            doc = load_doc(path)
        except DocError as exc:
            problems.append(str(exc))
            continue
        if doc.meta.id in seen:
            problems.append(f"{path}: field 'id': '{doc.meta.id}' is also the id of {seen[doc.meta.id]}")
            continue
        seen[doc.meta.id] = path
        docs.append(doc)
    return docs, problems


def load_docs(directory: Path) -> list[Doc]:
    """Every document, sorted by file name; the first problem found raises :class:`DocError`."""
    docs, problems = scan_docs(directory)
    if problems:
        more = f" (and {len(problems) - 1} more problem(s); run `iodiag knowledge check`)" if len(problems) > 1 else ""
        raise DocError(problems[0] + more)
    return docs
