"""A small model's job it can do: reword one verified sentence at a time, never add to it.

The bundled 135M model cannot write a grounded answer from a page of facts (its free drafts almost never pass
the verifier). Given one sentence the template route already wrote and verified, it only has to find plainer
words. Three things keep it honest:

* decoding is held to a llama.cpp grammar built from the sentence itself: every number (with its unit), code,
  file name, backticked or quoted span, citation and API name of the original appears verbatim and in order,
  and outside them the model may write only plain words and punctuation, so it cannot emit a digit, a path, a
  code or a name that the sentence did not hold;
* the rewording must pass the verifier like any sentence;
* and it must keep every fact the original carried (checked again, not trusted to the grammar).

Otherwise the original sentence is shown. Sentences that are structure rather than prose (headings, finding
titles, citations, lists of codes, document titles) are shown as written.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from iodiag.narration.checking.grounding import Grounding
from iodiag.narration.checking.untrusted import clean
from iodiag.narration.checking.verifier import check_sentence, split_sentences
from iodiag.narration.model.llm import ChatModel, LLMError, LLMTimeout, ModelCrashed, Turn
from iodiag.narration.models import Violation
from iodiag.narration.prompts import PromptLibrary

Outcome = Literal["rephrased", "unchanged", "failed", "dropped-fact", "moved-fact", "error", "timeout", "skipped"]

# Structure a rewording must keep as it is: backticked log text, quoted code, citations, then any word
# holding a digit, slash, underscore or backslash (numbers, codes, paths, API names), with the unit after it.
_SPAN = re.compile(r"`[^`\n]*`|(?<![\w’'])'[^'\n]+'(?![\w’'])|\[[^\[\]\n]{1,80}\]|“[^”\n]*”")
_UNIT_WORD = re.compile(
    r"(?:%|x|×|[KMGTP]i?B(?:/s)?|B(?:/s)?|bytes?|ns|µs|us|ms|s|sec|min|h|hours?|minutes?|seconds?|times|percent)"
    r"(?=[\s.,;:)]|$)"
)
_FACT_WORD = re.compile(r"[0-9_/\\]|^[DHJLMPSTX]\d{2}$|[A-Za-z]\d|\d[A-Za-z]")
_EDGE_OPEN = "(≈~"
_EDGE_CLOSE = ".,;:)"
_NOT_FACTS = frozenset({"I/O", "i/o", "read/write", "and/or"})
_COUNTED_AFTER = re.compile(
    r"(?:ranks?|OSTs?|nodes?|files?|process(?:es)?|reads?|writes?|requests?|calls?|operations?|aggregators?|"
    r"writers?|readers?)(?=[\s.,;:)]|$)",
    re.IGNORECASE,
)
_COUNTED = re.compile(r"\b(?:ranks?|OSTs?|jobs?|nodes?|process(?:es)?|lines?|steps?|phases?)\s$", re.IGNORECASE)
# A leading label the template gives a sentence ("What to do: ..."): kept as is, the rest is reworded.
_LABEL = re.compile(r"^(?:Why it matters|What to do|Where|Also|Why|How|Note):\s+")

_ACTION_LABELS = ("What to do", "Where", "Also")

MIN_WORDS = 6
MAX_WORDS = 70
MAX_FACTS = 8  # a sentence that is mostly facts ("Other findings: M07, P01, ...") has nothing to reword
GAP_WORDS = 14  # words the model may write between two facts
FIRST_SENTENCE_S = 1.8  # the first sentence shows within this, reworded or not
SENTENCE_S = 4.0  # any later one
BUDGET_S = 11.0  # after this much of the answer, the rest is shown as written
TEMPERATURE = 0.3


@dataclass(frozen=True)
class Rephrasing:
    """What happened to one sentence of the template's answer."""

    original: str
    shown: str
    outcome: Outcome
    seconds: float = 0.0
    violations: tuple[Violation, ...] = ()
    missing: tuple[str, ...] = ()  # facts of the original the rewording lost

    @property
    def attempted(self) -> bool:
        return self.outcome != "skipped"

    @property
    def kept(self) -> bool:
        """The rewording passed the verifier and kept every fact (it may equal the original)."""
        return self.outcome in ("rephrased", "unchanged")


