"""Fit a plan's facts, documents and history into the model's context window.

Token counts come from the model's own tokenizer when it has one. The window must hold the prompt, the
answer, and (when there is room) one repair round: the draft and the request to try again. Facts go in
first, most important first, then documents (the last one cut short if needed), then earlier turns.
What did not fit is not shown, and so cannot be cited: the verifier checks against what was given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from iodiag.knowledge.models import Passage
from iodiag.narration.checking.facts import Fact
from iodiag.narration.checking.untrusted import clean
from iodiag.narration.models import ChatTurn
from iodiag.narration.prompts import PromptLibrary

TokenCounter = Callable[[str], int]

MESSAGE_OVERHEAD = 8  # chat-template tokens around each message (role markers, separators)
MIN_PASSAGE_TOKENS = 40  # a passage cut shorter than this says too little to be worth its place
MIN_PROMPT_TOKENS = 512  # below this, the window has no room for a repair round as well
HISTORY_TURNS = 4
HISTORY_CHARS = 400
NONE = "(none)"


@dataclass(frozen=True)
class Budget:
    context_tokens: int
    answer_tokens: int

    def prompt_tokens(self, repair_tokens: int) -> tuple[int, bool]:
        """Tokens the first prompt may use, and whether the repair note still fits after it.

        The second try is the same prompt with the repair note (the violations) appended, so the room it
        needs is the note's.
        """
        full = self.context_tokens - self.answer_tokens - 2 * MESSAGE_OVERHEAD
        with_repair = full - repair_tokens
        if with_repair >= MIN_PROMPT_TOKENS:
            return with_repair, True
        return full, False


@dataclass(frozen=True)
class Fitted:
    system: str
    user: str
    instructions: str  # the prompt without facts, documents, history or question: what an answer must not echo
    facts: list[Fact]
    passages: list[Passage]
    history: list[ChatTurn]
    tokens: int
    repair_fits: bool


def passage_block(p: Passage, text: str | None = None) -> str:
    from iodiag.narration.templates import doc_title

    return f"[doc:{p.doc_id}] {doc_title(p.title)} / {clean(p.heading, 200)}: {' '.join((text or p.text).split())}"


def history_block(turns: Sequence[ChatTurn]) -> str:
    lines = []
    for t in turns:
        who = "User" if t.role == "user" else "Assistant"
        lines.append(f"{who}: {clean(t.text, HISTORY_CHARS)}")
    return "\n".join(lines)


def _cut(text: str, tokens: int, count: TokenCounter) -> str:
    """The longest prefix of ``text`` (whole words) within ``tokens``."""
    words = text.split()
    lo, hi = 0, len(words)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(" ".join(words[:mid]) + " …") <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]) + (" …" if lo < len(words) else "")


def fit(
    library: PromptLibrary,
    template: str,
    inputs: dict[str, str],
    facts: Sequence[Fact],
    passages: Sequence[Passage],
    history: Sequence[ChatTurn],
    budget: Budget,
    count: TokenCounter,
) -> Fitted:
    system = library.render("system")
    # the note names up to 8 violations of about 40 tokens each
    repair_cost = count(library.render("repair", violations=NONE)) + 8 * 40
    limit, repair_fits = budget.prompt_tokens(repair_cost)

    declared = set(library.get(template).meta.inputs)

    def render(fs: Sequence[Fact], ps: Sequence[str], hs: Sequence[ChatTurn]) -> str:
        parts = {
            "facts": "\n".join(f.line for f in fs) or NONE,
            "documents": "\n".join(ps),
            "history": history_block(hs),
        }
        # A template that takes no documents or history (the help-desk summary) is given none.
        return library.render(template, **{k: v for k, v in parts.items() if k in declared}, **inputs)

    bare = render([], [], [])
    used = count(system) + count(bare)
    given_facts: list[Fact] = []
    for f in facts:
        cost = count(f.line) + 1
        if used + cost > limit:
            if not given_facts:  # a window too small for one fact: give the first one cut short
                given_facts.append(Fact(f.id, f.kind, _cut(f.text, max(limit - used, 16), count), f.code, f.values))
            break
        given_facts.append(f)
        used += cost
    given_passages: list[Passage] = []
    blocks: list[str] = []
    for p in passages:
        block = passage_block(p)
        cost = count(block) + 1
        if used + cost <= limit:
            given_passages.append(p)
            blocks.append(block)
            used += cost
            continue
        room = limit - used - count(passage_block(p, "")) - 2
        if room >= MIN_PASSAGE_TOKENS:
            short = _cut(p.text, room, count)
            cut = p.model_copy(update={"text": short})
            given_passages.append(cut)
            blocks.append(passage_block(cut))
            used += count(blocks[-1]) + 1
        break
    given_history: list[ChatTurn] = []
    for t in reversed(list(history)[-HISTORY_TURNS:]):
        cost = count(history_block([t])) + 1
        if used + cost > limit:
            break
        given_history.insert(0, t)
        used += cost
    user = render(given_facts, blocks, given_history)
    return Fitted(
        system, user, bare, given_facts, given_passages, given_history, count(system) + count(user), repair_fits
    )
