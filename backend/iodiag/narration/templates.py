"""The template route: a complete answer written from a plan's facts and documents, with no model.

Every sentence is a fact from the report or a phrase-book sentence (``prompts/phrases.v1.yaml``) with
the report's values filled in, so the verifier passes it by construction. It is the answer when there
is no model, and the fallback when the model's answer fails verification or runs out of time.
"""

from __future__ import annotations

import re

from iodiag.analysis.models import Finding, Layer, Severity
from iodiag.analysis.outcomes.verdict import by_verdict
from iodiag.core.units import human_seconds
from iodiag.knowledge.models import Passage
from iodiag.narration.checking.facts import TOP_FILE_FACTS, Fact
from iodiag.narration.checking.untrusted import clean
from iodiag.narration.checking.verifier import split_sentences
from iodiag.narration.composer import Plan, already_done
from iodiag.narration.intent.classify import Intent
from iodiag.narration.prompts import Phrasebook
from iodiag.render import wording

PASSAGE_SENTENCES = 3  # of a document section quoted in a concept or facility answer


_TITLE_CODES = re.compile(r"\s*\((?:[A-Z]\d{2}(?:,\s*|\s*\)))+")


def doc_title(title: str) -> str:
    """A document title without its trailing list of finding codes ("Redundant reads (P09, P10)")."""
    return clean(_TITLE_CODES.sub("", title), 200)