@dataclass
class Facts:
    """The parts of a sentence a rewording must keep verbatim, in order, and where they are in it."""

    sentence: str = ""
    spans: list[tuple[int, int]] = field(default_factory=list)

    @property
    def literals(self) -> list[str]:
        return [self.sentence[a:b] for a, b in self.spans]

    @property
    def tags(self) -> list[str]:
        return [f"{{{i + 1}}}" for i in range(len(self.spans))]

    def skeleton(self) -> str:
        """The sentence with each fact replaced by its tag ({1}, {2}, ...): what the model rewords. It never
        sees the facts, so it cannot garble them, and it writes a few tokens for each instead of dozens."""
        out, at = [], 0
        for (a, b), tag in zip(self.spans, self.tags, strict=True):
            out += [self.sentence[at:a], tag]
            at = b
        return "".join([*out, self.sentence[at:]])

    def fill(self, text: str) -> str:
        for tag, lit in zip(self.tags, self.literals, strict=True):
            text = text.replace(tag, lit, 1)
        return text

    def missing_from(self, text: str) -> list[str]:
        want = Counter(self.literals)
        return [lit for lit, n in want.items() if text.count(lit) < n]

    def moved_in(self, reworded: str) -> list[str]:
        """Facts the rewording (a skeleton, with tags) took away from what they measured.

        "47% of the run" must not become "the largest error occurs at layer 47%": each fact keeps at least one
        of the words next to it in the original (up to three either side), or the original had none.
        """
        before = self.skeleton()
        return [
            lit
            for tag, lit in zip(self.tags, self.literals, strict=True)
            if (near := _neighbours(before, tag)) and not near & _neighbours(reworded, tag)
        ]


def sentence_facts(sentence: str) -> Facts:
    spans: list[tuple[int, int]] = []
    for m in _SPAN.finditer(sentence):
        spans.append((m.start(), m.end()))
    masked = _SPAN.sub(lambda m: " " * len(m.group(0)), sentence)
    for m in re.finditer(r"\S+", masked):
        word, start = m.group(0), m.start()
        core = word.lstrip(_EDGE_OPEN)
        start += len(word) - len(core)
        core = core.rstrip(_EDGE_CLOSE)
        if not core or core in _NOT_FACTS or not _FACT_WORD.search(core):
            continue
        end = start + len(core)
        if core[0].isdigit() and (noun := _COUNTED.search(masked, 0, start)):
            start = noun.start()  # "rank 342", "OST 14": the number means nothing without what it numbers
        if re.search(r"\d$", core):  # "12.00 s", "64.00 MiB", "4 ranks": what the number measures stays with it
            at = end + 1 if masked[end : end + 1] == " " else end
            unit = _UNIT_WORD.match(masked, at) or (_COUNTED_AFTER.match(masked, end + 1) if at > end else None)
            if unit:
                end = unit.end()
        spans.append((start, end))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return Facts(sentence, merged)


def _gbnf_literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def grammar_for(literals: Sequence[str]) -> str:
    """A GBNF grammar: plain words and punctuation, with ``literals`` verbatim, in order, each exactly once."""
    lines = [
        'word ::= [A-Za-z] [A-Za-z\'’-]* | "I/O"',
        'sep ::= [)]? [,;:]? " " [(]?',
        'end ::= [)]? "."',
        f"head ::= (word sep){{0,{GAP_WORDS}}}",
        f"mid ::= sep (word sep){{0,{GAP_WORDS}}}",
        f"tail ::= (sep word){{0,{GAP_WORDS}}}",
    ]
    if not literals:
        lines.insert(0, f"root ::= word (sep word){{0,{3 * GAP_WORDS}}} end")
        return "\n".join(lines) + "\n"
    body = " mid ".join(f"f{i}" for i in range(len(literals)))
    lines.insert(0, f"root ::= head {body} tail end")
    lines += [f"f{i} ::= {_gbnf_literal(lit)}" for i, lit in enumerate(literals)]
    return "\n".join(lines) + "\n"


