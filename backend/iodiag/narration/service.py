"""The narration layer's public API: :class:`Narrator`, used by the REST service and the ``ask`` command.

An answer goes: plan (``composer.py``) -> the template route (the default: ``templates.py`` writes it from
the facts, the verifier checks it), or, when a model is configured, prompt fitted to the window
(``budget.py``) -> model stream -> sentence gate (``gate.py``): each sentence is shown only once it passed the
verifier. A draft all of whose sentences pass is the answer ("model"); one that lost some but still answers
the question is "model-repaired". Otherwise, or when the model is missing, broken or out of time, the
template's answer follows whatever passed ("template"). Nothing shown is ever withdrawn.

The bundled model (``ChatModel.rephrases``) gets a smaller job than drafting: the template writes and verifies the
answer, and the model rewords it one sentence at a time under a grammar built from the sentence's own facts
(``rephrase.py``); a rewording that fails the verifier or loses a fact is replaced by the original sentence.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime

from iodiag.analysis.models import Report, Severity
from iodiag.comparison import Comparison, executable
from iodiag.core.settings import Settings, get_settings
from iodiag.knowledge.models import Passage
from iodiag.narration import tools
from iodiag.narration.budget import Budget, Fitted, fit
from iodiag.narration.checking.facts import Fact
from iodiag.narration.checking.gate import SentenceGate
from iodiag.narration.checking.grounding import CODE, RANKS, Grounding
from iodiag.narration.checking.untrusted import clean, quoted_spans, strip_quoted
from iodiag.narration.checking.verifier import Verification, split_sentences, verify
from iodiag.narration.comparison_answer import answer_comparison
from iodiag.narration.composer import Composer, Conversation, Plan
from iodiag.narration.intent.classify import Intent
from iodiag.narration.knowledge import KnowledgeSource, open_knowledge
from iodiag.narration.model.llm import ChatModel, LLMError, Turn, get_model, tool_turns
from iodiag.narration.models import Answer, AnswerChunk, ChatTurn, Citation, Provenance, VerifierReport, Violation
from iodiag.narration.prompts import PromptLibrary
from iodiag.narration.rephrase import BUDGET_S, FIRST_SENTENCE_S, SENTENCE_S, Rephraser, Rephrasing, worth_rephrasing
from iodiag.narration.templates import TemplateWriter

__all__ = ["Narrator"]

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
        observe: Callable[[Rephrasing], None] | None = None,
    ) -> Iterator[AnswerChunk]:
        """Stream an answer: verified text pieces, then one final chunk holding the checked :class:`Answer`.

        Model trouble never raises: it ends in the template answer, except a model process that dies mid-answer
        (:class:`~iodiag.narration.model.llm.ModelCrashed`), which the caller reports as an error. A question about
        this run against an earlier one is answered from ``comparison`` (earlier run A, this run B), or says
        there is none to compare with. ``observe`` is told what became of each sentence a model rewords (for
        the eval and the benchmarks).
        """
        t0 = time.monotonic()
        conversation = Conversation(report, self.composer(), history)
        plan = conversation.plan(question)
        if plan.intent is Intent.COMPARE_RUNS and plan.lead is None:  # "did it use HDF5?" asks this run's facts
            answer = answer_comparison(comparison, executable(report.job.exe), previous_start, t0=t0)
            for line in answer.text.splitlines():
                yield AnswerChunk(delta=line + "\n")
            yield AnswerChunk(final=True, answer=answer)
            return
        yield from self._run(plan, conversation.history, t0, observe)

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
        self, plan: Plan, t0: float, attempts: int, caught: list[Violation], note: str
    ) -> Iterator[AnswerChunk]:
        answer = self._template(plan, t0, attempts, caught, note)
        for line in answer.text.splitlines(keepends=False):
            yield AnswerChunk(delta=line + "\n")
        yield AnswerChunk(final=True, answer=answer)

    def _run(
        self,
        plan: Plan,
        history: Sequence[ChatTurn],
        t0: float,
        observe: Callable[[Rephrasing], None] | None = None,
    ) -> Iterator[AnswerChunk]:
        if plan.intent is Intent.OFF_TOPIC:  # a redirect needs no model, and must not be talked out of
            yield from self._stream_template(plan, t0, 0, [], "")
            return
        try:
            model = self.model()
        except LLMError as exc:
            yield from self._stream_template(plan, t0, 0, [], f"no model: {exc}")
            return
        if model is None:
            yield from self._stream_template(plan, t0, 0, [], "")
            return
        if model.rephrases:
            yield from self._rephrase_route(plan, model, t0, observe)
            return
        yield from self._model_route(plan, history, model, t0)

    def _rephrase_route(
        self, plan: Plan, model: ChatModel, t0: float, observe: Callable[[Rephrasing], None] | None
    ) -> Iterator[AnswerChunk]:
        """The template's answer, each prose sentence reworded by the model and streamed as soon as it is decided.

        The facts stay the template's: a rewording is shown only when it passed the verifier and kept every
        number, name, code and command of its original, which is shown otherwise. The first sentence gets
        ``FIRST_SENTENCE_S`` and the whole answer ``BUDGET_S`` of model time; what is left then is shown as
        written, so a slow or busy model delays an answer by seconds, never more.
        """
        written = self.writer.write(plan).strip()
        g = self.grounding(plan, plan.facts, plan.passages)
        rephraser = Rephraser(model, self.prompts, g, plan.question.text, self.settings.llm_seed)
        stop_at = min(t0 + self.settings.llm_timeout_s, t0 + BUDGET_S)
        caught: list[Violation] = []
        lines: list[str] = []
        tried = reworded = late = 0
        for n, (prefix, sentences) in enumerate(split_sentences(written)):
            shown: list[str] = []
            for sentence in sentences:
                now = time.monotonic()
                prose = worth_rephrasing(sentence)
                if prose and now < stop_at:
                    limit = min(stop_at, now + (FIRST_SENTENCE_S if tried == 0 else SENTENCE_S))
                    outcome = rephraser.one(sentence, n, limit)  # ModelCrashed goes to the caller
                    tried += 1
                else:
                    late += prose
                    outcome = Rephrasing(sentence, sentence, "skipped")
                if observe is not None:
                    observe(outcome)
                caught += outcome.violations
                reworded += outcome.outcome == "rephrased"
                yield AnswerChunk(delta=prefix + outcome.shown if not shown else " " + outcome.shown)
                shown.append(outcome.shown)
            yield AnswerChunk(delta="\n")
            lines.append(prefix + " ".join(shown) if shown else "")
        text = "\n".join(lines).strip()
        check = verify(text, g)
        report = VerifierReport(
            passed=check.passed,
            violations=[*caught, *check.violations],
            sentences_total=len(check.sentences),
            sentences_removed=0,
            attempts=tried,
        )
        answer = Answer(
            text=text,
            intent=plan.intent.value,
            citations=check.citations(self._titles(plan)),
            provenance="model" if reworded else "template",
            model=model.name if reworded else None,
            verifier=report,
            elapsed_s=time.monotonic() - t0,
            note=f"model reworded {reworded} of {tried} sentence(s) tried"
            + (f"; out of time for {late} more" if late else "")
            + "; the rest as the template wrote them",
        )
        yield AnswerChunk(final=True, answer=answer)

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
        """Stream the model's draft one checked sentence at a time: a sentence reaches the client only once it
        has passed the verifier, so nothing shown is ever taken back and no prompt text gets through. When what
        passed does not answer the question, the template's answer follows it.

        An endpoint that can call functions first may look things up with the report's tools (``tools/``);
        what they return joins the facts its answer is checked against."""
        deadline = t0 + self.settings.llm_timeout_s
        reserve = (
            tools.reserve_tokens(model.count_tokens, model.context_tokens, model.max_answer_tokens)
            if model.offers_tools
            else None
        )

        def fitted_to(window: int) -> Fitted:
            return fit(
                self.prompts,
                plan.prompt,
                self._prompt_inputs(plan),
                plan.facts,
                plan.passages,
                [] if plan.prompt == "triage-summary" else history,
                Budget(window, model.max_answer_tokens),
                model.count_tokens,
            )

        fitted = fitted_to(model.context_tokens - (reserve or 0))
        turns: list[Turn] = [("system", fitted.system), ("user", fitted.user)]
        tool_facts: list[Fact] = []
        if reserve is not None:
            turns, tool_facts = self._tool_round(plan, model, turns, deadline)
            if len(turns) == 2:  # no tool was called: the prompt may have the whole window again
                fitted = fitted_to(model.context_tokens)
                turns = [("system", fitted.system), ("user", fitted.user)]
        g = self.grounding(
            plan, [*fitted.facts, *tool_facts], fitted.passages, echo=(fitted.system, fitted.instructions)
        )
        gate = SentenceGate(g, max_lines=TRIAGE_LINES if plan.intent is Intent.TRIAGE else None)
        failure = ""
        try:
            for piece in model.stream(turns, deadline, seed=self.settings.llm_seed):
                for delta in gate.feed(piece):
                    yield AnswerChunk(delta=delta)
                if gate.full:
                    break
        except LLMError as exc:
            failure = f"model: {exc}"
        for delta in gate.finish():
            yield AnswerChunk(delta=delta)
        text = gate.text()
        check = verify(text, g) if text else None
        if check is not None and check.passed and not failure:
            total = len(check.sentences) + len(gate.dropped)
            if len(check.sentences) >= KEEP_SHARE * total and self._unanswered(plan, check, g) is None:
                provenance: Provenance = "model" if not gate.dropped else "model-repaired"
                yield self._model_final(plan, text, check, model, 1, gate.dropped, len(gate.dropped), provenance, t0)
                return
        # What passed stays on screen; the report's own answer completes it.
        note = failure or ("model answer failed verification" if not text else "model answer incomplete")
        answer = self._template(plan, t0, 1, gate.dropped, note)
        rest = answer.text.splitlines()
        if gate.max_lines is not None:  # a short answer stays short
            room = gate.max_lines - sum(1 for ln in text.splitlines() if ln.strip())
            rest = [ln for ln in rest if ln.strip()][: max(room, 0)]
        if text and rest:
            yield AnswerChunk(delta="\n")
        for line in rest:
            yield AnswerChunk(delta=line + "\n")
        combined = "\n\n".join(part for part in (text, "\n".join(rest).strip()) if part)
        yield AnswerChunk(final=True, answer=answer.model_copy(update={"text": combined}))

    def _tool_round(
        self, plan: Plan, model: ChatModel, turns: list[Turn], deadline: float
    ) -> tuple[list[Turn], list[Fact]]:
        """Up to ``MAX_TOOL_ROUNDS`` requests offering the tools, each call run on the report and answered with a
        ``tool`` message: the conversation the answer is then streamed from, and the facts the results add.

        Any failure (an endpoint that refuses tools, a timeout, a reply that is not a completion) ends the rounds:
        the answer goes on from what completed, the plain prompt when nothing did.
        """
        convo = list(turns)
        facts: list[Fact] = []
        room = tools.RESULT_TOKENS
        schemas = tools.schemas()
        # A forced choice names the same function every round: a second round would only repeat the call.
        rounds = 1 if isinstance(model.tool_choice, dict) else tools.MAX_TOOL_ROUNDS
        for _ in range(rounds):
            try:
                reply = model.call_tools(convo, schemas, deadline, seed=self.settings.llm_seed)
            except LLMError:  # refused, out of time or broken: the answer needs no tools
                break
            if not reply.tool_calls:
                break
            calls = [(c.id, c.function.name, c.function.arguments) for c in reply.tool_calls]
            answered = tools.run_calls(plan.report, calls, model.count_tokens, room)
            room = answered.room
            facts += answered.facts
            convo += tool_turns(reply, answered.results)
        return convo, facts

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
    ) -> AnswerChunk:
        report = VerifierReport(
            passed=check.passed,
            violations=[*caught, *check.violations],
            sentences_total=len(check.sentences) + removed,
            sentences_removed=removed,
            attempts=attempts,
        )
        citations: list[Citation] = check.citations(self._titles(plan))
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
