"""The grounding verifier: every claim in an answer must come from the facts or documents it was given.

Checked per sentence:

* every number (units, commas and percent normalized; rounding to the shown precision allowed),
* every file name (backticked or path-like), every rank, every finding code and document id,
* no problem claimed that no finding reports (``issues.py``: "small writes" without P06/P16),
* support: the sentence's words must be covered by one or two facts or passages (BM25-weighted token
  recall, :data:`SUPPORT_THRESHOLD`); text quoted from the log never counts as support, so a file name
  that says "the job is fine" supports nothing.

A failing sentence is removed; what is left is verified again by the caller's policy (``service.py``).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from iodiag.narration.checking.grounding import CODE, RANKS, Grounding, content_tokens
from iodiag.narration.checking.issues import asserted_issues, issues_named, negated
from iodiag.narration.checking.quantities import parse_quantities, strip_quantities
from iodiag.narration.checking.untrusted import quoted_spans, strip_quoted
from iodiag.narration.models import Citation, VerifierReport, Violation

SUPPORT_THRESHOLD = 0.5
# Words found in no fact or passage at all: a paraphrase needs few; a made-up reason brings several.
NOVEL_SHARE = 0.2
NOVEL_ALLOWED = 1
ECHO_SHARE = 0.6  # a sentence made mostly of the prompt's or the question's words repeats instead of answering
MIN_CHECKED_TOKENS = 3  # shorter sentences ("Here is why.") carry no claim to check
DOC_QUOTE = 0.9  # attribution to one document above which a sentence is a quotation of it
DOC_QUOTE_TOKENS = 5
HARD_KINDS = frozenset(
    {
        "unknown-number",
        "unknown-code",
        "unknown-doc",
        "unknown-file",
        "unknown-rank",
        "unknown-name",
        "absent-issue",
        "contradiction",
    }
)
# API and setting names (MPI_File_write_at_all, H5Pset_alignment, romio_cb_write): advice that names a
# function or hint that does not exist sends the user looking for it, so each must come from the facts or
# documents.
_API_NAME = re.compile(r"\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9]\b")
# Dismissing a problem the report found ("P10 is not a problem").
_DISMISS = re.compile(
    r"\bnot (?:a |an |the )?(?:real |big |serious )?(?:problem|issue|concern|bottleneck)|"
    r"\bno (?:real )?(?:problem|issue)|\bnothing to (?:fix|worry)|"
    r"\b(?:is|are|was|were|looks?) (?:fine|ok|okay|harmless|normal)\b|\bharmless|"
    r"\bdoes(?:n't| not) matter|\bnot worth fixing|\bcan be ignored",
    re.IGNORECASE,
)

_BRACKET = re.compile(r"\[([^\[\]\n]{1,80})\]")
_DOC_REF = re.compile(r"\bdoc:\s*([a-z0-9][a-z0-9-]*)", re.IGNORECASE)
_DOC_ID = re.compile(r"^(?:doc:\s*)?([a-z0-9][a-z0-9-]*)$", re.IGNORECASE)
_PATHLIKE = re.compile(
    r"(?<![\w/])(?:~|\.{1,2})?/(?:[\w.\-]+/)*[\w.\-]+"  # an absolute or relative path: /scratch/out.h5
    r"|(?<![\w/.-])[\w\-]+(?:\.[\w\-]+)*\.(?:h5|hdf5|he5|nc|nc4|cdf|dat|bin|log|txt|csv|npy|npz|out|chk|ckpt|bp|"
    r"tfrecords?|json|darshan|raw|sgy|vtk|vtu|root|pt|pth|parquet|zarr|tar|gz)\b",
    re.IGNORECASE,
)
_NOT_PATHS = frozenset({"/s", "/o", "/O"})
_SMALL_BARE = (0.0, 1.0)  # "0" and "1" alone claim nothing checkable ("1 file", "rank 0" is checked as a rank)
_ABBREV = frozenset({"e.g.", "i.e.", "etc.", "vs.", "approx.", "fig.", "no.", "cf."})
_LINE_PREFIX = re.compile(r"^\s*(?:[-*•]\s+|\d+[.)]\s+|#{1,6}\s+|>\s*)?")


@dataclass
class SentenceCheck:
    text: str
    line: int
    violations: list[Violation] = field(default_factory=list)
    support: float = 1.0
    source: str | None = None  # the fact id or "doc:<id>" the sentence is attributed to
    checked: bool = True  # long enough to need support

    @property
    def ok(self) -> bool:
        return not self.violations


@dataclass
class Verification:
    text: str
    lines: list[tuple[str, list[SentenceCheck]]]  # (line prefix, its sentences)
    sentences: list[SentenceCheck]

    @property
    def violations(self) -> list[Violation]:
        return [v for s in self.sentences for v in s.violations]

    @property
    def passed(self) -> bool:
        return not self.violations

    @property
    def hard_violations(self) -> list[Violation]:
        return [v for v in self.violations if v.kind in HARD_KINDS]

    def kept_text(self) -> str:
        """The answer without its failing sentences (list markers and blank lines tidied)."""
        out: list[str] = []
        for prefix, sents in self.lines:
            if not sents:
                if out and out[-1] != "":
                    out.append("")
                continue
            kept = [s.text for s in sents if s.ok]
            if kept:
                out.append(prefix + " ".join(kept))
        while out and out[-1] == "":
            out.pop()
        return "\n".join(out).strip()

    def kept_sentences(self) -> list[SentenceCheck]:
        return [s for s in self.sentences if s.ok]

    def report(self, attempts: int, removed: int | None = None) -> VerifierReport:
        return VerifierReport(
            passed=self.passed,
            violations=self.violations,
            sentences_total=len(self.sentences),
            sentences_removed=removed if removed is not None else len(self.sentences) - len(self.kept_sentences()),
            attempts=attempts,
        )

    def citations(self, titles: dict[str, str]) -> list[Citation]:
        """What the kept sentences rest on: codes and doc ids they name, and the sources they are attributed to."""
        out: dict[tuple[str, str], Citation] = {}

        def add(kind: str, ident: str) -> None:
            key = (kind, ident)
            name = ident if kind == "finding" else f"doc:{ident}"
            if key not in out and (not titles or name in titles):  # only what the report and documents hold
                out[key] = Citation(
                    kind="finding" if kind == "finding" else "doc", id=ident, title=titles.get(name, "")
                )

        for s in self.kept_sentences():
            bare = strip_quoted(s.text)
            for code in CODE.findall(bare):
                add("finding", code)
            for doc in _doc_refs(bare):
                add("doc", doc)
            if s.source and s.source.startswith("doc:"):
                add("doc", s.source[4:])
            elif s.source and s.source != "phrase":
                code = s.source.split(":", 1)[0]
                if CODE.fullmatch(code):
                    add("finding", code)
        return list(out.values())


def split_sentences(text: str) -> list[tuple[str, list[str]]]:
    """(line prefix, sentences) per line; a blank line is ("", []). Backticked text is never split."""
    out: list[tuple[str, list[str]]] = []
    for raw in text.splitlines():
        if not raw.strip():
            out.append(("", []))
            continue
        m = _LINE_PREFIX.match(raw)
        prefix = m.group(0) if m else ""
        body = raw[len(prefix) :].strip()
        out.append((prefix, _split_line(body)))
    return out


def _split_line(body: str) -> list[str]:
    masked = re.sub(r"`[^`]*`", lambda m: "x" * len(m.group(0)), body)
    cuts = [0]
    for m in re.finditer(r"[.!?](?=\s+\S)", masked):
        word = masked[: m.end()].rsplit(None, 1)[-1].lower()
        if word in _ABBREV or re.fullmatch(r"\d+\.", word):
            continue
        cuts.append(m.end())
    cuts.append(len(body))
    parts = [body[a:b].strip() for a, b in itertools.pairwise(cuts)]
    return [p for p in parts if p]


def _doc_refs(text: str) -> list[str]:
    refs = [m.group(1).lower() for m in _DOC_REF.finditer(text)]
    for m in _BRACKET.finditer(text):
        inner = m.group(1).strip()
        for part in re.split(r"\s*[,;]\s*", inner):
            if CODE.fullmatch(part) or part.lower().startswith("doc:"):
                continue
            d = _DOC_ID.match(part)
            if d and "-" in d.group(1):
                refs.append(d.group(1).lower())
    return list(dict.fromkeys(refs))


def _bracket_parts(text: str) -> list[str]:
    parts: list[str] = []
    for m in _BRACKET.finditer(text):
        parts += [p for p in re.split(r"\s*[,;]\s*", m.group(1).strip()) if p]
    return parts


_TITLE = re.compile(r"“([^”\n]{1,200})”")


def _untitled(text: str, g: Grounding) -> str:
    return _TITLE.sub(lambda m: " " if m.group(1) in g.titles else m.group(0), text)


def check_sentence(sentence: str, g: Grounding, line: int = 0) -> SentenceCheck:
    chk = SentenceCheck(sentence, line)
    v = chk.violations
    # A document named by its title ("More in “Rank 0 does most of the I/O”") claims nothing about this job.
    bare = _untitled(strip_quoted(sentence), g)
    # Citations first: what is inside [..] is an id, not a number or a claim.
    for part in _bracket_parts(bare):
        ident = part.removeprefix("doc:").strip()
        if CODE.fullmatch(part):
            continue  # checked with the other codes below
        if part.lower().startswith("doc:") or _DOC_ID.match(part):
            if ident.lower() not in g.doc_ids:
                v.append(Violation(kind="unknown-doc", text=part, detail="no document with this id was given"))
        else:
            v.append(Violation(kind="unknown-doc", text=part, detail="a citation that names no finding or document"))
    for m in _DOC_REF.finditer(_BRACKET.sub(" ", bare)):
        if m.group(1).lower() not in g.doc_ids:
            v.append(Violation(kind="unknown-doc", text=m.group(0), detail="no document with this id was given"))
    without_ids = _BRACKET.sub(" ", bare)
    without_ids = _DOC_REF.sub(" ", without_ids)
    # A sentence taken (nearly) word for word from a document states general knowledge, not a claim about
    # this job: the codes and problems it names need not be in the report.
    words = content_tokens(CODE.sub(" ", without_ids))
    doc_support, doc_source = support(words, g, own_words=False) if len(words) >= DOC_QUOTE_TOKENS else (0.0, None)
    quoting = bool(doc_source and doc_source.startswith("doc:") and doc_support >= DOC_QUOTE)

    for code in dict.fromkeys(CODE.findall(bare)):
        if code in g.codes or (quoting and code in g.doc_codes | g.absent_codes):
            continue
        if code in g.absent_codes:
            if not negated(sentence):
                v.append(Violation(kind="absent-issue", text=code, detail="the report has no such finding"))
            continue
        if code in g.doc_codes and code not in g.report_codes:
            if not negated(sentence):
                v.append(
                    Violation(
                        kind="absent-issue", text=code, detail="a document mentions it; the job has no such finding"
                    )
                )
            continue
        v.append(Violation(kind="unknown-code", text=code, detail="no finding with this code was given"))

    for m in RANKS.finditer(without_ids):
        for n in re.findall(r"\d+", m.group(1)):
            if int(n) not in g.ranks:
                v.append(Violation(kind="unknown-rank", text=f"rank {n}", detail="no fact names this rank"))
    rank_free = RANKS.sub(" ", without_ids)
    rank_free = CODE.sub(" ", rank_free)
    paths = [p for p in _PATHLIKE.findall(rank_free) if p not in _NOT_PATHS]
    number_text = _PATHLIKE.sub(" ", rank_free)
    for q in parse_quantities(number_text):
        if q.dim == "bare" and q.shown in _SMALL_BARE:
            continue
        if not g.knows_number(q):
            v.append(
                Violation(kind="unknown-number", text=q.text.strip(), detail="no fact or document has this number")
            )
    for name in dict.fromkeys(_API_NAME.findall(_PATHLIKE.sub(" ", without_ids))):
        if not g.knows_text(name):
            v.append(
                Violation(kind="unknown-name", text=name, detail="no fact or document names this function or hint")
            )
    for span in quoted_spans(sentence):
        if not g.knows_file(span):
            v.append(Violation(kind="unknown-file", text=span, detail="not a file or text from the facts"))
    for p in paths:
        if not g.knows_file(p) and not g.knows_text(p):
            v.append(Violation(kind="unknown-file", text=p, detail="no fact or document names this file"))

    for issue in [] if quoting else asserted_issues(_untitled(sentence, g)):
        if not issue.codes & g.report_codes:
            v.append(
                Violation(
                    kind="absent-issue",
                    text=issue.name,
                    detail=f"no finding reports it ({', '.join(sorted(issue.codes))} did not fire)",
                )
            )

    problems = {c for c in CODE.findall(bare) if c in g.problem_codes}
    if not problems:
        # "the small writes are not a problem" is negated, so not an asserted issue, and still a dismissal
        problems = {c for i in issues_named(bare) for c in i.codes & g.problem_codes}
    if problems and _DISMISS.search(bare):
        v.append(
            Violation(
                kind="contradiction",
                text=sentence,
                detail=f"dismisses {', '.join(sorted(problems))}, which the report counts as a problem",
            )
        )

    if v:
        chk.support = 0.0
        return chk
    # Codes are checked above; as words they would let "P22, M07, P14." pass for a sentence.
    tokens = content_tokens(strip_quantities(CODE.sub(" ", without_ids)))
    says_something = bool(quoted_spans(sentence) or CODE.search(bare) or parse_quantities(number_text))
    echoed = _echo_share(tokens, g)
    if echoed >= ECHO_SHARE and tokens and not says_something:
        fact_support, _src = support(tokens, g, own_words=False)
        if fact_support <= echoed:
            v.append(Violation(kind="prompt-echo", text=sentence, detail="repeats the prompt or the question"))
            chk.support = fact_support
            return chk
    if len(set(tokens)) < MIN_CHECKED_TOKENS:
        chk.checked = False
        return chk
    chk.support, chk.source = support(tokens, g)
    novel = sorted({t for t in tokens if t not in g.vocabulary})
    if len(novel) > NOVEL_ALLOWED and len(novel) > NOVEL_SHARE * len(set(tokens)):
        v.append(
            Violation(
                kind="unsupported",
                text=sentence,
                detail=f"words in no fact or document: {', '.join(novel[:6])}",
            )
        )
    elif chk.support < SUPPORT_THRESHOLD:
        v.append(
            Violation(
                kind="unsupported",
                text=sentence,
                detail=f"attribution {chk.support:.2f} < {SUPPORT_THRESHOLD} (best: {chk.source or 'none'})",
            )
        )
    return chk


def _echo_share(tokens: list[str], g: Grounding) -> float:
    if not g.echo_tokens or not tokens:
        return 0.0
    words = set(tokens)
    return len(words & g.echo_tokens) / len(words)


def support(tokens: list[str], g: Grounding, own_words: bool = True) -> tuple[float, str | None]:
    """IDF-weighted share of the sentence's words found in its best one or two units, and the best unit.

    ``own_words=False`` leaves out the phrase book's sentences: only facts and documents count.
    """
    words = set(tokens)
    weight = {t: g.idf.get(t, g.default_idf) for t in words}
    total = sum(weight.values())
    units = [u for u in g.units if own_words or u.source != "phrase"]
    if total <= 0 or not units:
        return 0.0, None
    scored = sorted(((sum(weight[t] for t in words & u.tokens) / total, i) for i, u in enumerate(units)), reverse=True)
    best_score, best = scored[0]
    score = best_score
    if len(scored) > 1:
        second = units[scored[1][1]]
        union = units[best].tokens | second.tokens
        # Two units together may carry a sentence that joins a finding to its fix; a small discount keeps
        # sentences that borrow a word from everywhere from passing.
        score = max(score, sum(weight[t] for t in words & union) / total - 0.05)
    return score, units[best].source


def verify(text: str, g: Grounding) -> Verification:
    lines = []
    sentences: list[SentenceCheck] = []
    for i, (prefix, parts) in enumerate(split_sentences(text)):
        checks = [check_sentence(s, g, i) for s in parts]
        sentences += checks
        lines.append((prefix, checks))
    if not sentences:
        empty = SentenceCheck("", 0, [Violation(kind="unsupported", text="", detail="the answer is empty")], 0.0)
        return Verification(text, [("", [empty])], [empty])
    return Verification(text, lines, sentences)
