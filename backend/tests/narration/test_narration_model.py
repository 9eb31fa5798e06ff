"""The model route with the real bundled model (SmolLM2-135M, on CPU) and a real OpenAI-compatible endpoint.

The 135M model invents numbers, files and codes freely. These tests let it, and check that the verifier
catches what it invents and that nothing it invents reaches a final answer; that the stream keeps its
protocol; that a timeout, an unreachable endpoint or a missing model file end in the template answer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

import pytest

from iodiag.analysis.models import Report
from iodiag.narration import tools
from iodiag.narration.checking.untrusted import strip_quoted
from iodiag.narration.checking.verifier import HARD_KINDS, verify
from iodiag.narration.composer import Conversation
from iodiag.narration.model.llm import bundled_model_path, get_model
from iodiag.narration.models import Answer, AnswerChunk
from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import (
    BADOST,
    DRISHTI,
    INJECTION,
    knowledge,
    model_settings,
    report,
    scenario_report,
)


@pytest.fixture(scope="module")
def narrator() -> Narrator:
    return Narrator(model_settings(), knowledge=knowledge())


def run(narrator: Narrator, rep: Report, question: str) -> tuple[Answer, list[AnswerChunk]]:
    chunks = list(narrator.answer(rep, question))
    finals = [c for c in chunks if c.final]
    assert len(finals) == 1 and chunks[-1] is finals[0] and finals[0].answer is not None
    for i, c in enumerate(chunks[:-1]):
        assert c.answer is None and c.delta, i
    # Only verified sentences are streamed and none is taken back: what the user watched is the answer.
    assert "".join(c.delta for c in chunks).strip() == finals[0].answer.text.strip()
    return finals[0].answer, chunks


def hard_violations_left(narrator: Narrator, rep: Report, question: str, answer: Answer) -> list[str]:
    """Re-check the final text against everything the plan held (not only what fitted in the prompt)."""
    plan = Conversation(rep, narrator.composer()).plan(question)
    check = verify(answer.text, narrator.grounding(plan, plan.facts, plan.passages))
    return [f"{v.kind}: {v.text}" for v in check.violations if v.kind in HARD_KINDS]


def test_the_model_loads_once_and_counts_tokens_with_its_tokenizer() -> None:
    model = get_model(model_settings())
    assert model is not None and model is get_model(model_settings())
    assert model.name == bundled_model_path().name.removesuffix(".gguf")
    assert model.tokenizer is not None and 0 < model.count_tokens("small writes to a shared file") < 12


def test_the_verifier_catches_what_the_model_invents(narrator: Narrator) -> None:
    """Asked to write about a job with no facts at all, the model makes things up; each is caught."""
    model = get_model(model_settings())
    assert model is not None
    turns: list[tuple[Any, str]] = [
        ("system", "You are an HPC I/O expert."),
        (
            "user",
            "Describe a slow HPC job in three sentences, with its run time in seconds, the size of its "
            "writes, the name of its output file and the rank that was slowest.",
        ),
    ]
    import time

    text = "".join(model.stream(turns, time.monotonic() + 120, max_tokens=64))
    rep = report(DRISHTI)
    plan = Conversation(rep, narrator.composer()).plan("Why is my job slow?")
    check = verify(text, narrator.grounding(plan, plan.facts, plan.passages))
    kinds = {v.kind for v in check.violations}
    assert kinds & {"unknown-number", "unknown-file", "unknown-rank"}, (text, check.violations)
    kept = check.kept_text()
    assert not kept or verify(kept, narrator.grounding(plan, plan.facts, plan.passages)).passed


@pytest.mark.parametrize(
    ("log", "question"),
    [(DRISHTI, "Why is my job slow?"), (INJECTION, "Which file is the problem?")],
    ids=["drishti-why", "injection-file"],
)
def test_no_invention_reaches_a_final_answer(narrator: Narrator, log: Any, question: str) -> None:
    rep = scenario_report(log) if log == INJECTION else report(log)
    answer, chunks = run(narrator, rep, question)
    assert answer.verifier.passed
    assert answer.verifier.attempts >= 1  # the model was tried
    assert hard_violations_left(narrator, rep, question, answer) == []
    assert "job is fine" not in strip_quoted(answer.text).lower()
    assert {c.id for c in answer.citations if c.kind == "finding"} <= rep.codes()
    # The bundled model rewords the template's sentences (test_narration_rephrase.py has the details): the answer
    # is the template's, sentence for sentence, with the rewordings that passed.
    assert answer.note.startswith("model reworded ")
    if answer.provenance == "template":
        assert answer.note.startswith("model reworded 0 ") and answer.model is None
    else:
        assert answer.provenance == "model"
        assert answer.model == get_model(model_settings()).name  # type: ignore[union-attr]
    streamed = "".join(c.delta for c in chunks)
    assert streamed  # the model's tokens were streamed as they came


def test_triage_summary_with_the_model_is_short_and_checked(narrator: Narrator) -> None:
    answer = narrator.triage_summary(report(BADOST))
    assert answer.verifier.passed and 1 <= len(answer.text.splitlines()) <= 4
    assert answer.intent == "triage"


def test_a_timeout_ends_in_the_template_answer() -> None:
    narrator = Narrator(model_settings(llm_timeout_s=0.05), knowledge=knowledge())
    answer, _ = run(narrator, report(DRISHTI), "Why is my job slow?")
    assert answer.provenance == "template" and "time" in answer.note and answer.verifier.passed
    assert answer.text.startswith("I/O takes 95% of this 12.00 s run")


def test_a_missing_model_file_ends_in_the_template_answer(tmp_path: Any) -> None:
    narrator = Narrator(model_settings(llm_model_path=str(tmp_path / "missing.gguf")), knowledge=knowledge())
    answer, _ = run(narrator, report(DRISHTI), "Why is my job slow?")
    assert answer.provenance == "template" and "not found" in answer.note


# --- an OpenAI-compatible endpoint, served by the real model ---------------------------------------


class _Endpoint(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions`` with ``stream: true``, as llama.cpp's server and vLLM answer it.

    A request that offers ``tools`` (not streamed) is answered as llama-cpp-python answers it, with the model in
    its ``chatml-function-calling`` chat format; or, while ``tools_supported`` is off, refused with HTTP 400 as a
    server without function calling refuses it. Streamed requests are kept in ``seen``, tool requests in
    ``tool_requests``.
    """

    llama: Any = None
    tool_llama: Any = None  # the same model, answering with function calls
    tools_supported: ClassVar[bool] = True
    seen: ClassVar[list[dict[str, Any]]] = []
    tool_requests: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: Any) -> None:  # keep the test output quiet
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
        if "tools" in body:
            self.tool_requests.append(body)
        else:
            self.seen.append(body)
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        if "tools" in body:
            if not self.tools_supported:
                self._json(400, {"error": {"message": "tools are not supported by this server", "type": "invalid"}})
                return
            assert body.get("stream") is False
            reply = self.tool_llama.create_chat_completion(
                messages=body["messages"],
                tools=body["tools"],
                tool_choice=body.get("tool_choice"),
                max_tokens=body.get("max_tokens", 64),
                temperature=body.get("temperature", 0.2),
                seed=body.get("seed"),
            )
            self._json(200, reply)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        stream: Iterator[dict[str, Any]] = self.llama.create_chat_completion(
            messages=body["messages"],
            max_tokens=body.get("max_tokens", 64),
            temperature=body.get("temperature", 0.2),
            seed=body.get("seed"),
            stream=True,
        )
        for event in stream:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    from llama_cpp import Llama

    path = str(bundled_model_path())
    _Endpoint.llama = Llama(model_path=path, n_ctx=4096, n_batch=512, verbose=False, seed=0)
    _Endpoint.tool_llama = Llama(
        model_path=path, n_ctx=4096, n_batch=512, verbose=False, seed=0, chat_format="chatml-function-calling"
    )
    server = HTTPServer(("127.0.0.1", 0), _Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_openai_compatible_endpoint(endpoint: str) -> None:
    s = model_settings(llm_provider="openai", llm_url=endpoint, llm_model_name="smollm2-served", llm_api_key="k")
    narrator = Narrator(s, knowledge=knowledge())
    rep = report(BADOST)
    answer, chunks = run(narrator, rep, "Why is my job slow?")
    request = _Endpoint.seen[0]
    assert request["stream"] is True and request["model"] == "smollm2-served"
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert "L04" in request["messages"][1]["content"]  # the facts went to the endpoint
    assert any(c.delta for c in chunks)
    assert answer.verifier.passed and hard_violations_left(narrator, rep, "Why is my job slow?", answer) == []
    if answer.provenance != "template":
        assert answer.model == "smollm2-served"


def test_an_unreachable_endpoint_ends_in_the_template_answer() -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    s = model_settings(llm_provider="openai", llm_url=f"http://127.0.0.1:{port}/v1", llm_model_name="x")
    answer, _ = run(Narrator(s, knowledge=knowledge()), report(DRISHTI), "Why is my job slow?")
    assert answer.provenance == "template" and answer.note.startswith("model:") and answer.verifier.passed


# --- the report's tools, called by the real model through the endpoint ---------------------------------

# The 135M model picks a function by chance; forcing one makes the call deterministic (llama-cpp-python holds
# the arguments to the function's schema with a grammar).
FORCED = {"type": "function", "function": {"name": "costs"}}


def _tool_settings(endpoint: str, name: str) -> Any:
    # The tool schemas and results need a larger window than the other model tests' 1024 tokens: with seven
    # tools, about 1,600 of them (counted at 3 characters a token, as for any endpoint), and room for the prompt.
    return model_settings(llm_provider="openai", llm_url=endpoint, llm_model_name=name, llm_context_tokens=3072)


def test_the_model_calls_a_report_tool_and_its_answer_is_checked(endpoint: str, narrator: Narrator) -> None:
    s = _tool_settings(endpoint, "smollm2-tools")
    model = get_model(s)
    assert model is not None and model.offers_tools
    model.tool_choice = FORCED
    rep = report(BADOST)
    question = "Why is my job slow?"
    asked, streamed = len(_Endpoint.tool_requests), len(_Endpoint.seen)
    answer, _ = run(Narrator(s, knowledge=knowledge()), rep, question)
    [offer] = _Endpoint.tool_requests[asked:]  # a forced choice gets one round
    assert offer["tools"] == tools.schemas() and offer["tool_choice"] == FORCED and offer["stream"] is False
    assert [m["role"] for m in offer["messages"]] == ["system", "user"]
    [final] = _Endpoint.seen[streamed:]
    assert final["stream"] is True and "tools" not in final
    assert [m["role"] for m in final["messages"]] == ["system", "user", "assistant", "tool"]
    [call] = final["messages"][2]["tool_calls"]
    assert call["function"]["name"] == "costs" and final["messages"][3]["tool_call_id"] == call["id"]
    result = json.loads(final["messages"][3]["content"])  # the report's numbers, as the model read them
    # J04 (the busiest rank's extra time) is the slow OST's symptom, so it is not a cause of its own.
    assert [c["code"] for c in result["causes"]] == [c.code for c in rep.verdict.causes] == ["L04"]
    assert result["causes"][0]["seconds"] == pytest.approx(rep.verdict.causes[0].seconds, rel=1e-5)
    # The slow OST's cause carries no command: pinning the job's 2,048 files to one OST is unsafe (docs/actions.md).
    assert result["causes"][0]["command"] == rep.verdict.causes[0].command and " -o " not in rep.verdict.headline
    # Whatever the model made of it, what reached the user rests on the facts and the tool's result.
    assert answer.verifier.passed
    plan = Conversation(rep, narrator.composer()).plan(question)
    g = narrator.grounding(plan, [*plan.facts, *tools.run(rep, "costs", "{}").facts], plan.passages)
    assert [v for v in verify(answer.text, g).violations if v.kind in HARD_KINDS] == []
    if answer.provenance != "template":
        assert answer.model == "smollm2-tools"


def test_an_endpoint_without_tool_support_gets_the_plain_route(endpoint: str, narrator: Narrator) -> None:
    s = _tool_settings(endpoint, "smollm2-no-tools")
    rep = report(DRISHTI)
    question = "Why is my job slow?"
    asked, streamed = len(_Endpoint.tool_requests), len(_Endpoint.seen)
    _Endpoint.tools_supported = False
    try:
        answer, _ = run(Narrator(s, knowledge=knowledge()), rep, question)
    finally:
        _Endpoint.tools_supported = True
    assert len(_Endpoint.tool_requests[asked:]) == 1  # offered once, refused with HTTP 400
    [final] = _Endpoint.seen[streamed:]
    assert [m["role"] for m in final["messages"]] == ["system", "user"]
    assert answer.verifier.passed and hard_violations_left(narrator, rep, question, answer) == []
    model = get_model(s)
    assert model is not None and not model.offers_tools  # and not offered them again
