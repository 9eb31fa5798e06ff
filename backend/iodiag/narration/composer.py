"""Deterministic planning before any model: what the question asks, and the facts and documents that answer it.

``Composer.plan`` classifies the question (``intent/classify.py``), picks the findings it is about (named codes,
files, ranks, problem words, or the previous turn's subject for a follow-up), the facts about them, and the
knowledge passages that explain them. The model, if any, only phrases what the plan holds; the template
route writes it out directly.

``Conversation`` remembers the report and earlier turns, so "which file?" after "why is my job slow?"
is about the costliest finding's files.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from iodiag.analysis.models import Finding, Report, Severity
from iodiag.analysis.registry import CHECKS
from iodiag.knowledge.models import Passage
from iodiag.narration import fact_query
from iodiag.narration.checking.facts import (
    TOP_FILE_FACTS,
    Fact,
    FactKind,
    FactSheet,
    build_facts,
    problems,
    rank_findings,
)
from iodiag.narration.checking.grounding import CODE
from iodiag.narration.checking.untrusted import quote
from iodiag.narration.intent.classify import Intent, Question, classify
from iodiag.narration.knowledge import KnowledgeSource
from iodiag.narration.models import ChatTurn
from iodiag.narration.prompts import Phrasebook

log = logging.getLogger(__name__)

PROMPT_FOR_INTENT = {
    Intent.EXPLAIN_JOB: "explain-job",
    Intent.EXPLAIN_FINDING: "explain-finding",
    Intent.TRIAGE: "triage-summary",
}
EXPLAIN_TOP = 3  # findings told in full in a job explanation
FOCUS_MAX = 3
DOCS_PER_FINDING = 2
CONCEPT_DOCS = 3

_DETAIL: tuple[FactKind, ...] = ("finding", "evidence", "why", "fix")


_ABOUT_THE_JOB = frozenset(
    {Intent.EXPLAIN_JOB, Intent.EXPLAIN_FINDING, Intent.FILE_OR_RANK, Intent.HOW_TO_FIX, Intent.TRIAGE}
)
"""Intents whose answer reads the log's numbers (not a concept, a facility or another run)."""


@dataclass
class Plan:
    question: Question
    report: Report
    sheet: FactSheet
    focus: list[Finding] = field(default_factory=list)  # what the answer is about, most costly first
    facts: list[Fact] = field(default_factory=list)  # what the answer may say, most important first
    passages: list[Passage] = field(default_factory=list)
    by_code: dict[str, list[Passage]] = field(default_factory=dict)  # the passages fetched for each finding
    lead: Fact | None = None  # a plain fact question's answer (fact_query): the answer's first sentence
    lead_only: bool = False  # the fact answers the whole question: nothing the intent gathered follows it

    @property
    def intent(self) -> Intent:
        return self.question.intent

    @property
    def prompt(self) -> str:
        return PROMPT_FOR_INTENT.get(self.intent, "answer-question")

    @property
    def focus_codes(self) -> list[str]:
        return [f.code for f in self.focus]


# A follow-up that names only a direction ("and for reads?", "what about writes") switches the side.
_SIDE = re.compile(r"\b(?:reads?|reading|writes?|writing)\b", re.IGNORECASE)
_OST = re.compile(r"\bosts?\b", re.IGNORECASE)
_READ = re.compile(r"\bread", re.IGNORECASE)
_WRITE = re.compile(r"\bwrit", re.IGNORECASE)


def _dedupe_facts(facts: Sequence[Fact]) -> list[Fact]:
    seen: dict[str, Fact] = {}
    for f in facts:
        seen.setdefault(f.id, f)
    return list(seen.values())


def already_done(plan: Plan) -> list[Finding]:
    """What the question asks to switch on that the job already does (a finding of ``ok`` severity it names)."""
    return [f for f in plan.focus[:2] if f.severity is Severity.OK and f.code in plan.question.issue_codes]


# Fact questions that judge the job ("is it I/O bound?", "why is rank 0 slow?"): the verdict after the answer helps.
_JUDGEMENTS = frozenset({"io_bound", "slow_rank", "write_vs_read", "io_share"})


