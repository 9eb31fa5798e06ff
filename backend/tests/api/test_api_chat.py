"""Chat over Server-Sent Events against a real server: token events, then the final answer; history."""

from __future__ import annotations

import importlib.util
import json

import httpx
import pytest

from iodiag.narration.models import Answer
from tests.api.test_api_support import LOG_DRISHTI, Server, upload, wait_done

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("iodiag.narration.service") is None,
    reason="the narrator (iodiag.narration.service) has not landed yet",
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Server:
    # The template route (no model weights) over an empty knowledge base: building the real index
    # takes a minute on two cores and is the narrator's business, not the API's. Its own server, so
    # these settings do not leak into the other API tests.
    empty = tmp_path_factory.mktemp("knowledge")
    return Server.start_new({"IODIAG_LLM_PROVIDER": "none", "IODIAG_KNOWLEDGE_DIR": str(empty)}, workers=1)


def sse(client: httpx.Client, url: str, question: str) -> list[tuple[str, str]]:
    events: list[tuple[str, str]] = []
    with client.stream("POST", url, json={"question": question}, timeout=120) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        event, data = "message", []
        for line in r.iter_lines():
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                data.append(line.split(":", 1)[1].strip())
            elif line == "" and data:
                events.append((event, "\n".join(data)))
                event, data = "message", []
    return events


def test_chat_streams_tokens_then_a_final_answer_and_keeps_history(server: Server) -> None:
    with server.client("asker") as c:
        aid = upload(c, LOG_DRISHTI).json()["id"]
        assert wait_done(c, aid)["status"] == "done"
        url = f"/api/v1/analyses/{aid}/chat"
        events = sse(c, url, "Why is my job's I/O slow?")
        kinds = [k for k, _ in events]
        assert kinds[-1] == "final", events
        assert set(kinds) <= {"token", "final"}
        answer = Answer.model_validate_json(events[-1][1])
        assert answer.text and answer.provenance in ("model", "model-repaired", "template")
        assert answer.citations, "the answer cites the findings it rests on"
        codes = {f["code"] for f in c.get(f"/api/v1/analyses/{aid}").json()["findings"]}
        assert {ct.id for ct in answer.citations if ct.kind == "finding"} <= codes
        for kind, data in events:
            if kind == "token":
                assert isinstance(json.loads(data)["delta"], str)

        sse(c, url, "How do I fix it?")
        history = c.get(url).json()
        assert [m["role"] for m in history["messages"]] == ["user", "assistant", "user", "assistant"]
        assert history["messages"][0]["text"] == "Why is my job's I/O slow?"
        assert history["messages"][1]["answer"]["provenance"] == answer.provenance

        # Another user neither sees the thread nor may ask; the help desk has its own thread.
        with server.client("other") as o:
            assert o.get(url).status_code == 404
            assert o.post(url, json={"question": "x"}).status_code == 404
        with server.client("hd", "helpdesk") as hd:
            assert hd.get(url).json()["messages"] == []


def test_chat_bad_input(server: Server) -> None:
    with server.client("asker2") as c:
        aid = upload(c, LOG_DRISHTI).json()["id"]
        wait_done(c, aid)
        url = f"/api/v1/analyses/{aid}/chat"
        assert c.post(url, json={"question": ""}).status_code == 422
        assert c.post(url, json={"question": "x" * 5000}).status_code == 422
        assert c.post(url, json={}).status_code == 422
        assert c.post(url, content=b"nope", headers={"Content-Type": "application/json"}).status_code == 422
        assert c.post("/api/v1/analyses/nope/chat", json={"question": "hi"}).status_code == 404


def test_a_new_data_directory_has_its_knowledge_index_before_the_first_question() -> None:
    # The real documents this time: the server starts from the prebuilt seed made at install.
    server = Server.start_new({"IODIAG_LLM_PROVIDER": "none"}, workers=1)
    try:
        assert (server.data_dir / "knowledge-index" / "manifest.json").is_file()  # there before any question
        with server.client("first") as c:
            aid = upload(c, LOG_DRISHTI).json()["id"]
            assert wait_done(c, aid)["status"] == "done"
            events = sse(c, f"/api/v1/analyses/{aid}/chat", "How do I fix it?")
            answer = Answer.model_validate_json(events[-1][1])
        assert [ct for ct in answer.citations if ct.kind == "doc"], answer.citations
        assert "knowledge index copied" in server.server_log()
    finally:
        server.stop()
