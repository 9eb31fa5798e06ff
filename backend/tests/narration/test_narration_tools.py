"""The report's tools (``narration/tools/``) on real logs, and the tool round of the model route.

Each tool's result is checked against the report it reads; every number a result sends to the model must be
one its facts ground, so that a model quoting it passes the verifier. The route tests use a canned
OpenAI-compatible endpoint (no model): what it asks for and what it says are fixed, so the protocol (the
``tool`` messages, the errors, the fallbacks) is checked exactly; the real model is in test_narration_model.py.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import ValidationError

from iodiag.analysis.models import Report
from iodiag.narration import tools
from iodiag.narration.checking.facts import all_paths
from iodiag.narration.checking.grounding import Grounding
from iodiag.narration.checking.quantities import parse_quantities
from iodiag.narration.checking.verifier import HARD_KINDS, verify
from iodiag.narration.composer import Conversation
from iodiag.narration.model.llm import get_model
from iodiag.narration.models import Answer
from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import BADOST, DRISHTI, E3SM, knowledge, report, settings

LOGS = [BADOST, DRISHTI, E3SM]
CALLS: list[tuple[str, str]] = [
    ("costs", "{}"),
    ("recommend", "{}"),
    ("recommend", '{"code": "J02"}'),
    ("top_files", "{}"),
    ("top_files", '{"by": "bytes", "n": 10}'),
    ("top_files", '{"by": "ops", "n": 3}'),
    ("top_ranks", '{"n": 16}'),
    ("layer_gap", ""),
]


def _ids(p: Path) -> str:
    return p.name.split("_")[0].removesuffix(".darshan")


# --- each tool against the report --------------------------------------------------------------------


@pytest.mark.parametrize("log", [BADOST, DRISHTI, E3SM], ids=_ids)
def test_costs_are_the_verdicts_causes(log: Path) -> None:
    rep = report(log)
    got = tools.costs(rep, tools.NoArgs())
    want = rep.verdict.causes
    assert [(c.code, c.title, c.seconds, c.share_of_runtime, c.command) for c in got.causes] == [
        (c.code, c.title, c.seconds, c.share_of_runtime, c.command) for c in want
    ]
    assert got.io_share == rep.verdict.io_share
    assert rep.io_share is not None and got.runtime_s == rep.io_share.runtime_s


def test_recommend_a_finding_gives_its_concrete_commands() -> None:
    # The Drishti sample's fill-value writes: its concrete HDF5 call. (Badost's slow OST has no command any more:
    # pinning its 2,048 files to one OST with lfs setstripe -o is unsafe, docs/actions.md.)
    rep = report(DRISHTI)
    got = tools.recommend(rep, tools.RecommendArgs(code="X06"))
    finding = rep.finding("X06")
    assert finding is not None and finding.impact is not None
    [f] = got.findings
    assert f.code == "X06" and f.seconds == finding.impact.seconds
    assert f.actions and f.actions[0].command.startswith("H5Pset_fill_time")
    assert [(a.command, a.where, a.effect, a.saves_s) for a in f.actions] == [
        (a.command, a.where, a.effect, a.saves_s) for a in finding.actions
    ]
    # how small models write a code
    assert tools.recommend(rep, tools.RecommendArgs(code=" x06 ")).findings == got.findings


def test_recommend_without_a_code_gives_the_costliest_findings_with_commands() -> None:
    rep = report(DRISHTI)
    got = tools.recommend(rep, tools.RecommendArgs())
    assert 1 <= len(got.findings) <= tools.MAX_RECOMMEND_FINDINGS
    assert got.findings[0].code == rep.verdict.causes[0].code == "X06"
    assert all(f.actions for f in got.findings)
    seconds = [f.seconds or 0.0 for f in got.findings]
    assert seconds == sorted(seconds, reverse=True)


def test_recommend_names_what_the_report_holds_when_the_code_is_not_in_it() -> None:
    rep = report(DRISHTI)
    with pytest.raises(tools.ToolError, match=r"no finding L04.*X06"):
        tools.recommend(rep, tools.RecommendArgs(code="L04"))
    none = tools.recommend(rep, tools.RecommendArgs(code="P14"))  # praise: no command to give
    assert none.findings[0].actions == [] and "no concrete command" in none.note


@pytest.mark.parametrize("log", [BADOST, DRISHTI, E3SM], ids=_ids)
def test_top_files_by_time_is_the_reports_file_usage(log: Path) -> None:
    rep = report(log)
    got = tools.top_files(rep, tools.TopFilesArgs(by="time", n=10))
    assert [f.path for f in got.files] == [fu.path for fu in rep.top_files[:10]]
    first, top = got.files[0], rep.top_files[0]
    assert (first.io_time_s, first.bytes_written, first.ranks, first.layer) == (
        top.io_time_s,
        top.bytes_written,
        top.ranks,
        top.layer,
    )
    assert got.files_with_io == rep.files_with_io
    assert len(tools.top_files(rep, tools.TopFilesArgs(n=2)).files) == min(2, len(rep.top_files))


def test_top_files_by_bytes_and_by_operations() -> None:
    rep = report(E3SM)
    by_bytes = tools.top_files(rep, tools.TopFilesArgs(by="bytes", n=10)).files
    moved = [f.bytes_read + f.bytes_written for f in by_bytes]
    assert moved == sorted(moved, reverse=True)
    by_ops = tools.top_files(rep, tools.TopFilesArgs(by="ops", n=10))
    assert rep.cross_layer is not None
    h0 = rep.cross_layer.files[0]
    mpiio = h0.layer("MPI-IO")
    assert mpiio is not None
    assert by_ops.files[0].path == h0.path and by_ops.files[0].ops == mpiio.reads.ops + mpiio.writes.ops
    # STDOUT has no operation count in the report: it comes last, and the note says why
    assert by_ops.files[-1].ops is None and "operation counts only" in by_ops.note


def test_top_ranks_start_with_the_busiest_and_carry_the_findings_evidence() -> None:
    rep = report(BADOST)
    got = tools.top_ranks(rep, tools.TopRanksArgs(n=4))
    assert rep.io_share is not None
    assert got.busiest_rank == rep.io_share.slowest_rank == 1507
    assert got.busiest_rank_io_s == rep.io_share.slowest_rank_io_s
    assert got.ranks[0].rank == 1507 and got.ranks[0].busiest and "L04" in got.ranks[0].named_by
    assert len(got.ranks) == 4
    l04 = next(f for f in got.findings if f.code == "L04")
    finding = rep.finding("L04")
    assert finding is not None
    assert l04.ranks == finding.ranks[:4] and l04.ranks_named == len(finding.ranks)
    assert {n.name: n.value for n in l04.evidence}["slow_ost"] == 14


def test_top_osts_put_the_slow_ost_first_against_the_median() -> None:
    """The OST L04 names leads by I/O time; by bytes the order changes; a job off Lustre says so."""
    rep = report(BADOST)
    got = tools.top_osts(rep, tools.TopOstsArgs(n=3))
    assert got.osts[0].ost == 14 and len(got.osts) == 3 and len(rep.osts) == 24
    assert got.median_io_time_s is not None and got.osts[0].io_time_s > 40 * got.median_io_time_s
    by_bytes = tools.top_osts(rep, tools.TopOstsArgs(by="bytes", n=16))
    assert [o.bytes for o in by_bytes.osts] == sorted((o.bytes for o in by_bytes.osts), reverse=True)
    fact = got.facts()[0]
    assert fact.text.startswith("OSTs first by I/O time (median OST: ") and "OST 14: 12.90 h" in fact.text
    off = tools.top_osts(report(DRISHTI), tools.TopOstsArgs())
    assert off.osts == [] and "no Lustre" in off.note
    assert "top_osts" in {s["function"]["name"] for s in tools.schemas()}


def test_layer_gap_follows_requests_down_the_stack() -> None:
    rep = report(DRISHTI)
    got = tools.layer_gap(rep, tools.NoArgs())
    assert got.scope == "cross-layer files" and got.files == 1
    assert [lay.layer for lay in got.layers] == ["HDF5", "MPI-IO", "POSIX"]
    assert rep.cross_layer is not None
    for lay in got.layers:
        src = rep.cross_layer.job_layer(lay.layer)
        assert src is not None
        assert (lay.bytes_written, lay.write_ops, lay.write_s) == (src.writes.bytes, src.writes.ops, src.writes.time_s)
    [hdf5_mpiio, mpiio_posix] = got.gaps
    x06 = rep.finding("X06")
    assert x06 is not None
    assert hdf5_mpiio.bytes_written_ratio == pytest.approx(float(x06.metric("amplification") or 0))  # 2.0
    assert mpiio_posix.write_ops_ratio == pytest.approx(15922 / 8448)
    assert mpiio_posix.time_gap_s == pytest.approx(got.layers[1].time_s - got.layers[2].time_s)


def test_layer_gap_without_a_cross_layer_summary_uses_the_interfaces() -> None:
    got = tools.layer_gap(report(BADOST), tools.NoArgs())
    assert got.scope == "whole job" and [lay.layer for lay in got.layers] == ["POSIX"]
    assert got.gaps == [] and "one layer only" in got.note


def test_file_layout_on_lustre_elsewhere_and_not_recorded() -> None:
    e3sm = tools.file_layout(report(E3SM), tools.FileLayoutArgs(path="can_I_out_h0.nc"))
    assert e3sm.path == "/projects/radix-io/snyder/e3sm/can_I_out_h0.nc"
    assert (e3sm.on_lustre, e3sm.stripe_count, e3sm.stripe_size, len(e3sm.osts)) == (True, 56, 1 << 20, 56)
    assert "X04" in e3sm.findings
    badost = report(BADOST)
    slow = tools.file_layout(badost, tools.FileLayoutArgs(path=badost.top_files[0].path))
    assert slow.on_lustre and slow.stripe_count is None and "no stripe layout" in slow.note
    assert slow.findings == ["L04"]
    gpfs = tools.file_layout(report(DRISHTI), tools.FileLayoutArgs(path="8a_parallel_3Db_0000001.h5"))
    assert gpfs.on_lustre is False and gpfs.file_system == "gpfs" and "not on Lustre" in gpfs.note
    with pytest.raises(tools.ToolError, match="names no file"):
        tools.file_layout(badost, tools.FileLayoutArgs(path="/etc/passwd"))


def test_bad_arguments_are_a_clear_error() -> None:
    with pytest.raises(ValidationError):
        tools.TopFilesArgs(n=0)
    with pytest.raises(ValidationError):
        tools.TopFilesArgs.model_validate({"by": "size"})
    rep = report(BADOST)
    cases = {
        ("top_files", '{"n": 99}'): "less than or equal to 10",
        ("top_files", '{"by": "size"}'): "by:",
        ("top_files", '{"limit": 3}'): "limit: Extra inputs",
        ("top_files", "{not json"): "not JSON",
        ("top_files", "[1, 2]"): "JSON object",
        ("file_layout", "{}"): "path: Field required",
        ("recommend", '{"code": "Z99"}'): "no finding Z99",
        ("rm_rf", "{}"): "unknown tool",
    }
    for (name, arguments), expect in cases.items():
        ran = tools.run(rep, name, arguments)
        assert not ran.ok and ran.facts == [], name
        error = json.loads(ran.content)
        assert set(error) == {"tool", "error"} and expect in error["error"], (name, arguments, error)


# --- results: serializable, and grounded by their own facts ---------------------------------------------


def _numbers(value: Any, key: str = "") -> Iterator[tuple[str, float]]:
    """The numbers a result sends to the model, each with the key it is sent under."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _numbers(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _numbers(v, key)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield key, float(value)