def _lead_only(q: Question, query: fact_query.Query) -> bool:
    """Whether a fact answers the whole question, so what the intent's builder gathered would follow it as noise:
    the off-topic reply after "did it use HDF5?", a card that merely names rank 3 after "how much did rank 3
    write?", the job's story after "how many GB did it write?". A "why", a judgement, a "which files/ranks"
    list, a concept or a facility question keeps its builder's material after the fact."""
    if q.text.lstrip().lower().startswith("why") or query.metric in _JUDGEMENTS:
        return False
    if q.intent in (Intent.OFF_TOPIC, Intent.COMPARE_RUNS):  # with no earlier run, both say "cannot answer"
        return True
    if q.intent is Intent.FILE_OR_RANK:
        return query.scope in ("rank", "interface")
    return q.intent is Intent.EXPLAIN_JOB


class Composer:
    def __init__(self, phrases: Phrasebook, knowledge: KnowledgeSource | None = None) -> None:
        self.phrases = phrases
        self.knowledge = knowledge

    # --- knowledge, never fatal ------------------------------------------------------------------

    def _for_finding(self, code: str, query: str | None, k: int, facility: str | None) -> list[Passage]:
        if self.knowledge is None:
            return []
        try:
            return self.knowledge.passages_for_finding(code, query=query, k=k, facility=facility)
        except Exception as exc:  # the answer is still right without documents
            log.warning("knowledge lookup for %s failed: %s", code, exc)
            return []

    def _docs(self, plan: Plan, code: str, k: int, by_question: bool = True) -> None:
        """The finding's documents, ranked by the question, or (``by_question`` off: the question is about the
        job, not this finding) by the finding's own title, which the index ranked when it was built."""
        query = plan.question.text or None if by_question else None
        found = self._for_finding(code, query, k, plan.sheet.context.facility)
        plan.by_code.setdefault(code, []).extend(found)
        plan.passages += found

    def _search(self, query: str, k: int, facility: str | None = None) -> list[Passage]:
        if self.knowledge is None or not query.strip():
            return []
        try:
            return self.knowledge.search(query, k, facility=facility)
        except Exception as exc:
            log.warning("knowledge search failed: %s", exc)
            return []

    # --- planning --------------------------------------------------------------------------------

    def plan(
        self,
        report: Report,
        question: str,
        previous_focus: Sequence[str] = (),
        *,
        intent: Intent | None = None,
        sheet: FactSheet | None = None,
    ) -> Plan:
        # "why is run_model.py slow?": the job's own program named like a file means the job, not a missing file
        question = fact_query.program_as_job(question, report)
        q = classify(question, report, self.phrases, has_history=bool(previous_focus))
        if intent is not None:
            q = dataclasses.replace(q, intent=intent)
        sheet = sheet or build_facts(report, self.phrases)
        plan = Plan(q, report, sheet)
        plan.focus = self._focus(report, q, previous_focus)
        builder = {
            Intent.EXPLAIN_JOB: self._explain_job,
            Intent.EXPLAIN_FINDING: self._explain_finding,
            Intent.FILE_OR_RANK: self._file_or_rank,
            Intent.HOW_TO_FIX: self._how_to_fix,
            Intent.CONCEPT: self._concept,
            Intent.FACILITY: self._facility,
            Intent.OFF_TOPIC: self._off_topic,
            Intent.COMPARE_RUNS: self._compare_runs,
            Intent.TRIAGE: self._triage,
        }[q.intent]
        plan.facts += self._absent(q, report)
        builder(plan)
        if intent is None and (query := fact_query.parse_about(question, report)) is not None:
            plan.lead = fact_query.answer(report, query)
            if plan.lead is not None:
                if _lead_only(q, query):
                    # The intent was a guess the fact answer replaces: what its builder gathered (the off-topic
                    # reply, a finding card that merely names the rank) would follow the answer as noise.
                    # The focus stays: a follow-up ("and for reads?") resolves against it.
                    plan.facts, plan.passages = [], []
                    plan.lead_only = True
                plan.facts.insert(0, plan.lead)
        if plan.lead is None and q.intent in _ABOUT_THE_JOB and (damaged := fact_query.damaged_lead(report)):
            # A log mostly of corrupt records: that comes before anything read from the rest of it
            plan.lead = damaged
            plan.facts.insert(0, damaged)
        plan.facts = _dedupe_facts(plan.facts)
        plan.passages = list({p.chunk_id: p for p in plan.passages}.values())
        return plan

    def _absent(self, q: Question, report: Report) -> list[Fact]:
        """Facts for what the question names and the report lacks, so an answer may say it is not there."""
        out = []
        named_absent = list(q.unknown_codes)
        if q.intent in (Intent.EXPLAIN_FINDING, Intent.HOW_TO_FIX) and not q.codes and not q.issue_codes:
            named_absent += [c for c in q.absent_topics if c in CHECKS]  # "is one of the OSTs slow?": no L04
        for code in dict.fromkeys(named_absent):
            text = self.phrases.sentence("code_absent", code=code, title=CHECKS[code].title)
            out.append(Fact(f"absent:{code}", "absent", text))
        for name in q.unknown_files:
            out.append(Fact(f"absent:file:{name}", "absent", self.phrases.sentence("file_not_found", name=quote(name))))
        for rank in q.ranks:
            slowest = report.io_share.slowest_rank if report.io_share else None
            if rank != slowest and not any(rank in f.ranks for f in report.findings):
                out.append(Fact(f"absent:rank:{rank}", "absent", self.phrases.sentence("rank_not_found", rank=rank)))
        return out

    def _focus(self, report: Report, q: Question, previous: Sequence[str]) -> list[Finding]:
        by_code = {f.code: f for f in report.findings}
        ranked = rank_findings(report)
        codes: list[str] = list(q.codes)
        if not codes and q.files:
            codes = [f.code for f in ranked if any(fe.path in q.files for fe in f.files)]
        if not codes and q.ranks:
            codes = [f.code for f in ranked if set(f.ranks) & set(q.ranks)]
        if not codes and q.issue_codes:
            codes = [c for c in q.issue_codes if by_code[c].severity is not Severity.OK] or list(q.issue_codes)
        if not codes and q.follow_up:
            # "and for reads?" after a question about writes: the same kind of answer, for the findings on the
            # other side (by what each finding's title says it is about), most costly first.
            side = _SIDE.search(q.text)
            if side is not None:
                word = _READ if side.group(0).lower().startswith("read") else _WRITE
                codes = [f.code for f in ranked if word.search(f.title) and f.severity is not Severity.OK]
            if not codes:
                codes = [c for c in previous if c in by_code]
        if not codes:
            pool = problems(report) or ranked
            codes = [f.code for f in pool]
        order = {f.code: i for i, f in enumerate(ranked)}
        if not q.codes:  # named codes keep the asker's order; found ones go by impact
            codes.sort(key=lambda c: order.get(c, -1))
        out: list[Finding] = []
        for c in dict.fromkeys(codes):
            f = by_code.get(c)
            if f is None or f in out:
                continue
            cause = by_code.get(f.explained_by or "")
            if cause is not None and cause not in out:
                # "What should we do about those slow ranks?": the cause that explains them comes first
                out.append(cause)
            out.append(f)
        return out

    def _job(self, plan: Plan) -> list[Fact]:
        s = plan.sheet
        return [f for f in (s.get("verdict"), s.get("job"), s.get("data")) if f is not None]

    def _detail(self, plan: Plan, code: str, kinds: Sequence[FactKind] = _DETAIL) -> list[Fact]:
        facts = plan.sheet.for_code(code, kinds)
        order = {k: i for i, k in enumerate(kinds)}
        return sorted(facts, key=lambda f: order[f.kind])

    def _explain_job(self, plan: Plan) -> None:
        s = plan.sheet
        io = [f for code in ("J01", "J02") for f in self._detail(plan, code, ("finding", "why", "fix"))]
        caveats = [c for c in (s.get("caveats"),) if c is not None]
        plan.facts += [*self._job(plan)[:1], *caveats, *io, *self._job(plan)[1:]]
        top = [f for f in plan.focus if f.severity is not Severity.OK][:EXPLAIN_TOP]
        for i, f in enumerate(top):
            plan.facts += self._detail(plan, f.code)
            if i == 0:
                plan.facts += self._detail(plan, f.code, ("file", "ranks"))[:2]
            self._docs(plan, f.code, 1, by_question=False)
        summary = s.get("summary")
        if summary:
            plan.facts.append(summary)
        rest = [f for f in plan.focus[EXPLAIN_TOP:] if f.severity is not Severity.OK]
        plan.facts += [x for f in rest for x in self._detail(plan, f.code, ("finding",))]
        xl = s.get("crosslayer")
        if xl:
            plan.facts.append(xl)

    def _explain_finding(self, plan: Plan) -> None:
        q = plan.question
        if q.unknown_codes and not q.codes:  # "what is P08?" when P08 did not fire: what it means in general
            for code in q.unknown_codes[:2]:
                self._docs(plan, code, 1)
            plan.focus = []
            plan.facts += self._job(plan)[:1]
            if plan.sheet.get("summary"):
                plan.facts.append(plan.sheet.facts["summary"])
            return
        for f in plan.focus[:2]:
            plan.facts += self._detail(plan, f.code, ("finding", "evidence", "why", "fix", "file", "ranks"))
            self._docs(plan, f.code, DOCS_PER_FINDING)
        plan.facts += self._job(plan)[:1]
        if plan.sheet.get("summary"):
            plan.facts.append(plan.sheet.facts["summary"])

    def _file_or_rank(self, plan: Plan) -> None:
        q = plan.question
        d03 = plan.sheet.get("D03")
        if d03 is not None:  # "which file is slowest?" of a log with no I/O: that is the answer
            plan.facts.append(d03)
        want: tuple[FactKind, ...] = ("finding", "file") if q.asks_files or not q.asks_ranks else ("finding", "ranks")
        with_subject = [
            f
            for f in plan.focus
            if (f.files if "file" in want else f.ranks) and (not q.ranks or set(f.ranks) & set(q.ranks) or q.codes)
        ]
        # For files, one finding per family (P16 is P06 on shared files, naming the same files): a second slot
        # goes to a different problem. Ranks keep both (J03 and P17 name ranks differently).
        families: set[str] = set()
        distinct = []
        for f in with_subject:
            family = CHECKS[f.code].family if f.code in CHECKS else f.code
            if "file" in want and family and family in families and f.code not in q.codes:
                continue
            families.add(family or f.code)
            distinct.append(f)
        with_subject = distinct
        chosen = with_subject[: 3 if "ranks" in want else 2] or plan.focus[:1]
        plan.focus = chosen + [f for f in plan.focus if f not in chosen]
        if "file" in want:  # which files took the time, whether or not a finding names them
            plan.facts += [t for i in range(TOP_FILE_FACTS) if (t := plan.sheet.get(f"topfile:{i}"))]
        for f in chosen:
            plan.facts += self._detail(plan, f.code, (*want, "why"))
        if _OST.search(q.text) and (ost := plan.sheet.get("ost:top")) is not None:
            plan.facts.append(ost)  # "which OST is slowest?"
        # "How many OSTs should out.dat use?" names a file: its layout, when assessed, is the answer.
        plan.facts += [
            x
            for i, lay in enumerate(plan.report.lustre_layouts)
            if (not q.files or lay.path in q.files) and (x := plan.sheet.get(f"layout:{i}"))
        ]
        data = plan.sheet.get("data")
        if data and q.asks_ranks:
            plan.facts.append(data)
        plan.facts += self._job(plan)[:1]
        if plan.sheet.get("summary"):
            plan.facts.append(plan.sheet.facts["summary"])

    def _how_to_fix(self, plan: Plan) -> None:
        already = already_done(plan)
        if already and all(f.severity is Severity.OK for f in plan.focus):
            # "Should I switch to collective writes?" when they are: say so, then what does cost time.
            plan.focus = [*plan.focus, *(f for f in problems(plan.report) if f not in plan.focus)]
        for f in already:
            plan.facts += self._detail(plan, f.code, ("finding",))
        plan.facts += self._job(plan)[:1]
        # The assessed Lustre layouts: the template leads with them when the question is about striping.
        plan.facts += [x for i in range(len(plan.report.lustre_layouts)) if (x := plan.sheet.get(f"layout:{i}"))]
        if plan.report.finding("J01") is not None:  # the first fix for a job I/O does not slow: look elsewhere
            plan.facts += self._detail(plan, "J01", ("finding", "fix"))
        targets = [f for f in plan.focus if f.severity is not Severity.OK][:FOCUS_MAX] or plan.focus[:1]
        for f in targets:
            plan.facts += self._detail(plan, f.code, ("finding", "fix", "why", "evidence"))
            self._docs(plan, f.code, 1, by_question=False)
        if plan.sheet.get("summary"):
            plan.facts.append(plan.sheet.facts["summary"])

    def _concept(self, plan: Plan) -> None:
        plan.passages += self._search(plan.question.text, CONCEPT_DOCS)
        for f in plan.focus:
            if f.code in plan.question.issue_codes or f.code in plan.question.codes:
                plan.facts += self._detail(plan, f.code, ("finding", "why"))
        if plan.sheet.get("summary"):
            plan.facts.append(plan.sheet.facts["summary"])

    def _facility(self, plan: Plan) -> None:
        q = plan.question
        facility = q.facility or plan.sheet.context.facility
        plan.passages += self._search(q.text, CONCEPT_DOCS, facility=facility) if facility else []
        if not plan.passages:
            plan.passages += self._search(q.text, 2)
        plan.facts += self._job(plan)[:1]
        where = plan.sheet.get("facility")
        if where:
            plan.facts.append(where)
        for f in [f for f in plan.focus if f.severity is not Severity.OK][:2]:
            plan.facts += self._detail(plan, f.code, ("finding", "fix"))
        if plan.sheet.get("summary"):
            plan.facts.append(plan.sheet.facts["summary"])

    def _off_topic(self, plan: Plan) -> None:
        summary = plan.sheet.get("summary")
        plan.facts += [summary] if summary else []

    def _compare_runs(self, plan: Plan) -> None:
        # Answered from a comparison with an earlier run (comparison_answer.py), not from this report alone:
        # the plan keeps the verdict so a caller without an earlier run can still say where this run stands.
        verdict = plan.sheet.get("verdict")
        plan.facts += [verdict] if verdict else []

    def _triage(self, plan: Plan) -> None:
        plan.facts += self._job(plan)[:1]
        s = plan.sheet
        plan.facts += [f for f in (s.get("J01"), s.get("J02")) if f]
        top = [f for f in plan.focus if f.severity is not Severity.OK][:1]
        for f in top:
            plan.facts += self._detail(plan, f.code, ("finding", "evidence", "fix"))[:3]
        if s.get("summary"):
            plan.facts.append(s.facts["summary"])


