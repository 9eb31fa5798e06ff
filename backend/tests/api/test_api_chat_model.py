"""Chat with the bundled model against a real server: the model runs in its own process, not the server's.

The answer streams from the model process; the server never maps llama.cpp; a model process killed mid-answer
ends that answer with an ``error`` event (no hang), and the next question is answered by a new one.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from iodiag.narration.models import Answer
from tests.api.test_api_support import LOG_DRISHTI, Server, upload, wait_done

WORKER = b"iodiag.narration.model.worker"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Server:
    empty = tmp_path_factory.mktemp("knowledge")  # no documents: the model's process is what is tested
    env = {"IODIAG_LLM_PROVIDER": "llamacpp", "IODIAG_LLM_THREADS": "2", "IODIAG_KNOWLEDGE_DIR": str(empty)}
    return Server.start_new(env, workers=1)


def model_processes(server_pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == server_pid and WORKER in cmdline:
            found.append(int(entry.name))
    return found


def ask(client: httpx.Client, url: str, question: str, on_token: object = None) -> list[tuple[str, str]]:
    events: list[tuple[str, str]] = []
    with client.stream("POST", url, json={"question": question}, timeout=180) as r:
        assert r.status_code == 200, r.read()
        event, data = "message", []
        for line in r.iter_lines():
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                data.append(line.split(":", 1)[1].strip())
            elif line == "" and data:
                events.append((event, "\n".join(data)))
                if event == "token" and callable(on_token) and json.loads(events[-1][1])["delta"].strip():
                    on_token()
                event, data = "message", []
    return events


def test_the_model_answers_from_its_own_process_and_a_crash_costs_one_answer(server: Server) -> None:
    assert server.proc is not None
    pid = server.proc.pid
    with server.client("asker") as c:
        aid = upload(c, LOG_DRISHTI).json()["id"]
        assert wait_done(c, aid)["status"] == "done"
        url = f"/api/v1/analyses/{aid}/chat"
        assert model_processes(pid) == []  # started on first use

        events = ask(c, url, "Why is my job slow?")
        kinds = [k for k, _ in events]
        assert kinds[-1] == "final" and kinds.count("token") > 1, events
        answer = Answer.model_validate_json(events[-1][1])
        assert answer.verifier.passed and answer.provenance in ("model", "template")
        assert "reworded" in answer.note  # the model was asked to reword the template's sentences
        [model] = model_processes(pid)
        assert "libllama" in Path(f"/proc/{model}/maps").read_text()
        assert "libllama" not in Path(f"/proc/{pid}/maps").read_text()  # never loaded into the server

        killed: list[int] = []

        def kill_model() -> None:
            if not killed:
                killed.append(model)
                os.kill(model, signal.SIGKILL)

        t0 = time.monotonic()
        events = ask(c, url, "Why is my job slow?", on_token=kill_model)
        assert killed and time.monotonic() - t0 < 60
        kinds = [k for k, _ in events]
        assert kinds[-1] == "error" and "final" not in kinds, events
        detail = json.loads(events[-1][1])["detail"]
        assert "model process was killed by signal SIGKILL" in detail and "ask again" in detail

        events = ask(c, url, "Which file is the problem?")
        assert events[-1][0] == "final", events
        [again] = model_processes(pid)
        assert again != model
