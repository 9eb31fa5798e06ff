"""What a question asks: rules, weighed against a model trained on labelled questions.

Keyword and pattern rules, plus what the question names that the report holds: finding codes, file names,
rank numbers, a facility. The rules propose an intent; a learned model (``intent/model.py``) decides where no
rule applies and overrules a rule when it is sure of another intent (``_second_opinion``). Injections and
everyday topics are the rules' alone. The result says which kind of answer to write and about what.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import PurePosixPath

from iodiag.analysis.models import Report
from iodiag.analysis.registry import CHECKS
from iodiag.narration.checking.facts import all_paths
from iodiag.narration.checking.grounding import CODE
from iodiag.narration.checking.issues import codes_for_words, issues_named
from iodiag.narration.intent.examples import load_index
from iodiag.narration.intent.model import OVERRIDE, load_model, model_path
from iodiag.narration.prompts import Phrasebook


class Intent(StrEnum):
    EXPLAIN_JOB = "explain-job"  # why is my job slow? / summarize
    EXPLAIN_FINDING = "explain-finding"  # one finding (named by code or by its problem)
    FILE_OR_RANK = "file-or-rank"  # which files / ranks, or a question about one of them
    HOW_TO_FIX = "how-to-fix"
    CONCEPT = "concept"  # what is X?
    FACILITY = "facility"  # guidance for a named facility
    OFF_TOPIC = "off-topic"  # not about this job
    COMPARE_RUNS = "compare-runs"  # this run against an earlier one: better? what changed? usual?
    TRIAGE = "triage"  # the help-desk summary (never from a question)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_INJECTION = _rx(
    r"\bignore (?:all |any )?(?:the )?(?:previous|prior|above|earlier) (?:instructions|rules|prompts?)|"
    r"\byou are now\b|\bsystem prompt\b|\bdisregard (?:the|your|all) (?:rules|instructions)"
)
_DOMAIN = _rx(
    r"\bi/?o\b|\bfiles?\b|\bwrit|\bread|\branks?\b|\bjob\b|\bslow|\bfast|\bspeed|\btime\b|\brun\b|\bruntime|"
    r"\blustre|\bstrip|\bosts?\b|\bmpi|\bhdf5|\bh5|\bnetcdf|\bpnetcdf|\bposix|\bstdio|\bdarshan|\bmetadata|"
    r"\bbandwidth|\bthroughput|\bperform|\bfix|\bimprov|\btun(?:e|ing)|\bfinding|\breport|\bcheckpoint|\baggregat|"
    r"\bcollective|\bbuffer|\bhints?\b|\bromio|\bcb_|\bbytes?\b|\brequests?\b|\bdata\b|\bdisk|\bstorage|"
    r"\bfile ?system|\bgpfs|\bscratch|\bprocess|\bnodes?\b|\bbottleneck|\bwrong|\brecommend|\boptimi|\bsummar|"
    r"\bexplain|\bdiagnos|\bproblem|\bissue|\bcause|\bwhy\b|\bopen|\bstat\b|\bsync|\balign|\bsmall|\brandom|"
    r"\bsequential|\bredundant|\bimbalance|\bstraggler|\bcompute|\bwhat to do|\bwhich\b|\bwhere\b|\bhow\b|"
    r"\badvice|\btips?\b|\bhelp|\bguidance|\bbest practices?|\bset\b|\bsettings?\b|\bcommands?\b|\bconfigur|"
    r"\bdxt\b|\bburst buffers?|\balign|\bchunk|\bheatmap|\btimeline|\bplots?\b|\bgraphs?\b|\bcharts?\b|\blayers?\b|"
    r"\bcache|\bphases?\b|\bnormal\b|\busual\b|\btypical\b|\bregress|\blast time\b|\bprevious\b|\btl;?dr\b|"
    r"\boverview\b|\bsummary\b|\bsum (?:it )?up\b|\brecap\b|\bquick(?:est)? wins?\b|\bchange\b|\bsave\b|\bhints?\b|"
    r"\bost\b|\bcounters?\b|\blogs?\b|\btrust\b|\bverdict\b|\blfs\b|\bopens\b|\bfill (?:values?|mode)\b"
)
# Everyday topics that are never about a job, even when they borrow a word from the domain ("recommend", "how").
_EVERYDAY = _rx(
    # food and drink, travel, money, entertainment, sport, health, people, web pages: never a job's I/O
    r"\brestaurants?\b|\brecipes?\b|\bpizza\b|\bdinner\b|\blunch\b|\bbreakfast\b|\bcoffee\b|\bbeer\b|\bwine\b|"
    r"\bhotels?\b|\bflights?\b|\bvacation|\bholiday|\btravel|\bmount(?:ain)? \w+|\beverest\b|"
    r"\btax(?:es)?\b|\btax return|\bmortgage|\bstocks?\b|\bcrypto|\bbitcoin|\bsalary\b|"
    r"\bmovies?\b|\bnovels?\b|\bbooks? to read|\bsci-?fi\b|\btv shows?\b|\bnetflix|\bmusic\b|\bsongs?\b|"
    r"\bfootball\b|\bsoccer\b|\bbasketball\b|\bbaseball\b|\bhoroscope|\bgirlfriend|\bboyfriend|\bdating\b|"
    r"\bhow (?:tall|old|far|big) is\b|\bcapital of\b|\bpresident\b|\bcss\b|\bhtml\b|\bcenter a div\b|"
    r"\bwrite (?:me )?an? (?:\w+ )?(?:poem|haiku|story|song|essay|limerick|joke|sonnet|cover letter|resume)\b|"
    r"\bcover letter\b|\bresume\b|\blinked list\b|\bprinter\b|\bemail client\b|\bexcel\b|\bwifi\b|"
    r"\bhomework\b|\bintegral of\b|\bderivative of\b|\bsolve:|\bchampions league\b|\bworld cup\b|\bsuper bowl\b|"
    r"\bolympics\b|\bwho won\b"
)
# Words that carry no subject of their own ("how", "which", "help"): in domain only about this job or in a chat.
_GENERIC_ONLY = _rx(r"^(?:\W|\b(?:how|which|where|why|help|tips?|advice|set|time|run|data|fast|what|is|the|a|an)\b)*$")
_OFF_TOPIC = _rx(
    r"\bweather|\brecipe|\bpoem|\bjoke|\bcapital of|\bsports?\b|\bmovie|\bsong|\bstock (?:price|market)|"
    r"\btranslate|\bbirthday|\bwho (?:is|was) the president"
)
_FACILITY_WORDS = _rx(
    r"\bfacilit(?:y|ies)\b|\b(?:computing|supercomputing) cent(?:er|re)\b|\bat my (?:site|center)\b|"
    r"\b(?:at )?our (?:site|center|centre|cluster|machine|system)(?:'s)?\b"
)
_FILE_RANK = _rx(
    r"\bw(?:h)?ich (?:[\w/-]+ ){0,2}(?:files?|ranks?|process(?:es)?|osts?|phases?)\b|"
    r"\bwhat (?:\w+ )?(?:files?|ranks?)\b|\bfile ?names?\b|\bwhich of (?:\w+ ){0,3}(?:files?|ranks?|osts?)\b|"
    r"\b(?:files?|ranks?|osts?) list\b|\bpoint to which\b|"
    r"\b(?:worst|slowest|busiest|biggest|largest) (?:\w+ )?(?:files?|ranks?|osts?|phases?)\b|"
    r"\btop \d* ?(?:files?|ranks?|osts?)\b|"
    r"\b(?:list|show)(?: me)? (?:the |all )?(?:\w+ ){0,2}(?:files?|ranks?|osts?)\b|"
    r"^(?:and |what about |ok,? )?(?:that|this|those|these|the) (?:files?|ranks?|osts?|phases?)\W*$|"
    r"\bwhere (?:is|are|was|were|do|does) (?:the |my |this |that )?(?:files?|ranks?|osts?|outputs?|checkpoints?)\b|"
    r"\bwho\b|\brank \d+|\bper[- ](?:rank|file|ost)\b|\bany (?:single )?(?:file|rank|ost)\b|\bfiles? (?:is|are|were|"
    r"was) (?:affected|involved|slow|the problem)|"
    r"\blist (?:the )?(?:files?|ranks?)|\bbusiest rank|\bslowest rank"
)
_WHY_OPEN = _rx(r"^\W*why (?:is|are|does|do|did|was|were|would)\b")
_FIX = _rx(
    r"\bhow (?:do|can|should|could|would) (?:i|we|you)\b|\bhow to\b|\bvalues? (?:for|should)\b|\bfix|\bimprov|"
    r"\bspeed(?: it| this| my \w+)? up|"
    r"\bfaster\b|\btun(?:e|ing)\b|\boptimi[sz]|\bwhat (?:should|can|could) (?:i|we)|\brecommend|\bsuggest|"
    r"\bchange\b|\bavoid\b|\breduce\b|\bsolv|\bremed|\bwhat to do\b|\bwhat do i do\b|"
    r"\bwhat (?:\w+ )?(?:should|can|could|do) (?:i|we) (?:set|change|use|type|run)\b|\bsettings?\b|\bcommands?\b|"
    r"\bshould (?:i|we|they|the user|he|she) (?:use|set|switch|change|increase|decrease|raise|lower|try|enable|"
    r"disable|turn|add|move|stage|cache|copy|prefetch|go)\b|\bdo you recomm?end\b|\bwhat (?:code )?change would\b|"
    r"\bquick(?:est)? wins?\b|\bfirst thing (?:i|we) (?:should|can|could)|\bwhat to change\b|"
    r"\bhow much (?:time )?(?:would|could|will|can|does) (?:\w+ ){0,4}save\b|\bwhat (?:value|hint)s? (?:\w+ )?should\b|"
    r"\bhow many \w+ should (?:i|we)\b|\bshould (?:i|we) configure\b|\bget rid of\b|\bstep[- ]by[- ]step\b|"
    r"\bchanges? to (?:make|get|fix|reduce|avoid|speed)\b|\btell (?:the|my|this) user to (?:change|set|use|do)\b|"
    r"\bhow (?:much|many) (?:\w+ ){0,2}(?:would|could|will|can|does|might) (?:\w+ ){0,4}save\b|"
    r"\bwh?at (?:exact )?(?:lfs|setstripe|romio|mpi-?io|hdf5) (?:comm?ands?|hints?|settings?|values?|calls?)\b|"
    r"\bcomm?and sh(?:ou|o)?ld (?:i|we) (?:run|use|type)\b|\bwh?at [\w_]+ values? should\b|"
    r"\bwhere (?:do|should|can|would) (?:i|we) (?:put|set|add|place|specify|pass)\b|\bhow do i stop\b|"
    r"\bturn (?:off|on)\b"
)
# How to read or understand something in general: a concept, even when asked with "how do I".
_CONCEPT_STRONG = _rx(
    r"\bin general\b|\bhow (?:do|can|should) (?:i|we|you) (?:read|interpret|understand)\b|\bwhat counts as\b|"
    r"\bhow does (?:\w+ ){1,6}(?:work|decide|choose|pick|place|handle|distribute|spread|store|split|lay)\b|"
    r"\bwhat does it mean (?:for|when|if)\b|\bby default\b|\bgenerally\b|\bin principle\b|\bdiff?e?rence between\b|"
    r"^\s*[\w/.-]+ (?:vs\.?|versus) [\w/.-]+\W*$|"
    r"\bhow (?:is|are) (?:a |an |the )?[\w/.-]+(?: [\w/.-]+)? (?:made|built|written|collected|generated)\b|"
    r"\bhow does \w+ (?:instrument|intercept|record|measure|collect)\b|\bnot about (?:this|my|the) \w+|"
    r"\bwhat (?:a|an) [\w/.-]+(?: [\w/.-]+)? (?:does|is for)\b|"
    r"^\s*(?:(?:wait|ok|okay|so|hmm|and)\W+)?wh?at(?:'s| is| are) (?:a |an |the )?[\w/.-]+(?: [\w/.-]+)?"
    r"(?: anyway| exactly| again)?\W*$"
)
# The question points at something the report says (a finding), whatever it is called.
# "the aggregator warning", "the file-per-process finding": one finding by its subject.
_NAMED_FINDING = _rx(
    r"\b(?:the|a|this|that) [\w/-]+(?: [\w/-]+)? (?:warning|finding|flag|alert)\b|"
    r"\bthe [\w/-]+(?: [\w/-]+)? thing in the report\b"
)
_REPORT_REFERENCE = _rx(
    r"\bfindings?\b|\bwarnings?\b|\bflag(?:ged)?\b|\b(?:report|it) (?:says?|said|shows?|mentions?)\b|"
    r"\bdoes it say\b|\bin (?:my|the) report\b|\bissue\b|\bproblem\b|\bthing\b"
)
# Topics of findings beyond the verifier's issue lexicon (issues.py, which must stay narrow: it judges claims).
_TOPICS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (_rx(r"\bread-?modify-?write|\brmw\b"), ("X05",)),
    (_rx(r"\bstdio\b"), ("S01",)),
    (_rx(r"\bstripe (?:size|count)\b"), ("L02", "L03")),
    (_rx(r"\bbytes? (?:grow|growing|grew)|\bamplif|\bwritten twice\b"), ("X06",)),
    (
        _rx(r"\bno collective|\bnot collective|\bcollective (?:i/o|writes?|reads?|mpi-?io|calls?)"),
        ("M02", "M03", "M04", "M05"),
    ),
    (_rx(r"\b(?:reads?|writes?|access(?:es)?|i/o) (?:are|is|were|was) random"), ("P11", "P13")),
    (_rx(r"\bmemory (?:buffers?|alignment)"), ("P08",)),
    (_rx(r"\brank 0 does"), ("P18", "T02")),
    (
        _rx(
            r"\b(?:romio|mpi-?io) (?:\w+ ){0,2}read(?:s|ing)?\b.{0,40}\bwrit|"
            r"\bread(?:s|ing)? (?:\w+ ){0,3}when (?:i|we) only writ"
        ),
        ("X05",),
    ),
    (
        _rx(
            r"\bwhen (?:does|do|did) (?:the |my |this )?(?:job|run|code|program|app) (?:do |does )?(?:its |the )?"
            r"(?:writes?|reads?|i/o)\b|\bi/o phases?\b"
        ),
        ("H01", "T04"),
    ),
    (
        _rx(r"\bsame (?:\w+ ){0,3}(?:files?|data|bytes) (?:over and over|again|twice|repeatedly)|\bover and over\b"),
        ("P09", "P10", "T05"),
    ),
    (_rx(r"\bmetadata\b|\b(?:\d[\d,]* |so many |many )?(?:opens|stats)\b"), ("J03", "P17", "X02")),
    (_rx(r"\bare (?:my |the )?(?:reads?|writes?|accesses|requests) random\b|\brandom[- ]read"), ("P11", "P13", "T08")),
    (_rx(r"\b(?:tiny|little) reads?\b|\breads? (?:are |were )?(?:so |too )?tiny\b"), ("P05", "P15", "T06")),
    (_rx(r"\b(?:tiny|little) writes?\b|\bwrites? (?:are |were )?(?:so |too )?tiny\b"), ("P06", "P16", "T06")),
    (_rx(r"\bheav(?:y|ier|iest) (?:ranks?|ones?)\b|\bthe heavy one\b"), ("H02", "T03", "J04", "P18")),
    (_rx(r"\bosts? (?:\w+ )?slow\b|\bslow osts?\b|\bone of the osts\b"), ("L04", "L05")),
    (_rx(r"\bmore (?:bytes|data) than\b|\bfill (?:values?|mode)\b|\bnofill\b|\bset_fill\b"), ("X06",)),
    (_rx(r"\blfs\b|\bsetstripe\b|\bstrip(?:e|ing) count\b"), ("L01", "L02", "L03", "L04", "L05", "X03")),
    (_rx(r"\balignment\b|\bh5pset_alignment\b"), ("P07", "P08", "T07", "L02")),
    (_rx(r"\btrust (?:this|the|my) (?:log|data|report)\b|\bpartial\b|\btruncated\b"), ("D01", "D02")),
)
# What a follow-up points back at: "the first finding", "that issue".
_FINDING_BACKREF = _rx(
    r"\b(?:first|second|third|top|last|that|this) (?:finding|issue|problem|one)\b|\bmore about (?:the|that)\b"
)
# "What's up with all the small writes?" asks about this job's writes, not what small writes are.
_WHATS_UP = _rx(r"^\W*wh?at(?:'s| is) (?:up|going on|the deal|happening) with\b|\ball (?:the|these|those)\b")
_CONCEPT = _rx(
    r"^\s*(?:what(?:'s| is| are| does| do)\b|explain\b|define\b|tell me (?:about|what)|what do(?:es)? .+ mean|"
    r"how does .+ work|meaning of)"
)
_ABOUT_JOB = _rx(
    r"\b(?:my|mine|our|this|the) (?:job|run|code|application|app|program|log|report|files?|ranks?)\b|\bwrong\b|"
    r"\bslow\b|\bfindings?\b|\bi/o share|\bbottleneck|\bthis\b|\bit\b"
)
_FOLLOW_UP = _rx(
    r"^\s*(?:and|but|so|then|what about|how about|which|why|where|ok|okay)\b|\b(?:it|that|this|them|those|these|they)\b"
)
_COMPARE = re.compile(
    r"\b(?:better|worse|faster|slower|quicker)\b.{0,40}\b(?:than|compared|vs\.?|versus)\b(?!.{0,25}\b(?:the other "
    r"(?:ranks?|files?|osts?|ones)|others|the rest|shared|file-per|collective|independent|posix|mpi|hdf5|stdio))|"
    r"\bwhat(?:'s| has| have)? (?:\w+ )?changed\b|\bany (?:change|difference)s?\b|\bdifferen(?:t|ce)s? from\b|"
    r"\b(?:compare[ds]?|comparison)\b(?! (?:to|with) (?:the )?(?:rest|other(?:s| ranks?| files?| osts?))\b)|"
    r"\bsince (?:my |the |our )?(?:last|previous|earlier|prior) (?:run|job|time)\b|"
    r"\bdid (?:my|the|this|our) (?:\w+ )?(?:change|fix|tuning|setting)s? (?:help|work|make)\b|"
    r"\bregress(?:ed|ion|ions)?\b|\bimprov(?:ed|ement)s? (?:over|since|from|on)\b|"
    r"\b(?:last|previous|prior|earlier) (?:run|job)\b"
    r"|\bis (?:this|it) (?:run |job )?(?:normal|typical|usual|an outlier)|"
    r"\b(?:normal|typical|usual) for (?:my|this|our)\b"
    r"|\boutlier\b|\bmake a difference\b|\bused to (?:run|take|finish)\b|\bdifferent this time\b|"
    r"\bsame as (?:last time|before)\b|\bgo away after\b|\bchange (?:i|we) made\b|\bwh?at changed\b|"
    r"\bprevi?ous (?:run|job)\b|\blast (?:week|month|year|time)\b|\bbaseline\b|\bthe run before\b|"
    r"\b(?:my|our|the) other (?:jobs|runs)\b|\bdid (?:moving|switching|going|changing|bumping|raising|lowering) "
    r"(?:\w+ ){0,5}help\b|\bbetween (?:these|the) two runs\b|\bbefore too\b|\blike this before\b|"
    r"\bstack(?:s)? up against\b|\bbefore the (?:upgrade|update|change)\b",
    re.IGNORECASE,
)


def is_compare_question(question: str) -> bool:
    """Does the question ask about this run against an earlier one (or the usual)?"""
    return bool(_COMPARE.search(question))


_RANK_NUMBER = _rx(r"\brank\s+(\d+)")
# A file name has a letter in it: "1.00 s" is a number, "out.h5" a file.
_FILEISH = re.compile(r"(?=[\w.\-/]*[A-Za-z])[\w.\-/]*[\w\-]\.[A-Za-z0-9]{1,8}\b|(?<![\w/])/[\w.\-/]+")


@dataclass(frozen=True)
class Question:
    text: str
    intent: Intent
    codes: list[str] = field(default_factory=list)  # report finding codes the question names
    unknown_codes: list[str] = field(default_factory=list)  # codes it names that the report lacks
    files: list[str] = field(default_factory=list)  # report paths it names
    unknown_files: list[str] = field(default_factory=list)  # file-like words matching no report path
    ranks: list[int] = field(default_factory=list)
    issue_codes: list[str] = field(default_factory=list)  # report codes whose problem the question names
    facility: str | None = None
    follow_up: bool = False  # names nothing of its own: refers to the previous turn
    asks_files: bool = False
    asks_ranks: bool = False
    # A problem named in words that the report does not have ("is one of the OSTs slow?" and no L04): its
    # first code, so the answer can say so.
    absent_topics: list[str] = field(default_factory=list)
    # How sure the classifier is of ``intent`` (the learned model's probability for it; 1.0 for a rule no model
    # may overrule), and who decided: "rules", "model" (over a rule or where no rule applied) or "examples".
    confidence: float = 1.0
    decided_by: str = "rules"


def _topic_codes(text: str) -> list[str]:
    return [c for rx, codes in _TOPICS if rx.search(text) for c in codes]


def _topic_groups(text: str) -> list[tuple[str, ...]]:
    """The findings each problem the question names could be, one group per problem (lexicon, then topics)."""
    groups = [tuple(sorted(i.codes)) for i in issues_named(text)]
    return groups + [codes for rx, codes in _TOPICS if rx.search(text)]


# The verdict in so many words: "what's wrong?", "bottom line?", "any red flags?".
_VERDICT = _rx(
    r"^\W*(?:so,? )?wh?at(?:'s| is) (?:wrong|the verdict|the bottom line|the story)\W*$|\bverdict\b|\bbottom line\b|"
    r"\bred flags?\b|\bwhat do i (?:write|say) (?:back )?to the user\b"
)
# The help desk asking what to tell a user: the big picture, unless it asks what the user should change.
_BIG_PICTURE = _rx(
    r"\bbig picture\b|\bwhat(?:'s| is) going on\b|\boverall\b|\bcrawling\b|\bholding (?:\w+ ){0,3}back\b|"
    r"\bis (?:the )?i/?o (?:the|what|why)\b|\bwhy (?:their|the|his|her) "
    r"(?:run|job|simulation) (?:took|takes|was|is)\b|\bverdict\b|^\W*wh?at(?:'s| is) wrong\W*$|"
    r"\bwhat (?:should|do|can) (?:i|we) (?:tell|say to|write to) (?:the|this|my) (?:user|owner|scientist)\b|"
    r"\bcan i trust\b|\bworth (?:my|the) time\b|\b(?:should i|do i) (?:even )?care\b|\bbad enough\b|\bjumps? out\b|"
    r"\bsanity check\b|\bexecutive summary\b|\b(?:headline|main|biggest|key) (?:problem|issue|bottleneck)\b|"
    r"\bi/?o[- ]bound\b|\bwhere did (?:the|my|all the) (?:time|\d[\w]*) go\b|\bworth (?:optimi[sz]ing|the effort|"
    r"bothering|fixing)\b|\bbother optimi[sz]|\bnegligible\b"
)
_FIX_CHANGE = _rx(r"\b(?:change|fix|set|tune|do differently)\b")
_MINE = _rx(r"\b(?:my|our|me|us|i|we)\b")
# About this job in so many words (a concept question says "in general" or names no job).
_ABOUT_JOB_STRICT = _rx(r"\b(?:my|our|this) (?:job|run|code|application|app|program|log|report|files?)\b")


def _facility(text: str, phrases: Phrasebook) -> str | None:
    low = text.lower()
    for name, words in phrases.facilities.items():
        if any(re.search(rf"\b{re.escape(w)}\b", low) for w in words):
            return name
    return None


def _files_named(text: str, report: Report) -> tuple[list[str], list[str]]:
    paths = all_paths(report)
    found: list[str] = []
    unknown: list[str] = []
    for tok in _FILEISH.findall(text):
        tok = tok.strip("'\"`.,;:?!()")
        if len(tok) < 3 or tok.lower() in ("i/o", "mpi-io") or CODE.fullmatch(tok):
            continue
        hits = [p for p in paths if p == tok or p.endswith(tok) or PurePosixPath(p).name == tok]
        if hits:
            found += hits
        elif "/" in tok or "." in tok.strip("."):
            unknown.append(tok)
    return list(dict.fromkeys(found)), list(dict.fromkeys(unknown))


_BY_EXAMPLE = frozenset(
    {
        Intent.EXPLAIN_JOB,
        Intent.EXPLAIN_FINDING,
        Intent.FILE_OR_RANK,
        Intent.HOW_TO_FIX,
        Intent.CONCEPT,
        Intent.OFF_TOPIC,
    }
)


def _nearest(text: str, phrases: Phrasebook, otherwise: Intent) -> tuple[Intent, float]:
    """Without a stored model: the intent of the most similar labelled questions, if any are close."""
    index = load_index(phrases.examples_path) if phrases.examples_path is not None else None
    found = index.nearest(text) if index is not None else None
    if found is None:
        return otherwise, 0.0
    try:
        intent = Intent(found[0])
    except ValueError:
        return otherwise, 0.0
    return (intent, found[1]) if intent in _BY_EXAMPLE else (otherwise, 0.0)


def _second_opinion(
    text: str, has_history: bool, phrases: Phrasebook, rules: Intent, fallback: bool
) -> tuple[Intent, float, str]:
    """The rules' answer weighed against the learned model's (``intent/model.py``).

    Where no rule applied (``fallback``: the rules' default) the model decides. Where one did, the model
    overrules it only when it is sure of another intent (probability above ``OVERRIDE``). On a set blind to
    both (heldout5), the rules that fired were right 116 times in 123 and the model, trained on the other sets,
    122; together they scored 0.975 where either alone scored less (``evals/intents/README.md``, leave one set
    out). Without a stored model, the nearest labelled questions fill in where no rule applied.
    """
    model = load_model(model_path(phrases.examples_path)) if phrases.examples_path is not None else None
    if model is None:
        if fallback:
            nearest, similarity = _nearest(text, phrases, rules)
            return (nearest, similarity, "examples") if nearest is not rules else (rules, 1.0, "rules")
        return rules, 1.0, "rules"
    found = model.predict(text, has_history, agree=None if fallback else rules.value)
    best = Intent(found.intent)
    if fallback or (best is not rules and found.confidence > OVERRIDE):
        return best, found.confidence, "model"
    return rules, found.probabilities[rules.value], "rules"


def classify(question: str, report: Report, phrases: Phrasebook, has_history: bool = False) -> Question:
    text = " ".join(question.split())
    # Codes in any case ("p08"), but only those the engine has ("x86" is not one).
    named = list(dict.fromkeys(c for c in CODE.findall(text.upper()) if c in CHECKS))
    present = report.codes()
    codes = [c for c in named if c in present]
    unknown = [c for c in named if c not in present]
    files, unknown_files = _files_named(text, report)
    ranks = [int(n) for n in _RANK_NUMBER.findall(text)]
    facility = _facility(text, phrases)
    groups = _topic_groups(text)
    issue_codes = list(dict.fromkeys(c for g in groups for c in g if c in present and c not in ("J01", "J02")))
    absent_topics = list(dict.fromkeys(g[0] for g in groups if not set(g) & present))
    asks_files = bool(re.search(r"\bfiles?\b|\bfile ?names?\b|\bpaths?\b", text, re.IGNORECASE)) or bool(files)
    asks_ranks = bool(re.search(r"\branks?\b|\bprocess(?:es)?\b|\bstraggler", text, re.IGNORECASE)) or bool(ranks)
    names_something = bool(named or files or ranks or issue_codes or facility)
    follow_up = has_history and not names_something and (len(text.split()) <= 8 or bool(_FOLLOW_UP.search(text)))

    def q(intent: Intent, confidence: float = 1.0, by: str = "rules") -> Question:
        return Question(
            text,
            intent,
            codes,
            unknown,
            files,
            unknown_files,
            ranks,
            issue_codes,
            facility,
            follow_up,
            asks_files,
            asks_ranks,
            absent_topics,
            confidence,
            by,
        )

    def decide(rules: Intent, fallback: bool = False) -> Question:
        intent, confidence, by = _second_opinion(text, has_history, phrases, rules, fallback)
        return q(intent, confidence, by)

    if not text:
        return q(Intent.EXPLAIN_JOB)
    if _INJECTION.search(text) or ((_OFF_TOPIC.search(text) or _EVERYDAY.search(text)) and not names_something):
        return q(Intent.OFF_TOPIC)  # an injection or an everyday topic: never a model's call
    in_domain = bool(_DOMAIN.search(text)) and not (_GENERIC_ONLY.search(text) and not has_history)
    if (
        not in_domain
        and not names_something
        and not has_history
        and not _FIX.search(text)
        and not (_BIG_PICTURE.search(text) or is_compare_question(text))
    ):
        return decide(Intent.OFF_TOPIC, fallback=True)
    if is_compare_question(text):
        return decide(Intent.COMPARE_RUNS)
    if files or (
        unknown_files and not _FIX.search(text)
    ):  # a path first: a file system's name in it is not a facility question
        return decide(Intent.FILE_OR_RANK)
    if facility or _FACILITY_WORDS.search(text):
        return decide(Intent.FACILITY)
    if _NAMED_FINDING.search(text) and not _FILE_RANK.search(text) and not _FIX.search(text):
        return decide(Intent.EXPLAIN_FINDING)  # "there's a straggler warning, what's going on there?"
    if _VERDICT.search(text) or (_BIG_PICTURE.search(text) and not _FIX_CHANGE.search(text)):
        return decide(Intent.EXPLAIN_JOB)
    if _CONCEPT_STRONG.search(text) and not named and not _ABOUT_JOB_STRICT.search(text):
        return decide(Intent.CONCEPT)
    # A problem named in words, asked about as something the report says: the finding (present or not).
    topic_codes = [c for c in [*codes_for_words(text), *_topic_codes(text)] if c not in ("J01", "J02")]
    about_finding = bool(topic_codes) and bool(
        _REPORT_REFERENCE.search(text) or _ABOUT_JOB.search(text) or _MINE.search(text) or has_history
    )
    if _BIG_PICTURE.search(text) and not _FIX_CHANGE.search(text):
        return decide(Intent.EXPLAIN_JOB)  # what to tell a user about why their run was slow
    if _FIX.search(text):
        return decide(Intent.HOW_TO_FIX)
    if _NAMED_FINDING.search(text) and not _FILE_RANK.search(text):
        return decide(Intent.EXPLAIN_FINDING)
    if about_finding and _REPORT_REFERENCE.search(text):
        return decide(Intent.EXPLAIN_FINDING)
    if _FILE_RANK.search(text) or ranks:
        return decide(Intent.FILE_OR_RANK)
    if named or (has_history and _FINDING_BACKREF.search(text)):
        return decide(Intent.EXPLAIN_FINDING)
    if _CONCEPT.search(text) and not _ABOUT_JOB.search(text) and not _WHATS_UP.search(text):
        return decide(Intent.CONCEPT)
    if [c for c in issue_codes if c not in ("J01", "J02")] or about_finding:
        return decide(Intent.EXPLAIN_FINDING)
    if _WHY_OPEN.search(text):
        # "Why does each rank spend 11 s writing 2.6 MB?": a why about the job as a whole, named by no rank or file.
        return decide(Intent.EXPLAIN_JOB)
    return decide(Intent.EXPLAIN_JOB, fallback=True)