def label_of(sentence: str) -> tuple[str, str]:
    m = _LABEL.match(sentence)
    return (m.group(0), sentence[m.end() :]) if m else ("", sentence)


def worth_rephrasing(sentence: str) -> bool:
    """Prose that says something, not structure: headings, finding titles, citations and lists stay as written,
    and so do actions (what to do, where): an instruction is followed word for word, so it is shown as the
    template wrote it, commands and all."""
    label, body = label_of(sentence)
    if label.startswith(_ACTION_LABELS):
        return False
    words = body.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return False
    if body.startswith(("**", "[", "More in")) or body.rstrip().endswith(":") or "“" in body:
        return False
    return len(sentence_facts(body).literals) <= MAX_FACTS


_TAG = re.compile(r"\{\d+\}")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_FILLER = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "by",
        "from",
        "as",
        "at",
        "so",
        "which",
        "than",
        "each",
        "all",
        "any",
        "your",
        "you",
        "their",
        "they",
        "there",
    }
)
NEAR_WORDS = 3


def _neighbours(skeleton: str, tag: str) -> set[str]:
    at = skeleton.find(tag)
    if at < 0:
        return set()

    def words(text: str) -> list[str]:
        return [w.lower() for w in _WORD.findall(_TAG.sub(" ", text)) if w.lower() not in _FILLER]

    return set(words(skeleton[:at])[-NEAR_WORDS:]) | set(words(skeleton[at + len(tag) :])[:NEAR_WORDS])


# Words that carry a claim of their own: counts said in words, comparisons, negations. A rewording may keep the
# original's but not add one: "twice as slow", "the smallest cost" or "not" would change what the sentence says,
# and the verifier checks digits, not these.
_CLAIM_WORD = re.compile(
    r"\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundreds?|"
    r"thousands?|millions?|billions?|dozens?|twice|thrice|double[ds]?|triple[ds]?|half|halve[ds]?|quarter|"
    r"not|no|never|none|nothing|without|cannot|can't|don't|doesn't|isn't|aren't|wasn't|weren't|"
    r"\w+est|most|least|more|less|fewer|\w+er than|faster|slower|larger|smaller|bigger|higher|lower|better|worse|"
    r"always|every|all|only)\b",
    re.IGNORECASE,
)


def changed_claims(original: str, reworded: str) -> list[str]:
    """Claim-carrying words (counts in words, comparisons, negations) one of the two has and the other lacks: a
    rewording that drops "not" or "more" changes the claim as surely as one that adds "twice"."""
    before = {m.group(0).lower() for m in _CLAIM_WORD.finditer(original)}
    after = {m.group(0).lower() for m in _CLAIM_WORD.finditer(reworded)}
    return sorted(before ^ after)


# The prompt's own words: a rewording that says "Rewrite: ..." talks about its task, not the job.
_TASK_WORDS = frozenset(
    {"rewrite", "rewritten", "rewording", "reworded", "plainer", "placeholder", "placeholders", "sentence"}
)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _normal(text: str) -> str:
    return " ".join(text.split()).strip().lower()


