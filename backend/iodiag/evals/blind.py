"""Blind evaluation: the verdict scored once against labels written by someone who never saw iodiag's output.

A blind set is a folder (``evals/blind/<set>/``) holding logs (or the scenarios they are rebuilt from), a
labels file (``labels.yaml``, written from PyDarshan counters by a labeller who did not see the code or its
output; or ``construction.yaml``, the ground truth a generator built the logs to have) and ``SEAL``
(``sha256sum`` lines of the labels and logs, written before the first scoring). Scoring:

* refuses a set whose files no longer match their seal (the labels or logs changed after sealing);
* scores by **class** (small requests, metadata, slow OST, ...): the verdict's first cause mapped to its class
  (``CODE_CLASS``), io_matters three-valued (true / false / unknown), and precision and recall of the classes
  shown at critical or warning; the same for Drishti 0.8 where its CSV output is given;
* writes ``FIRST_SIGHT.json`` the first time and never overwrites it: later runs are reported as re-scores, so
  the number a note quotes is the first one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from iodiag.evals.triggers import CorpusError

# The classes of lost I/O time a label names, and the states where no pattern is the answer.
CLASSES = (
    "small_requests",
    "random_access",
    "misaligned_shared_writes",
    "non_collective",
    "collective_wait",
    "metadata",
    "single_ost_shared_file",
    "slow_ost",
    "rank_imbalance",
    "stdio_bulk",
    "redundant_traffic",
    "hdf5_metadata",
    "layer_amplification",
)
STATES = ("bandwidth_bound", "healthy_negligible", "partial_log", "corrupt_records")

CODE_CLASS: dict[str, str] = {
    **dict.fromkeys(("P05", "P06", "P15", "P16", "T06"), "small_requests"),
    **dict.fromkeys(("P11", "P13", "T08"), "random_access"),
    **dict.fromkeys(("P07", "P08", "L02", "T07", "L06", "P23"), "misaligned_shared_writes"),
    **dict.fromkeys(("M02", "M03", "X01", "M06", "M07"), "non_collective"),
    **dict.fromkeys(("X04", "X05", "M08", "M09", "M10"), "collective_wait"),
    **dict.fromkeys(("J03", "P17"), "metadata"),
    **dict.fromkeys(("L01", "X03", "L03", "X07"), "single_ost_shared_file"),
    **dict.fromkeys(("L04", "L05"), "slow_ost"),
    **dict.fromkeys(("J04", "P18", "P19", "P21", "P22", "T01", "T02", "T03", "H02"), "rank_imbalance"),
    "S01": "stdio_bulk",
    **dict.fromkeys(("P09", "P10", "T05"), "redundant_traffic"),
    "X02": "hdf5_metadata",
    "X06": "layer_amplification",
}
"""Finding code → class. Codes not here (summaries, data quality, descriptive, M01) name no class."""

# Drishti 0.8's informational codes (intensity, sequential access, collective use): never a problem.
DRISHTI_INFO = frozenset({"P01", "P02", "P03", "P04", "P12", "P14", "M04", "M05", "M01"})


class BlindLabel(BaseModel):
    """One case's truth, from a blind labeller (``labels.yaml``) or by construction (``construction.yaml``)."""

    model_config = ConfigDict(extra="ignore")

    case: str
    io_matters: bool | Literal["unknown"]
    top_class: str = Field(description="a CLASSES name, or a STATES name where no pattern is at fault")
    classes: list[str] = Field(default_factory=list, description="every class present at warning or above")
    why: str = ""

    @field_validator("top_class")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in CLASSES and v not in STATES:
            raise ValueError(f"unknown class {v!r}")
        return v

    @field_validator("classes")
    @classmethod
    def _known_all(cls, v: list[str]) -> list[str]:
        bad = [c for c in v if c not in CLASSES]
        if bad:
            raise ValueError(f"unknown classes {bad}")
        return v


class Predicted(BaseModel):
    io_matters: bool | Literal["unknown"] | None
    top_class: str | None
    classes: list[str]


class CaseScore(BaseModel):
    case: str
    truth: BlindLabel
    iodiag: Predicted | None = None
    drishti: Predicted | None = None
    error: str | None = None


class ToolScore(BaseModel):
    tool: str
    cases: int
    top1: float | None = Field(description="top class right (a state where the truth is a state)")
    top1_n: int
    io_matters: float | None
    io_matters_n: int
    precision: float | None
    recall: float | None
    f1: float | None
    per_class: dict[str, dict[str, float | int | None]] = Field(default_factory=dict)


class BlindScore(BaseModel):
    set: str
    truth: str
    seal: str
    scored_at: str
    first_sight: bool
    tools: list[ToolScore]
    cases: list[CaseScore]


