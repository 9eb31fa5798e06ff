"""The I/O problems people name in words, and the finding codes that report each.

Used twice: the composer maps a question's words to findings ("why so many small writes?" -> P06, P16),
and the verifier refuses a claim of a problem that no finding reports ("your job does small writes" when
neither P06 nor P16 fired). These are matching rules, not prose: nothing here is shown to anyone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Issue:
    name: str
    pattern: re.Pattern[str]
    codes: frozenset[str]
    # The claim is itself a negative ("no MPI-IO", "I/O is not the problem"): a negation in the sentence
    # does not make it harmless.
    negative_claim: bool = False


_QUOTED = re.compile(r"`[^`\n]*`")


def _issue(name: str, pattern: str, codes: str, negative_claim: bool = False) -> Issue:
    return Issue(name, re.compile(pattern, re.IGNORECASE), frozenset(codes.split()), negative_claim)


ISSUES: tuple[Issue, ...] = (
    _issue(
        "small reads",
        r"\bsmall(?:[\w\s-]{0,20})? reads?\b|\breads? (?:are|were|is|was) (?:too )?small",
        "P05 P15 T06 X01",
    ),
    _issue(
        "small writes",
        r"\bsmall(?:[\w\s-]{0,20})? writes?\b|\bwrites? (?:are|were|is|was) (?:too )?small",
        "P06 P16 T06 X01",
    ),
    _issue(
        "small requests",
        r"\bsmall (?:i/o |io |posix |mpi-?io )?(?:requests?|operations?|i/o|accesses|transfers?|chunks?)\b|"
        r"\b(?:requests?|operations?) (?:are|were|is|was) (?:too )?small",
        "P05 P06 P15 P16 T06 X01",
    ),
    _issue("misalignment", r"misalign|\bnot aligned|\bunaligned", "P07 P08 T07 L02 X02"),
    _issue(
        "random access",
        r"\brandom(?:ly)? (?:\w+ )?(?:access|accesses|reads?|writes?|i/o|offsets?|pattern)|\bnon-?sequential|"
        r"\bnot sequential",
        "P11 P13 T08",
    ),
    _issue(
        "redundant traffic",
        r"\bredundant|\b(?:read|written|wrote|rewritten|reread)\s+(?:\w+\s+){0,2}(?:more than once|twice|again)|"
        r"\bre-?reads?\b|\bre-?writes?\b|\bre-?reading\b|\bre-?writing\b",
        "P09 P10 T05",
    ),
    _issue(
        "metadata load",
        r"\bmetadata (?:operations?|storm|load|overhead|time|bottleneck|cost|calls?|heavy|writes?)|"
        r"\b(?:too )?many (?:opens?|stats?|open calls|stat calls|metadata)\b",
        "P17 X02 J03",
    ),
    _issue(
        "rank imbalance",
        # "its slowest rank", "kept rank 0 as the slowest rank of the shared file": Darshan's bookkeeping of a
        # shared record, not a claim that one rank holds the others up
        r"\bimbalance|\bunbalanced|\buneven|\bstraggler|(?<!as the )(?<!its )(?<!and )\bslow(?:er|est)? ranks?\b"
        r"(?! of (?:the|its|a) shared)|\bload[- ]?imbalance|"
        r"\brank 0 does (?:most|all)",
        "P18 P19 P21 P22 T01 T02 T03 H02 J04",
    ),
    _issue(
        "single OST",
        r"\b(?:a single|single|only one|just one) ost\b|\bstripe count (?:of |is |was )?1\b|\bnot striped|\bunstriped",
        "L01 X03",
    ),
    _issue(
        "slow OST",
        r"\bslow(?:er|est)? osts?\b|\bosts? (?:is|are|was|were) (?:slow|overloaded)|\boverloaded osts?\b|\bhot ?spot",
        "L04 L05",
    ),
    _issue(
        "stripe mismatch",
        r"\bstraddl|\bcross(?:es|ing)? (?:the )?stripe|\bstripe size (?:is |was )?(?:too small|far below|smaller)",
        "L02 L03",
    ),
    _issue(
        "STDIO bulk data",
        r"\b(?:through|via|uses?|using|used|going through|goes through) stdio\b|\bstdio (?:is|was) (?:used|slow)|"
        r"\bbulk data (?:through|in) stdio",
        "S01",
    ),
    _issue(
        "no MPI-IO",
        r"\b(?:does not|doesn't|did not|didn't|never) use mpi-?io|\bno mpi-?io\b|\bwithout mpi-?io\b",
        "M01",
        negative_claim=True,
    ),
    _issue(
        "independent MPI-IO",
        r"\bindependent (?:mpi-?io )?(?:reads?|writes?|calls?|i/o|operations?|accesses)|\bnon-?collective",
        "M02 M03 X01 X04",
    ),
    _issue("blocking MPI-IO", r"(?<!non)(?<!non-)\bblocking (?:mpi-?io )?(?:reads?|writes?|calls?|i/o)", "M06 M07"),
    _issue(
        "I/O dominates",
        r"\bi/o (?:dominates|takes most|is (?:the|a) (?:main|major|big|dominant)|is why|is the (?:bottleneck|problem|"
        r"reason))|\b(?:bound|limited) by i/o|\bi/o[- ]bound",
        "J02",
    ),
    _issue(
        "I/O is fine",
        r"\b(?:job|i/o|everything) (?:is|looks|was) (?:fine|ok|okay|healthy|good)\b|\bnothing (?:is )?wrong|"
        r"\bno (?:i/o )?(?:problems?|issues?)\b|\bi/o (?:is|was) not (?:the|a|why)|\bi/o isn't (?:the|a|why)",
        "J01",
        negative_claim=True,
    ),
)

_NEGATION = re.compile(
    r"\b(?:no|not|never|none|nor|neither|without|isn't|doesn't|didn't|wasn't|weren't|aren't|don't|cannot|if|unless|"
    r"whether|absent|avoid|instead of|rather than)\b|n't\b",
    re.IGNORECASE,
)
_CONDITIONAL = re.compile(r"\b(?:if|unless|whether|when)\b", re.IGNORECASE)
# Words that make a sentence a statement about this job rather than general knowledge.
_ABOUT_JOB = re.compile(
    r"\b(?:your|you|this job|the job|job's|this run|the run|the application|this application|the program|"
    r"this program|the log|this log|the files?|these files?|those files?|ranks? \d+|the ranks)\b|"
    r"\b[DHJLMPSTX]\d{2}\b|`",
    re.IGNORECASE,
)


def negated(sentence: str) -> bool:
    """Negated or conditional: "no small writes", "if your writes are small"."""
    return bool(_NEGATION.search(_QUOTED.sub(" ", sentence)))


def issues_named(text: str) -> list[Issue]:
    return [i for i in ISSUES if i.pattern.search(text)]


# "500 µs in metadata calls" states how long, not that metadata is a problem.
_MEASURED_META = re.compile(
    r"[\d.,]+\s*(?:µs|us|ms|s|sec\w*|min\w*|h|hours?)\s+(?:in|of|on)\s+metadata\s+(?:calls?|time|operations?)",
    re.IGNORECASE,
)


def asserted_issues(sentence: str) -> list[Issue]:
    """The problems a sentence claims this job has (negated, conditional or general sentences claim none)."""
    # Words inside backticks are the log's (a file may be named "the job is fine"): they claim nothing.
    own = _MEASURED_META.sub(" ", _QUOTED.sub(" ", sentence))
    negated = bool(_NEGATION.search(own))
    about_job = bool(_ABOUT_JOB.search(sentence))
    out = []
    for issue in issues_named(own):
        if issue.negative_claim:
            # "I/O is not the problem" is about this job's I/O even without "your job"; "if ..." is not a claim.
            if not _CONDITIONAL.search(own):
                out.append(issue)
        elif about_job and not negated:
            out.append(issue)
    return out


def codes_for_words(text: str) -> list[str]:
    """Finding codes whose problem the text names, in lexicon order."""
    out: list[str] = []
    for issue in issues_named(text):
        out += sorted(issue.codes)
    return list(dict.fromkeys(out))