class Rephraser:
    """Rewords the template's verified sentences one at a time with ``model``, each checked against ``g``."""

    def __init__(self, model: ChatModel, prompts: PromptLibrary, g: Grounding, question: str, seed: int) -> None:
        self.model = model
        self.g = g
        self.seed = seed
        self.system = prompts.render("rephrase-system")
        self.prompt = prompts.get("rephrase-sentence")
        # Not in the prompt: given the question, the 135M model answers or repeats it instead of rewording
        # ("Why is my job slow: ..."); kept to catch a rewording that echoes it.
        self.question_words = _words(clean(question, 300))

    def _echo(self, original: str, text: str) -> str:
        """The prompt's words, or three words in a row from the question, that the original did not have: the
        model talks about its task or to the asker instead of rewording."""
        own = set(_words(original))
        if task := sorted((set(_words(text)) & _TASK_WORDS) - own):
            return ", ".join(task)
        q = self.question_words
        said = " ".join(_words(text))
        for i in range(len(q) - 2):
            run = q[i : i + 3]
            if not set(run) <= own and " ".join(run) in said:
                return " ".join(run)
        return ""

    def one(self, sentence: str, line: int, deadline: float) -> Rephrasing:
        """The sentence to show: the rewording when it passed and kept every fact, else the original.

        Raises :class:`ModelCrashed` when the model's process died: the caller says so instead of answering.
        """
        t0 = time.monotonic()
        label, body = label_of(sentence)
        facts = sentence_facts(body)
        skeleton = facts.skeleton()
        user = self.prompt.render(sentence=skeleton)
        turns: Sequence[Turn] = [("system", self.system), ("user", user)]
        # A rewording may run a little longer than the original; the grammar ends it at its full stop.
        budget = int(len(skeleton) / 2.5) + 24
        try:
            raw = "".join(
                self.model.stream(
                    turns,
                    deadline,
                    max_tokens=budget,
                    seed=self.seed,
                    grammar=grammar_for(facts.tags),
                    temperature=TEMPERATURE,
                )
            )
        except ModelCrashed:
            raise
        except LLMTimeout:
            return Rephrasing(sentence, sentence, "timeout", time.monotonic() - t0)
        except LLMError as exc:
            return Rephrasing(
                sentence, sentence, "error", time.monotonic() - t0, (Violation(kind="model-error", text=str(exc)),)
            )
        reworded = " ".join(raw.split()).strip(" \"'")
        moved = tuple(facts.moved_in(reworded))
        text = facts.fill(reworded)
        if text and text[0].islower():
            text = text[0].upper() + text[1:]
        elapsed = time.monotonic() - t0
        if not text.endswith("."):  # cut off by the token limit: an unfinished sentence
            return Rephrasing(sentence, sentence, "failed", elapsed, (Violation(kind="unfinished", text=text),))
        if label:
            text = label + text
        missing = tuple(facts.missing_from(text))
        if missing:
            return Rephrasing(sentence, sentence, "dropped-fact", elapsed, missing=missing)
        if moved:
            return Rephrasing(sentence, sentence, "moved-fact", elapsed, missing=moved)
        if changed := changed_claims(sentence, text):
            detail = "a count, comparison or negation the original did not make, or dropped one it made"
            violation = Violation(kind="changed-claim", text=", ".join(changed), detail=detail)
            return Rephrasing(sentence, sentence, "failed", elapsed, (violation,))
        if echo := self._echo(sentence, text):
            return Rephrasing(sentence, sentence, "failed", elapsed, (Violation(kind="prompt-echo", text=echo),))
        parts = split_sentences(text)
        if len(parts) != 1 or len(parts[0][1]) != 1:  # one sentence in, one out
            return Rephrasing(sentence, sentence, "failed", elapsed, (Violation(kind="not-one-sentence", text=text),))
        check = check_sentence(text, self.g, line)
        if not check.ok:
            return Rephrasing(sentence, sentence, "failed", elapsed, tuple(check.violations))
        if _normal(text) == _normal(sentence):  # a copy: the original, as the template wrote it
            return Rephrasing(sentence, sentence, "unchanged", elapsed)
        return Rephrasing(sentence, text, "rephrased", elapsed)