@pytest.mark.parametrize("log", LOGS, ids=_ids)
def test_every_number_a_result_sends_is_grounded_by_its_facts(log: Path) -> None:
    rep = report(log)
    paths = set(all_paths(rep)) | {fu.path for fu in rep.top_files}
    calls = [*CALLS, ("file_layout", json.dumps({"path": rep.top_files[0].path}))]
    for name, arguments in calls:
        ran = tools.run(rep, name, arguments)
        assert ran.ok, (name, ran.content)
        sent = json.loads(ran.content)
        g = Grounding(ran.facts, [], frozenset(rep.codes()))
        ranks = {r for f in ran.facts for r in f.ranks}
        for key, value in _numbers(sent):
            if key in ("rank", "busiest_rank") or (key == "ranks" and name == "top_ranks"):
                assert int(value) in ranks, (name, value)  # rank ids: the verifier checks them as ranks
                continue
            [q] = parse_quantities(f"{value:.12g}")
            assert g.knows_number(q), (name, key, value)
        assert {p for f in ran.facts for p in f.files} <= paths, name
        assert all(c in rep.codes() for f in ran.facts if f.code for c in [f.code]), name


def test_the_schemas_offer_every_tool_with_its_arguments() -> None:
    offered = tools.schemas()
    assert [s["function"]["name"] for s in offered] == list(tools.TOOLS)
    json.dumps(offered)
    for s in offered:
        params = s["function"]["parameters"]
        assert s["type"] == "function" and s["function"]["description"]
        assert params["type"] == "object" and params["additionalProperties"] is False and "title" not in params
    by_name = {s["function"]["name"]: s["function"]["parameters"] for s in offered}
    assert by_name["top_files"]["properties"]["by"]["enum"] == ["time", "bytes", "ops"]
    assert by_name["file_layout"]["required"] == ["path"]
    # Length bounds stay ours to check: llama.cpp's server compiles them into a grammar too large to accept
    assert "maxLength" not in json.dumps(offered) and "minLength" not in json.dumps(offered)


