"""The narration layer's public API: :class:`Narrator`, used by the REST service and the ``ask`` command.

An answer goes: plan (``composer.py``) -> prompt fitted to the window (``context.py``) -> model stream ->
verifier. A draft that passes is the answer ("model"). One that fails loses its failing sentences; if what
is left still answers the question it is the answer ("model-repaired"), otherwise the model is asked once
more with the violations named. If that fails too, or the model is missing, broken or out of time, the
answer is the template route's ("template"), written from the same facts and documents.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator, Sequence
from datetime import datetime

from iodiag.analysis.models import Report, Severity
from iodiag.comparison import Comparison, executable
from iodiag.core.settings import Settings, get_settings
from iodiag.knowledge.models import Passage
from iodiag.narration.budget import NONE, Budget, fit
from iodiag.narration.comparison_answer import answer_comparison
from iodiag.narration.composer import Composer, Conversation, Plan
from iodiag.narration.facts import Fact
from iodiag.narration.grounding import CODE, RANKS, Grounding
from iodiag.narration.intents import Intent
from iodiag.narration.knowledge import KnowledgeSource, open_knowledge
from iodiag.narration.llm import ChatModel, LLMError, get_model
from iodiag.narration.models import Answer, AnswerChunk, ChatTurn, Citation, Provenance, VerifierReport, Violation
from iodiag.narration.prompts import PromptLibrary
from iodiag.narration.templates import TemplateWriter
from iodiag.narration.untrusted import clean, quoted_spans, strip_quoted
from iodiag.narration.verifier import Verification, verify

__all__ = ["Narrator"]

MAX_VIOLATIONS_NAMED = 8
TRIAGE_LINES = 4
KEEP_SHARE = 0.5  # a repaired draft must keep at least this share of its sentences
_PLACEHOLDER = re.compile(r"\{[a-z_]+\}")
# Intents whose answer must rest on at least one of the findings it is about.
_ABOUT_FINDINGS = frozenset({Intent.EXPLAIN_JOB, Intent.EXPLAIN_FINDING, Intent.FILE_OR_RANK, Intent.HOW_TO_FIX})
# The kinds of fact (or "doc") at least one sentence of an answer must rest on, per question kind.
_NEEDS: dict[Intent, frozenset[str]] = {
    Intent.EXPLAIN_JOB: frozenset({"verdict", "data", "finding", "evidence", "why", "fix"}),
    Intent.EXPLAIN_FINDING: frozenset({"finding", "evidence", "why", "fix", "file", "ranks", "doc"}),
    Intent.FILE_OR_RANK: frozenset({"file", "ranks", "data"}),
    Intent.HOW_TO_FIX: frozenset({"fix", "doc"}),
    Intent.CONCEPT: frozenset({"doc", "why", "finding"}),
    Intent.FACILITY: frozenset({"doc", "fix", "job"}),
    Intent.OFF_TOPIC: frozenset({"summary"}),
    Intent.COMPARE_RUNS: frozenset({"verdict", "summary", "job"}),
    Intent.TRIAGE: frozenset({"verdict", "finding", "evidence", "fix"}),
}


def _drop_repeats(text: str) -> str:
    """Small models loop: a line said before is said once."""
    seen: set[str] = set()
    out = []
    for line in text.splitlines():
        key = " ".join(line.split()).lower()
        if key and key in seen:
            continue
        seen.add(key)
        out.append(line)
    return "\n".join(out)


class Narrator:
    def __init__(self, settings: Settings | None = None, knowledge: KnowledgeSource | None = None) -> None:
        self.settings = settings or get_settings()
        self.prompts = PromptLibrary(self.settings.prompts_dir)
        self.phrases = self.prompts.phrases()
        self.writer = TemplateWriter(self.phrases)
        self._knowledge = knowledge
        self._knowledge_tried = knowledge is not None
        self._own_phrases = [_PLACEHOLDER.sub(" ", s) for s in self.phrases.say.values()]

    # --- collaborators, opened on first use ---------------------------------------------------------

    @property
    def knowledge(self) -> KnowledgeSource | None:
        if not self._knowledge_tried:
            self._knowledge_tried = True
            self._knowledge = open_knowledge(self.settings)
        return self._knowledge

    def warm(self) -> None:
        """Open the knowledge base and load the model now, not on the first question (for a server's start)."""
        _ = self.knowledge
        with contextlib.suppress(LLMError):  # answers will come from the templates; the reason is logged
            self.model()

    def model(self) -> ChatModel | None:
        """The narrating model, or None (provider ``none``); raises :class:`LLMError` when it cannot load."""
        return get_model(self.settings)

    def composer(self) -> Composer:
        return Composer(self.phrases, self.knowledge)

    # --- public API -------------------------------------------------------------------------------

    def answer(
        self,
        report: Report,
        question: str,
        history: Sequence[ChatTurn] = (),
        comparison: Comparison | None = None,
        previous_start: datetime | None = None,
    ) -> Iterator[AnswerChunk]:
        """Stream an answer: provisional text pieces, then one final chunk holding the checked :class:`Answer`.

        A chunk with ``reset`` set means the provisional text so far is withdrawn (a second draft or the
        template answer follows). Model trouble never raises: it ends in the template answer. A question about
        this run against an earlier one is answered from ``comparison`` (earlier run A, this run B), or says
        there is none to compare with.
        """
        t0 = time.monotonic()
        conversation = Conversation(report, self.composer(), history)
        plan = conversation.plan(question)
        if plan.intent is Intent.COMPARE_RUNS:
            answer = answer_comparison(comparison, executable(report.job.exe), previous_start, t0=t0)
            for line in answer.text.splitlines():
                yield AnswerChunk(delta=line + "\n")
            yield AnswerChunk(final=True, answer=answer)
            return
        yield from self._run(plan, conversation.history, t0)

    def explain(self, report: Report) -> Answer:
        """The job summary: whether I/O matters, the costliest findings, and what to change."""
        return self._final(report, Intent.EXPLAIN_JOB)

    def triage_summary(self, report: Report) -> Answer:
        """Two to four lines for a help-desk table."""
        return self._final(report, Intent.TRIAGE)

    def draft_reply(self, report: Report) -> Answer:
        """The body of the help desk's reply to the job's owner (verdict, then what to change), checked like any
        answer; the caller adds the greeting. Always the template route: staff send it under their name."""
        t0 = time.monotonic()
        plan = self.composer().plan(report, "What should I change?", intent=Intent.HOW_TO_FIX)
        text = self.writer.reply_body(plan)
        check = verify(text, self.grounding(plan, plan.facts, plan.passages))
        return Answer(
            text=text.strip(),
            intent=plan.intent.value,
            citations=check.citations(self._titles(plan)),
            provenance="template",
            model=None,
            verifier=check.report(0),
            elapsed_s=time.monotonic() - t0,
        )

    def template_answer(self, report: Report, question: str, history: Sequence[ChatTurn] = ()) -> Answer:
        """The template route alone, whatever the settings say (for evals, and clients that want no model)."""
        t0 = time.monotonic()
        plan = Conversation(report, self.composer(), history).plan(question)
        return self._template(plan, t0, attempts=0, caught=[])

    # --- the route --------------------------------------------------------------------------------

    def _final(self, report: Report, intent: Intent) -> Answer:
        t0 = time.monotonic()
        plan = self.composer().plan(report, "", intent=intent)
        answer = None
        for chunk in self._run(plan, [], t0):
            if chunk.final:
                answer = chunk.answer
        assert answer is not None  # _run always ends with a final chunk
        return answer

    def grounding(
        self, plan: Plan, facts: Sequence[Fact], passages: Sequence[Passage], echo: Sequence[str] = ()
    ) -> Grounding:
        problems = frozenset(
            f.code for f in plan.report.findings if f.severity in (Severity.CRITICAL, Severity.WARNING)
        )
        return Grounding(facts, passages, frozenset(plan.report.codes()), problems, self._own_phrases, echo)

    def _titles(self, plan: Plan) -> dict[str, str]:
        titles = {f.code: f.title for f in plan.report.findings}
        titles.update({f"doc:{p.doc_id}": p.title for p in plan.passages})
        return titles

    def _template(self, plan: Plan, t0: float, attempts: int, caught: list[Violation], note: str = "") -> Answer:
        text = self.writer.write(plan)
        check = verify(text, self.grounding(plan, plan.facts, plan.passages))
        report = check.report(attempts)
        if caught:  # what the model's drafts got wrong, caught before it reached the user
            report = report.model_copy(update={"violations": [*caught, *report.violations]})
        return Answer(
            text=text.strip(),
            intent=plan.intent.value,
            citations=check.citations(self._titles(plan)),
            provenance="template",
            model=None,
            verifier=report,
            elapsed_s=time.monotonic() - t0,
            note=note,
        )

    def _stream_template(
        self, plan: Plan, t0: float, attempts: int, caught: list[Violation], note: str, reset: bool
    ) -> Iterator[AnswerChunk]:
        answer = self._template(plan, t0, attempts, caught, note)
        if reset:
            yield AnswerChunk(reset=True)
        for line in answer.text.splitlines(keepends=False):
            yield AnswerChunk(delta=line + "\n")
        yield AnswerChunk(final=True, answer=answer)

    def _run(self, plan: Plan, history: Sequence[ChatTurn], t0: float) -> Iterator[AnswerChunk]:
        if plan.intent is Intent.OFF_TOPIC:  # a redirect needs no model, and must not be talked out of
            yield from self._stream_template(plan, t0, 0, [], "", reset=False)
            return
        try:
            model = self.model()
        except LLMError as exc:
            yield from self._stream_template(plan, t0, 0, [], f"no model: {exc}", reset=False)
            return
        if model is None:
            yield from self._stream_template(plan, t0, 0, [], "", reset=False)
            return
        yield from self._model_route(plan, history, model, t0)

    def _prompt_inputs(self, plan: Plan) -> dict[str, str]:
        inputs = {"question": clean(plan.question.text, 1000)}
        if plan.prompt == "answer-question":
            inputs["kind"] = plan.intent.value
        if plan.prompt == "triage-summary":
            return {}
        return inputs

    def _model_route(
        self, plan: Plan, history: Sequence[ChatTurn], model: ChatModel, t0: float
    ) -> Iterator[AnswerChunk]:
        deadline = t0 + self.settings.llm_timeout_s
        fitted = fit(
            self.prompts,
            plan.prompt,
            self._prompt_inputs(plan),
            plan.facts,
            plan.passages,
            [] if plan.prompt == "triage-summary" else history,
            Budget(model.context_tokens, model.max_answer_tokens),
            model.count_tokens,
        )
        g = self.grounding(plan, fitted.facts, fitted.passages, echo=(fitted.system, fitted.instructions))
        titles = self._titles(plan)
        caught: list[Violation] = []
        removed = 0
        streamed = False
        attempt = 0
        user = fitted.user
        while True:
            attempt += 1
            text = ""
            try:
                if streamed:
                    yield AnswerChunk(reset=True)
                # A new seed for the second try: the same seed and nearly the same prompt give the same draft.
                seed = self.settings.llm_seed + attempt - 1
                for piece in model.stream([("system", fitted.system), ("user", user)], deadline, seed=seed):
                    text += piece
                    streamed = True
                    yield AnswerChunk(delta=piece)
            except LLMError as exc:
                yield from self._stream_template(plan, t0, attempt, caught, f"model: {exc}", reset=streamed)
                return
            text = self._shape(plan, text)
            draft = verify(text, g)
            gap = self._unanswered(plan, draft, g)
            if draft.passed and gap is None:
                provenance: Provenance = "model" if attempt == 1 else "model-repaired"
                yield self._model_final(plan, text, draft, model, attempt, caught, removed, provenance, t0, titles)
                return
            caught += draft.violations + ([gap] if gap and draft.passed else [])
            kept_text = draft.kept_text()
            kept = verify(kept_text, g) if kept_text else None
            if (
                kept is not None
                and kept.passed
                and len(kept.sentences) >= KEEP_SHARE * len(draft.sentences)
                and self._unanswered(plan, kept, g) is None
            ):
                removed += len(draft.sentences) - len(kept.sentences)
                yield self._model_final(
                    plan, kept_text, kept, model, attempt, caught, removed, "model-repaired", t0, titles
                )
                return
            if attempt >= 2 or not fitted.repair_fits or time.monotonic() >= deadline:
                break
            user = fitted.user + "\n" + self._repair_prompt(draft.violations or ([gap] if gap else []))
        yield from self._stream_template(plan, t0, attempt, caught, "model answer failed verification", reset=True)

    def _shape(self, plan: Plan, text: str) -> str:
        """The draft as an answer of its kind: a help-desk summary keeps its first lines only."""
        text = _drop_repeats(text.strip())
        if plan.intent is Intent.TRIAGE:
            text = "\n".join([ln for ln in text.splitlines() if ln.strip()][:TRIAGE_LINES])
        return text

    def _unanswered(self, plan: Plan, check: Verification, g: Grounding) -> Violation | None:
        """Why a clean draft does not answer: no sentence of the kind the question needs, or none about its subject.

        "P22, M07, P14." or a restated question is grounded and still no answer.
        """
        needs = _NEEDS[plan.intent]
        subject = set(plan.focus_codes[:3]) | ({"J01", "J02"} & plan.report.codes())
        useful = []
        for s in check.sentences:
            if not s.ok:
                continue
            kind = g.kinds.get(s.source or "", "")
            names_data = bool(quoted_spans(s.text) or RANKS.search(strip_quoted(s.text)))
            if (s.checked and kind in needs) or (plan.intent is Intent.FILE_OR_RANK and names_data):
                useful.append(s)
        if not useful:
            return Violation(kind="no-answer", text="", detail=f"no sentence answers a {plan.intent.value} question")
        if plan.intent in _ABOUT_FINDINGS and plan.focus:
            about = set()
            for s in useful:
                about |= set(CODE.findall(strip_quoted(s.text)))
                fact_code = (s.source or "").split(":", 1)[0]
                about |= {fact_code} if CODE.fullmatch(fact_code) else set()
                if g.kinds.get(s.source or "") in ("verdict", "data"):
                    about |= {"J01", "J02"}
            if not about & subject:
                return Violation(kind="no-answer", text="", detail=f"says nothing about {', '.join(sorted(subject))}")
        return None

    def _repair_prompt(self, violations: Sequence[Violation]) -> str:
        named = []
        for v in violations[:MAX_VIOLATIONS_NAMED]:
            named.append(f"- {v.kind}: {clean(v.text, 160)}")
        return self.prompts.render("repair", violations="\n".join(named) or NONE)

    def _model_final(
        self,
        plan: Plan,
        text: str,
        check: Verification,
        model: ChatModel,
        attempts: int,
        caught: list[Violation],
        removed: int,
        provenance: Provenance,
        t0: float,
        titles: dict[str, str],
    ) -> AnswerChunk:
        report = VerifierReport(
            passed=check.passed,
            violations=[*caught, *check.violations],
            sentences_total=len(check.sentences) + removed,
            sentences_removed=removed,
            attempts=attempts,
        )
        citations: list[Citation] = check.citations(titles)
        answer = Answer(
            text=text,
            intent=plan.intent.value,
            citations=citations,
            provenance=provenance,
            model=model.name,
            verifier=report,
            elapsed_s=time.monotonic() - t0,
        )
        return AnswerChunk(final=True, answer=answer)