TRUTHS = {"labels": "labels.yaml", "construction": "construction.yaml"}
"""Where a set's truth comes from: a blind labeller's reading of the counters, or the generator's construction."""


def read_labels(folder: Path, truth: str = "labels") -> list[BlindLabel]:
    """The set's truth: ``labels.yaml`` (a blind labeller's) or ``construction.yaml`` (by construction)."""
    if truth not in TRUTHS:
        raise CorpusError(f"truth must be one of {', '.join(TRUTHS)}, not {truth!r}")
    path = folder / TRUTHS[truth]
    if not path.is_file():
        raise CorpusError(f"{folder}: no {TRUTHS[truth]}")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise CorpusError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    if isinstance(data, dict):
        data = data.get("cases", data.get("labels"))
    if not isinstance(data, list):
        raise CorpusError(f"{path}: expected a list of cases")
    out = []
    for item in data:
        if isinstance(item, dict) and "class" in item and "top_class" not in item:
            # construction.yaml: the built class, with the others it also has
            item = {**item, "top_class": item["class"], "classes": _problem_classes(item)}
        if isinstance(item, dict) and isinstance(item.get("io_matters"), str):
            item = {
                **item,
                "io_matters": "unknown" if item["io_matters"] in ("unknown", "null") else item["io_matters"],
            }
        if isinstance(item, dict) and item.get("io_matters") is None:
            item = {**item, "io_matters": "unknown"}
        try:
            out.append(BlindLabel.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise CorpusError(
                f"{path}: {item.get('case', '?')}: {'.'.join(map(str, err['loc']))}: {err['msg']}"
            ) from None
    return out


def _problem_classes(item: dict[str, object]) -> list[str]:
    sec = item.get("secondary")
    found = [item.get("class"), *(sec if isinstance(sec, list) else [])]
    return [c for c in found if isinstance(c, str) and c in CLASSES]


def check_seal(folder: Path, truth: str = "construction") -> str:
    """The set's combined digest, after checking every sealed file; raises when any differs.

    ``SEAL`` covers the logs (and the generator's construction file); a labeller's ``labels.yaml`` is sealed
    in ``LABELS.SEAL``, written before the first scoring.
    """
    seals = [folder / "SEAL"] + ([folder / "LABELS.SEAL"] if truth == "labels" else [])
    h = hashlib.sha256()
    for seal in seals:
        if not seal.is_file():
            raise CorpusError(f"{folder}: not sealed (no {seal.name}): seal the set before the first scoring")
        for line in seal.read_text().splitlines():
            parts = line.split(maxsplit=1)
            if len(parts) != 2 or line.startswith("#"):
                continue
            digest, name = parts[0], parts[1].strip().lstrip("*")
            path = folder / name
            if not path.is_file():
                raise CorpusError(f"{path}: sealed but missing (rebuild the set's logs)")
            if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
                raise CorpusError(f"{path}: does not match its seal: changed after sealing")
            h.update(f"{digest}  {name}\n".encode())
    return h.hexdigest()


def predict_iodiag(report: object) -> Predicted:
    from iodiag.analysis.models import Report, Severity

    assert isinstance(report, Report)
    v = report.verdict
    shown = [
        CODE_CLASS[f.code]
        for f in report.findings
        if f.severity in (Severity.CRITICAL, Severity.WARNING) and f.code in CODE_CLASS
    ]
    if v.io_matters is None and report.finding("D04") is None:
        # The headline leads with "unknown": the causes of the part the log holds come after it
        top: str | None = "partial_log"
    elif report.finding("D04") is not None:
        # The first caveat says records were left out: every cause after it is read from what survived
        top = "corrupt_records"
    elif v.causes and v.causes[0].code in CODE_CLASS:
        top = CODE_CLASS[v.causes[0].code]
    elif v.io_matters is None:
        top = "partial_log"
    elif v.io_matters:
        top = "bandwidth_bound"
    else:
        top = "healthy_negligible"
    matters: bool | Literal["unknown"] = "unknown" if v.io_matters is None else v.io_matters
    return Predicted(io_matters=matters, top_class=top, classes=sorted(set(shown)))


def predict_drishti(csv_text: str) -> Predicted:
    """Drishti's CSV row: the codes it raised, as classes (it has no verdict, no io_matters, no ranking)."""
    rows = [ln.split(",") for ln in csv_text.strip().splitlines()]
    if len(rows) < 2:
        raise ValueError("no data row in Drishti's CSV")
    fired = [code for code, v in zip(rows[0], rows[1], strict=False) if v.strip() == "True"]
    classes = sorted({CODE_CLASS[c] for c in fired if c in CODE_CLASS and c not in DRISHTI_INFO})
    return Predicted(io_matters=None, top_class=None, classes=classes)


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def score_tool(tool: str, cases: list[CaseScore]) -> ToolScore:
    got = [(c.truth, getattr(c, tool)) for c in cases]
    got = [(t, p) for t, p in got if p is not None]
    top = [p.top_class == t.top_class for t, p in got if p.top_class is not None]
    matters = [p.io_matters == t.io_matters for t, p in got if p.io_matters is not None]
    tp = fp = fn = 0
    per: dict[str, dict[str, float | int | None]] = {}
    for cls in CLASSES:
        ctp = sum(cls in p.classes and cls in t.classes for t, p in got)
        cfp = sum(cls in p.classes and cls not in t.classes for t, p in got)
        cfn = sum(cls not in p.classes and cls in t.classes for t, p in got)
        tp, fp, fn = tp + ctp, fp + cfp, fn + cfn
        if ctp + cfp + cfn:
            pr, rc = _ratio(ctp, ctp + cfp), _ratio(ctp, ctp + cfn)
            per[cls] = {"tp": ctp, "fp": cfp, "fn": cfn, "precision": pr, "recall": rc}
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    f1 = 2 * precision * recall / (precision + recall) if precision and recall else None
    return ToolScore(
        tool=tool,
        cases=len(got),
        top1=sum(top) / len(top) if top else None,
        top1_n=len(top),
        io_matters=sum(matters) / len(matters) if matters else None,
        io_matters_n=len(matters),
        precision=precision,
        recall=recall,
        f1=f1,
        per_class=per,
    )


def find_log(folder: Path, case: str) -> Path | None:
    for cand in (folder / "logs" / f"{case}.darshan", folder / f"{case}.darshan", folder / "logs" / case):
        if cand.is_file():
            return cand
    return None


def run_blind(
    folder: Path,
    drishti_csv: Callable[[Path], str | None] | None = None,
    progress: Callable[[str], None] | None = None,
    record: bool = True,
    truth: str = "labels",
    development: bool = False,
) -> BlindScore:
    """Score the set once (see the module doc). ``drishti_csv``: the peer's CSV for a log, or None.
    ``development``: a set to tune on: no seal needed, nothing recorded as first sight."""
    from iodiag.analysis import analyze
    from iodiag.ingest import LogReadError, load_profile

    digest = "development (unsealed)" if development else check_seal(folder, truth)
    record = record and not development
    labels = read_labels(folder, truth)
    cases: list[CaseScore] = []
    for lab in labels:
        if progress:
            progress(lab.case)
        log = find_log(folder, lab.case)
        if log is None:
            cases.append(CaseScore(case=lab.case, truth=lab, error="log not found (rebuild the set's logs)"))
            continue
        case = CaseScore(case=lab.case, truth=lab)
        try:
            case.iodiag = predict_iodiag(analyze(load_profile(str(log), include=("HEATMAP",))))
        except LogReadError as exc:
            case.iodiag = Predicted(io_matters="unknown", top_class="corrupt_records", classes=[])
            case.error = str(exc)
        except Exception as exc:
            case.error = f"{type(exc).__name__}: {exc}"
        if drishti_csv is not None:
            try:
                text = drishti_csv(log)
                case.drishti = predict_drishti(text) if text else Predicted(io_matters=None, top_class=None, classes=[])
            except Exception as exc:
                case.drishti = Predicted(io_matters=None, top_class=None, classes=[])
                case.error = (case.error or "") + f" drishti: {exc}"
        cases.append(case)
    tools = [score_tool("iodiag", cases)]
    if drishti_csv is not None:
        tools.append(score_tool("drishti", cases))
    first_path = folder / f"FIRST_SIGHT.{truth}.json"
    result = BlindScore(
        set=folder.name,
        truth=truth,
        seal=digest,
        scored_at=datetime.now(UTC).isoformat(timespec="seconds"),
        first_sight=not development and not first_path.exists(),
        tools=tools,
        cases=cases,
    )
    if record and result.first_sight:
        first_path.write_text(result.model_dump_json(indent=1) + "\n")
    return result


def summary_rows(result: BlindScore) -> list[list[str]]:
    def f(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    return [
        [
            t.tool,
            str(t.cases),
            f"{f(t.top1)} ({t.top1_n})",
            f"{f(t.io_matters)} ({t.io_matters_n})",
            f(t.precision),
            f(t.recall),
            f(t.f1),
        ]
        for t in result.tools
    ]


def to_json(result: BlindScore) -> str:
    return json.dumps(result.model_dump(mode="json"), indent=1) + "\n"


__all__ = [
    "CLASSES",
    "CODE_CLASS",
    "STATES",
    "BlindLabel",
    "BlindScore",
    "check_seal",
    "predict_drishti",
    "predict_iodiag",
    "read_labels",
    "run_blind",
    "score_tool",
]