# A follow-up that only shifts the subject of the previous question ("and for reads?", "what about rank 3?").
_SAME_AGAIN = re.compile(r"^\W*(?:and|what about|how about|same (?:for|with)|and for|and the)\b[^?]{0,30}\??\W*$", re.I)
_CARRIED = frozenset({Intent.FILE_OR_RANK, Intent.HOW_TO_FIX, Intent.EXPLAIN_FINDING})


class Conversation:
    """One chat about one report: earlier turns decide what a follow-up question is about."""

    def __init__(self, report: Report, composer: Composer, history: Sequence[ChatTurn] = ()) -> None:
        self.report = report
        self.composer = composer
        self.sheet = build_facts(report, composer.phrases)
        self.history: list[ChatTurn] = []
        self.focus: list[str] = []
        self.last_intent: Intent | None = None
        replay = Composer(composer.phrases, None)  # earlier turns only decide the subject: no documents needed
        for turn in history:
            if turn.role == "user":
                earlier = replay.plan(report, turn.text, self.focus, sheet=self.sheet)
                self.focus, self.last_intent = earlier.focus_codes, earlier.intent
            else:
                self._note_answer(turn.text)
            self.history.append(turn)

    def _note_answer(self, text: str) -> None:
        # The subject of the conversation is what the last answer talked about, in the order it did.
        cited = [c for c in dict.fromkeys(CODE.findall(text)) if c in self.report.codes() and c not in ("J01", "J02")]
        if cited:
            self.focus = cited

    def plan(self, question: str, intent: Intent | None = None) -> Plan:
        if intent is None and self.last_intent in _CARRIED and _SAME_AGAIN.search(question):
            own = classify(question, self.report, self.composer.phrases, has_history=True).intent
            if own is Intent.EXPLAIN_JOB:  # nothing of its own: "and for reads?" after "which file?" is one too
                intent = self.last_intent
        return self.composer.plan(self.report, question, self.focus, intent=intent, sheet=self.sheet)

    def record(self, question: str, plan: Plan, answer_text: str) -> None:
        self.history += [ChatTurn(role="user", text=question), ChatTurn(role="assistant", text=answer_text)]
        self.focus = plan.focus_codes
        self._note_answer(answer_text)