def _prose(text: str) -> str:
    """A passage's running text: tables, code blocks and headings left out (they do not read as an answer)."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or s.startswith(("|", "#")):
            continue
        out.append(s)
    return " ".join(" ".join(out).split())


def _first_sentences(text: str, n: int) -> str:
    sentences = [s for _prefix, parts in split_sentences(_prose(text)) for s in parts if not s.endswith(":")]
    return " ".join(sentences[:n])


_SAVINGS = re.compile(
    r"\bhow much (?:time |faster |quicker )?(?:\w+ )?(?:would|could|can|will|do|does|might)\b.*\b(?:save|gain|win|"
    r"speed|faster|shave|cut)|\bhow much (?:would|could|can) (?:i|we|it|that|this) (?:save|gain)|"
    r"\bsav(?:e|ing|ings)\b.*\bhow much\b|\bhow much faster\b|\bworth (?:it|fixing)\b|"
    r"\bexpected (?:gain|saving|speed-?up)",
    re.IGNORECASE,
)
_WORST = re.compile(
    r"\b(?:worst|most|busiest|slowest|biggest|largest|top|heaviest|eating)\b|\ball (?:the|of the) (?:writes|reads|"
    r"bytes|data|time|i/o)\b",
    re.IGNORECASE,
)
_MPI_WORDS = re.compile(r"\bmpi|\bcollective|\bromio|\baggregat", re.IGNORECASE)
# Asking what to set (stripe count, setstripe, how many OSTs), not which OST did what.
_LUSTRE_WORDS_SETTING = re.compile(r"\bstrip(?:e|es|ing)\b|\bsetstripe\b|\bhow many osts\b", re.IGNORECASE)
_LUSTRE_WORDS = re.compile(r"\blfs\b|\bstrip(?:e|es|ing)\b|\bosts?\b|\blustre\b", re.IGNORECASE)


class TemplateWriter:
    def __init__(self, phrases: Phrasebook) -> None:
        self.p = phrases

    def write(self, plan: Plan) -> str:
        writer = {
            Intent.EXPLAIN_JOB: self._explain_job,
            Intent.EXPLAIN_FINDING: self._explain_finding,
            Intent.FILE_OR_RANK: self._file_or_rank,
            Intent.HOW_TO_FIX: self._how_to_fix,
            Intent.CONCEPT: self._concept,
            Intent.FACILITY: self._facility,
            Intent.OFF_TOPIC: self._off_topic,
            Intent.COMPARE_RUNS: self._off_topic,  # the narrator answers these from a comparison instead
            Intent.TRIAGE: self._triage,
        }[plan.intent]
        if plan.lead is not None and plan.lead_only:
            return plan.lead.text.strip() + "\n"
        absent = [f.text for f in plan.facts if f.kind == "absent"]
        body = writer(plan)
        layouts = {f.text for f in plan.facts if f.id.startswith("layout:")}
        if absent and body and body[0] in layouts and "" in body:
            # The files' own layouts answer a striping question; what the job does not have comes after them.
            cut = body.index("")
            lines = [*body[:cut], *absent, *body[cut:]]
        else:
            lines = absent + body
        if plan.lead is not None:
            # A plain fact question: its answer first, then what the report has to say around it.
            lines = [plan.lead.text, "", *(ln for ln in lines if ln not in absent)]
        return "\n".join(lines).strip() + "\n"

    def reply_body(self, plan: Plan) -> str:
        """The body of a help-desk reply to the job's owner: the verdict, then what to change and why."""
        verdict = self._verdict(plan)
        fix = [ln for ln in self._how_to_fix(plan) if ln not in verdict]
        while fix and not fix[0].strip():
            fix = fix[1:]
        return "\n".join([*verdict, "", *fix] if verdict else fix).strip() + "\n"

    # --- pieces ----------------------------------------------------------------------------------

    def _fact(self, plan: Plan, fact_id: str) -> Fact | None:
        return next((f for f in plan.facts if f.id == fact_id), None)

    def _verdict(self, plan: Plan) -> list[str]:
        v = self._fact(plan, "verdict") or plan.sheet.get("verdict")
        if v is None:
            return []
        cite = next((code for code in ("J01", "J02") if plan.report.finding(code)), None)
        line = v.text + (f" [{cite}]" if cite else "")
        if plan.report.io_share is None and plan.report.finding("D03") is None:
            line += " " + self.p.sentence("verdict_unknown_io")
        return [line]

    def _head(self, plan: Plan, f: Finding) -> str:
        # What it costs, right by its name: "is X a problem?" and "how much would that save?" are answered here.
        cost = wording.cost_text(f)
        priced = cost is not None and f.impact is not None and f.impact.seconds is not None
        severity = f.severity.value + (f"; {cost.rsplit(', ', 1)[0]}" if priced and cost else "")
        return self.p.sentence(
            "finding_head", code=f.code, title=clean(f.title), severity=severity, message=self._message(plan, f)
        )

    def _message(self, plan: Plan, f: Finding) -> str:
        # The finding fact is "title (severity, layer): message", the message's paths already quoted.
        fact = plan.sheet.get(f.code)
        return fact.text.split("): ", 1)[-1] if fact else clean(f.message, 2000)

    def _why(self, plan: Plan, f: Finding) -> list[str]:
        why = self._fact(plan, f"{f.code}:why")
        return [self.p.sentence("why", text=self.p.why[f.code])] if why else []

    def _fixes(self, plan: Plan, f: Finding, limit: int = 2, seen: dict[str, str] | None = None) -> list[str]:
        """The finding's fixes; one already given in this answer (``seen``: text -> code) is referred to."""
        out: list[str] = []
        seen = {} if seen is None else seen
        for fact in [x for x in plan.facts if x.code == f.code and x.kind == "fix"][:limit]:
            text = fact.text.split("): ", 1)[-1]
            if text in seen:
                if not out:
                    out.append(self.p.sentence("fix_same", code=seen[text]))
                continue
            seen[text] = f.code
            out.append(self.p.sentence("fix" if not out else "fix_also", text=text))
        return out

    def _docs(self, plan: Plan, code: str, limit: int = 1, seen: set[str] | None = None) -> list[str]:
        """References to the finding's documents not yet cited in this answer (``seen``: doc ids)."""
        given = {p.chunk_id for p in plan.passages}
        docs = [p for p in plan.by_code.get(code, []) if p.chunk_id in given]
        out: list[str] = []
        seen = set() if seen is None else seen
        for p in docs:
            if p.doc_id in seen:
                continue
            seen.add(p.doc_id)
            out.append(self.p.sentence("doc_ref", title=doc_title(p.title), id=p.doc_id))
            if len(out) >= limit:
                break
        return out

    def _evidence(self, plan: Plan, f: Finding) -> list[str]:
        ev = self._fact(plan, f"{f.code}:evidence")
        return [ev.text] if ev else []

    def _files(self, plan: Plan, f: Finding) -> list[str]:
        out = [x.text for x in plan.facts if x.code == f.code and x.kind == "file"]
        return out

    def _ranks(self, plan: Plan, f: Finding) -> list[str]:
        r = self._fact(plan, f"{f.code}:ranks")
        return [r.text] if r else []

    def _more(self, plan: Plan, told: list[Finding]) -> list[str]:
        rest = [f.code for f in plan.report.findings if f not in told and f.code not in ("J01", "J02")]
        if not rest:
            return []
        return [self.p.sentence("more_findings", codes=", ".join(rest))]

    # --- answers ---------------------------------------------------------------------------------

    def _explain_job(self, plan: Plan) -> list[str]:
        lines = self._verdict(plan)
        caveats = self._fact(plan, "caveats")
        if caveats is not None:
            lines.append(caveats.text)
        job = self._fact(plan, "job")
        if job:
            lines.append(job.text)
        j01 = plan.report.finding("J01")
        if j01 is not None:
            lines += self._fixes(plan, j01, 1)
        told = [f for f in plan.focus if f.severity is not Severity.OK][:3]
        if not told:
            lines += ["", self.p.sentence("no_problems") if plan.report.findings else self.p.sentence("no_findings")]
            return lines
        if not any(f.severity in (Severity.CRITICAL, Severity.WARNING) for f in told):
            intro = "findings_intro"  # nothing to fix: what the report says, for context
        else:
            intro = "minor_intro" if j01 is not None else "problems_intro"
        lines += ["", self.p.sentence(intro)]
        fixes: dict[str, str] = {}
        docs: set[str] = set()
        for i, f in enumerate(told, 1):
            lines.append(f"{i}. {self._head(plan, f)}")
            body = self._why(plan, f) + self._fixes(plan, f, 1, fixes) + self._docs(plan, f.code, 1, docs)
            lines += [f"   {x}" for x in body]
        more = self._more(plan, told)
        if more:
            lines += ["", *more]
        return lines

    def _explain_finding(self, plan: Plan) -> list[str]:
        lines: list[str] = []
        shown = [f for f in plan.focus[:2] if self._fact(plan, f.code)]
        if not shown:  # the question named only codes the report lacks: say what they are, then the job
            return [*self._passage_lines(plan.passages, 2), *self._verdict(plan), *self._more(plan, [])]
        fixes: dict[str, str] = {}
        docs: set[str] = set()
        for f in shown:
            if lines:
                lines.append("")
            lines.append(self._head(plan, f))
            lines += self._evidence(plan, f)
            lines += [f"- {x}" for x in self._files(plan, f)]
            lines += self._ranks(plan, f)
            lines += self._why(plan, f)
            lines += self._fixes(plan, f, 3, fixes)
            lines += self._docs(plan, f.code, 2, docs)
        # "Is X the problem?" about something that is not the costliest cause: the answer is also where the
        # time went, so the verdict (which names the costliest cause and its seconds) follows.
        causes = plan.report.verdict.causes
        if causes and causes[0].code not in {f.code for f in shown}:
            lines += ["", *self._verdict(plan)]
        return lines

    def _file_or_rank(self, plan: Plan) -> list[str]:
        q = plan.question
        lines: list[str] = []
        d03 = plan.report.finding("D03")
        if d03 is not None and self._fact(plan, "D03"):
            return [self._head(plan, d03)]
        ost = self._fact(plan, "ost:top")
        layouts = [x.text for x in plan.facts if x.id.startswith("layout:")]
        if ost is not None and not _LUSTRE_WORDS_SETTING.search(q.text):
            lines += [ost.text, ""]  # "which OST is slowest?": the OSTs first
        elif layouts and _LUSTRE_WORDS.search(q.text):
            lines += [*layouts[:2], ""]  # a striping question about files: their layouts first
        if q.files:
            for name in q.files:
                codes = [f.code for f in plan.report.findings if any(fe.path == name for fe in f.files)]
                lines.append(self.p.sentence("file_findings", name=f"`{clean(name)}`", codes=", ".join(codes)))
        for rank in q.ranks:
            codes = [f.code for f in plan.report.findings if rank in f.ranks]
            if codes:
                lines.append(self.p.sentence("rank_findings", rank=rank, codes=", ".join(codes)))
        want_files = q.asks_files or not q.asks_ranks
        # Only what the plan gathered facts for (the composer keeps one finding per family for files).
        shown = [
            f
            for f in plan.focus[: 2 if want_files else 3]
            if (f.files if want_files else f.ranks) and self._fact(plan, f.code)
        ]
        top = [t for i in range(TOP_FILE_FACTS) if (t := self._fact(plan, f"topfile:{i}"))]
        if want_files and top and not q.files and (not shown or _WORST.search(q.text)):
            # The question's answer first: the files the time went to, then what the findings say of them.
            lines += [top[0].text, *[f"- {x.text}" for x in top[1:]]]
        for f in shown:
            if lines:
                lines.append("")
            if want_files:
                lines.append(self.p.sentence("files_head", code=f.code, title=clean(f.title)) + f" [{f.code}]")
                lines += [f"- {x}" for x in self._files(plan, f)]
            else:
                lines += [self._head(plan, f), *self._ranks(plan, f)]
            lines += self._why(plan, f)
        if not shown and not (want_files and top):
            named = ", ".join(f.code for f in plan.focus[:3]) or "none"
            lines.append(self.p.sentence("files_none" if want_files else "ranks_none", codes=named))
        share = plan.report.io_share
        if q.asks_ranks and share is not None and share.slowest_rank is not None and self._fact(plan, "data"):
            busiest = self.p.sentence(
                "busiest_rank", rank=share.slowest_rank, io_time=human_seconds(share.slowest_rank_io_s)
            ) + (" [J02]" if plan.report.finding("J02") is not None else "")
            # "Which rank is slowest?" is answered by its first sentence; other rank questions end with it.
            lines = [busiest, "", *lines] if _WORST.search(q.text) and not q.ranks else [*lines, "", busiest]
        return lines

    def _how_to_fix(self, plan: Plan) -> list[str]:
        # A finding with nothing to do (P01 "write-intensive") describes the job; it is no fix to list unless
        # the question is about it ("should I switch to MPI-IO?" and M01 "no MPI-IO").
        asked = {*plan.question.codes, *plan.question.issue_codes}
        mpi = bool(_MPI_WORDS.search(plan.question.text))
        targets = [
            f
            for f in plan.focus
            if f.severity is not Severity.OK
            and (f.recommendations or f.actions or f.code in asked or (mpi and f.layer is Layer.MPIIO))
            and self._fact(plan, f.code)
        ]
        # The verdict's ranking, where it ranks them: the list agrees with the headline above it.
        place = by_verdict(plan.report.verdict)
        targets = sorted(targets, key=lambda f: place(f.code))[:3]
        lines: list[str] = []
        q = plan.question.text
        if plan.sheet.context.single and _MPI_WORDS.search(q):
            m01 = " [M01]" if plan.report.finding("M01") is not None else ""
            lines += [self.p.sentence("single_no_mpi") + m01, ""]
        fs = plan.report.file_system
        if _LUSTRE_WORDS.search(q) and fs and fs != "lustre":
            lines += [self.p.sentence("not_lustre", fs=fs), ""]
        layouts = [x for i in range(len(plan.report.lustre_layouts)) if (x := self._fact(plan, f"layout:{i}"))]
        # "What should I do about the slow OST?" names a problem the report has: its fix leads, not the layouts.
        named_problem = any(
            f.code in plan.question.issue_codes and f.severity in (Severity.CRITICAL, Severity.WARNING)
            for f in plan.report.findings
        )
        striping = _LUSTRE_WORDS_SETTING.search(q) or not named_problem
        if _LUSTRE_WORDS.search(q) and striping and fs == "lustre" and layouts:
            # "What stripe count should I use?": the files' layouts and what fits them come first, whether or
            # not a Lustre finding fired; when every layout fits, say the layout is not the limit.
            lines += [x.text for x in layouts[:2]]
            if all(lay.fits for lay in plan.report.lustre_layouts[:2]):
                lines += ["", self.p.sentence("layout_not_limit")]
            lines.append("")
        calm = not any(f.severity in (Severity.CRITICAL, Severity.WARNING) for f in plan.report.findings)
        if calm and plan.report.finding("J01") is None:
            lines += [*self._verdict(plan), ""]  # nothing stands out: say that before any minor fix
        already = [f for f in already_done(plan) if self._fact(plan, f.code)]
        if already:
            lines += [*(self._head(plan, f) for f in already), self.p.sentence("already_in_place"), ""]
        j01 = plan.report.finding("J01")
        if j01 is not None:
            lines += [*self._verdict(plan), *self._fixes(plan, j01, 1), ""]
        if not targets:
            # The verdict says what bounds the job (and the lever, where there is one): it answers first.
            return (
                [*lines, self.p.sentence("fix_none")] if lines else [*self._verdict(plan), self.p.sentence("fix_none")]
            )
        saving = self._savings(plan, targets) if _SAVINGS.search(q) else None
        if saving:
            lines += [saving, ""]
        causes = plan.report.verdict.causes
        if not lines and causes and targets[0].code == causes[0].code:
            # The answer first (what costs the most, with this job's numbers), then the list: a list header
            # is no first sentence.
            lines += [*self._verdict(plan)[:1], ""]
        lines.append(self.p.sentence("fix_intro_minor" if calm and j01 is None else "fix_intro"))
        fixes: dict[str, str] = {}
        docs: set[str] = set()
        for i, f in enumerate(targets, 1):
            lines.append(f"{i}. {self._head(plan, f)}")
            lines += [f"   {x}" for x in self._fixes(plan, f, 3, fixes) + self._docs(plan, f.code, 1, docs)]
        return lines

    def _savings(self, plan: Plan, targets: list[Finding]) -> str | None:
        """'How much would I save?': each cause's cost is the most its fix can give back, and causes overlap
        in time, so the answer is the largest one, with the others named, never their sum."""
        priced = [f for f in targets if f.impact is not None and f.impact.seconds is not None and f.impact.seconds > 0]
        if not priced:
            return None
        best = priced[0]
        assert best.impact is not None and best.impact.seconds is not None
        others = "; ".join(
            f"{f.code} up to {human_seconds(f.impact.seconds)}" for f in priced[1:] if f.impact and f.impact.seconds
        )
        return (
            self.p.sentence(
                "savings",
                code=best.code,
                seconds=human_seconds(best.impact.seconds),
                share=f" ({wording.percent(best.impact.share_of_runtime)} of the run)"
                if best.impact.share_of_runtime is not None
                else "",
                others=" " + self.p.sentence("savings_others", others=others) if others else "",
            )
            + f" [{best.code}]"
        )

    def _passage_lines(self, passages: list[Passage], limit: int) -> list[str]:
        lines: list[str] = []
        seen: set[str] = set()
        for p in passages:
            if p.doc_id in seen:
                continue
            body = _first_sentences(p.text, PASSAGE_SENTENCES)
            if not body:  # a section that is all table or code: nothing to quote as prose
                continue
            seen.add(p.doc_id)
            lines.append(self.p.sentence("concept_from_doc", title=doc_title(p.title), id=p.doc_id))
            lines.append(body)
            if len(seen) >= limit:
                break
        return lines

    def _concept(self, plan: Plan) -> list[str]:
        lines = self._passage_lines(plan.passages, 2) or [self.p.sentence("concept_none")]
        for f in plan.focus:
            if f.code in plan.question.issue_codes or f.code in plan.question.codes:
                lines.append(self.p.sentence("concept_finding", code=f.code, title=clean(f.title)))
                lines += self._why(plan, f)
                break
        return lines

    def _facility(self, plan: Plan) -> list[str]:
        ctx = plan.sheet.context
        facility = plan.question.facility or ctx.facility
        lines: list[str] = []
        where = self._fact(plan, "facility")
        if where:
            lines.append(where.text)
        if facility is None:
            lines.append(self.p.sentence("facility_unknown"))
        facility_docs = [p for p in plan.passages if facility and p.facility == facility]
        if facility_docs:
            lines.append(self.p.sentence("facility_intro", facility=facility))
            lines += self._passage_lines(facility_docs, 2)
        else:
            if facility:
                lines.append(self.p.sentence("facility_none", facility=facility))
            lines += self._passage_lines(plan.passages, 1)
        fixes: dict[str, str] = {}
        for f in [f for f in plan.focus if f.severity is not Severity.OK and self._fact(plan, f.code)][:2]:
            lines.append(f"- {self._head(plan, f)}")
            lines += [f"  {x}" for x in self._fixes(plan, f, 1, fixes)]
        return lines

    def _off_topic(self, plan: Plan) -> list[str]:
        top = next((f for f in plan.focus if f.severity is not Severity.OK), None)
        if top is None:
            return [self.p.sentence("off_topic_plain")]
        return [self.p.sentence("off_topic", code=top.code)]

    def _triage(self, plan: Plan) -> list[str]:
        lines = self._verdict(plan)
        top = next((f for f in plan.focus if f.severity is not Severity.OK), None)
        if top is not None:
            lines.append(
                self.p.sentence("triage_top", code=top.code, title=clean(top.title), message=self._message(plan, top))
                + f" [{top.code}]"
            )
            fix = next((x for x in plan.facts if x.code == top.code and x.kind == "fix"), None)
            if fix is not None:
                lines.append(self.p.sentence("triage_fix", fix=fix.text.split("): ", 1)[-1]))
        lines.append(self.p.sentence("triage_counts", counts=wording.counts_line(plan.report)))
        return lines[:4]