def test_calls_past_the_limit_or_the_room_get_an_error_not_a_result() -> None:
    rep = report(BADOST)

    def count(text: str) -> int:
        return len(text) // 3 + 1

    calls = [(f"c{i}", "costs", "{}") for i in range(tools.MAX_CALLS_PER_ROUND + 1)]
    answered = tools.run_calls(rep, calls, count, room=10_000)
    assert [cid for cid, _ in answered.results] == [c[0] for c in calls]
    assert "at most" in json.loads(answered.results[-1][1])["error"]
    assert all("causes" in json.loads(content) for _, content in answered.results[:-1])
    tight = tools.run_calls(rep, [("a", "top_ranks", '{"n": 16}')], count, room=100)
    assert "too long" in json.loads(tight.results[0][1])["error"] and tight.facts == []


# --- the tool round, against a canned endpoint ---------------------------------------------------------

# A number only the layer_gap result holds (POSIX read + write + metadata time of sample-badost): the
# prompt's facts do not, so the sentence passes only if the tool's facts reach the grounding.
TOOL_ONLY = "POSIX spent 69715.2 s in I/O time over the whole job."
ANSWER = f"{TOOL_ONLY}\nL04 costs 97.7% of the run time: a slow OST.\n"


class _Canned(BaseHTTPRequestHandler):
    """Asks for fixed calls on the first tool request, none on the next, then streams a fixed answer."""

    mode: ClassVar[str] = "calls"  # "calls", "refuse" (HTTP 400), "broken" (HTTP 500)
    requests: ClassVar[list[dict[str, Any]]] = []
    calls: ClassVar[list[dict[str, Any]]] = [
        {"id": "a", "type": "function", "function": {"name": "nope", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "top_files", "arguments": "{not json"}},
        {"id": "c", "type": "function", "function": {"name": "layer_gap", "arguments": {}}},  # an object, not text
    ]

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append(body)
        if "tools" in body:
            if self.mode != "calls":
                self._json(400 if self.mode == "refuse" else 500, {"error": {"message": self.mode}})
                return
            done = any(m["role"] == "tool" for m in body["messages"])
            message: dict[str, Any] = {"role": "assistant", "content": "done" if done else None}
            if not done:
                message["tool_calls"] = self.calls
            self._json(200, {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for word in ANSWER.split(" "):
            event = {"choices": [{"index": 0, "delta": {"content": word + " "}}]}
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")


@pytest.fixture(scope="module")
def canned() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Canned)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def _ask(url: str, name: str, mode: str, rep: Report) -> tuple[Answer, list[dict[str, Any]]]:
    _Canned.mode = mode
    _Canned.requests.clear()
    s = settings(
        llm_provider="openai",
        llm_url=url,
        llm_model_name=name,
        llm_context_tokens=4096,
        llm_max_answer_tokens=64,
        llm_timeout_s=30.0,
    )
    chunks = list(Narrator(s, knowledge=knowledge()).answer(rep, "Why is my job slow?"))
    answer = chunks[-1].answer
    assert answer is not None and "".join(c.delta for c in chunks).strip() == answer.text.strip()
    return answer, list(_Canned.requests)


def test_tool_calls_are_run_and_answered_and_their_results_ground_the_answer(canned: str) -> None:
    rep = report(BADOST)
    answer, requests = _ask(canned, "canned-calls", "calls", rep)
    first, second, final = requests
    assert first["tools"] == tools.schemas() and first["tool_choice"] == "auto" and first["stream"] is False
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool", "tool", "tool"]
    assert "tools" not in final and final["stream"] is True
    assert final["messages"] == second["messages"]  # the second round asked for nothing more
    asked, *answers = final["messages"][2:]
    assert asked["content"] == "" and [c["id"] for c in asked["tool_calls"]] == ["a", "b", "c"]
    assert asked["tool_calls"][2]["function"]["arguments"] == "{}"
    assert [m["tool_call_id"] for m in answers] == ["a", "b", "c"]
    unknown, bad, gap = (json.loads(m["content"]) for m in answers)
    assert "unknown tool" in unknown["error"] and "not JSON" in bad["error"]
    assert gap["layers"][0]["layer"] == "POSIX" and gap["layers"][0]["time_s"] == 69715.2
    # the sentence resting on the tool's result passed the gate; without the result it would not have
    assert TOOL_ONLY in answer.text and answer.verifier.passed
    plan = Conversation(rep, Narrator(settings(llm_provider="none")).composer()).plan("Why is my job slow?")
    narrator = Narrator(settings(llm_provider="none"), knowledge=knowledge())
    without = verify(TOOL_ONLY, narrator.grounding(plan, plan.facts, plan.passages))
    assert any(v.kind == "unknown-number" for v in without.violations)
    assert not [v for v in answer.verifier.violations if v.kind in HARD_KINDS]


def test_an_endpoint_that_refuses_tools_gets_the_plain_route_and_no_tools_again(canned: str) -> None:
    rep = report(BADOST)
    answer, requests = _ask(canned, "canned-refuse", "refuse", rep)
    refused, final = requests
    assert "tools" in refused and "tools" not in final
    assert [m["role"] for m in final["messages"]] == ["system", "user"]
    assert answer.verifier.passed and TOOL_ONLY not in answer.text  # no tool ran: its number is unknown
    model = get_model(
        settings(
            llm_provider="openai",
            llm_url=canned,
            llm_model_name="canned-refuse",
            llm_context_tokens=4096,
            llm_max_answer_tokens=64,
            llm_timeout_s=30.0,
        )
    )
    assert model is not None and not model.offers_tools
    _, again = _ask(canned, "canned-refuse", "calls", rep)
    assert ["tools" in r for r in again] == [False]


def test_a_broken_tool_round_falls_back_to_the_plain_route(canned: str) -> None:
    answer, requests = _ask(canned, "canned-broken", "broken", report(BADOST))
    assert ["tools" in r for r in requests] == [True, False]
    assert [m["role"] for m in requests[1]["messages"]] == ["system", "user"]
    assert answer.verifier.passed and answer.text


def test_a_window_too_small_for_the_tools_offers_none(canned: str) -> None:
    _Canned.mode = "calls"
    _Canned.requests.clear()
    s = settings(llm_provider="openai", llm_url=canned, llm_model_name="canned-small", llm_context_tokens=1024)
    list(Narrator(s, knowledge=knowledge()).answer(report(BADOST), "Why is my job slow?"))
    assert ["tools" in r for r in _Canned.requests] == [False]


# --- the fact-query layer as a tool ---------------------------------------------------------------------


def test_query_answers_one_fact_from_the_counters_and_grounds_what_it_says() -> None:
    rep = report(BADOST)
    # The same sentence the chat's first sentence gives for the question, through the typed query.
    ran = tools.run(rep, "query", {"metric": "slow_ost"})
    assert ran.ok, ran.content
    said = json.loads(ran.content)["answer"]
    assert said.startswith("OST 14 was slow, hitting 85 rank(s)"), said
    g = Grounding(ran.facts, [], frozenset(rep.codes()))
    assert verify(said, g).passed
    assert not verify(said.replace("85 rank", "58 rank"), g).passed  # a number the result never gave
    # a rank number is the rank scope; an interface name the interface scope; a file name the file
    rank = json.loads(tools.run(rep, "query", {"metric": "bytes", "target": "1507", "direction": "write"}).content)
    assert rank["answer"].startswith("Rank 1507 wrote 256 MiB"), rank
    hdf5 = json.loads(tools.run(rep, "query", {"metric": "uses", "target": "hdf5", "yes_no": True}).content)
    assert hdf5["answer"].startswith("No: the log has no HDF5 records"), hdf5
    path = rep.top_files[0].path.rsplit("/", 1)[-1]
    fs = json.loads(tools.run(rep, "query", {"metric": "file_system", "target": path}).content)
    assert "was on Lustre" in fs["answer"] and path in fs["answer"], fs


def test_query_with_a_metric_it_does_not_know_or_nothing_to_say_is_an_error_the_model_can_read() -> None:
    rep = report(BADOST)
    bad = tools.run(rep, "query", {"metric": "memory"})
    assert not bad.ok and "unknown metric 'memory'" in json.loads(bad.content)["error"] and not bad.facts
    none = tools.run(rep, "query", {"metric": "chunk_size", "target": "nowhere.bin"})
    assert none.ok and "no DFS records" in json.loads(none.content)["answer"]
    schema = next(s for s in tools.schemas() if s["function"]["name"] == "query")["function"]["parameters"]
    assert "slow_ost" in schema["properties"]["metric"]["enum"] and schema["required"] == ["metric"]
