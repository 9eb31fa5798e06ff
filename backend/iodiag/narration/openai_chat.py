"""A langchain chat model for any OpenAI-compatible ``/v1/chat/completions`` endpoint, over httpx.

vLLM, the llama.cpp server and Ollama all speak this protocol; streaming is server-sent events, one
``data: {json}`` line per token and ``data: [DONE]`` at the end. Written directly on httpx (already a
dependency) rather than through ``langchain-openai``, which would pull in the OpenAI SDK for one call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult


def _role(m: BaseMessage) -> str:
    if isinstance(m, SystemMessage):
        return "system"
    if isinstance(m, HumanMessage):
        return "user"
    if isinstance(m, AIMessage):
        return "assistant"
    raise ValueError(f"unsupported message type {type(m).__name__}")


class OpenAICompatibleChat(BaseChatModel):
    base_url: str  # up to and including /v1
    api_key: str = ""
    model: str = ""
    max_tokens: int = 400
    temperature: float = 0.2
    timeout_s: float = 60.0
    seed: int | None = None

    @property
    def _llm_type(self) -> str:
        return "openai-compatible"

    def _payload(self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "messages": [{"role": _role(m), "content": m.content} for m in messages],
            "max_tokens": int(kwargs.get("max_tokens", self.max_tokens)),
            "temperature": self.temperature,
            "stream": True,
        }
        if self.model:
            body["model"] = self.model
        seed = kwargs.get("seed", self.seed)
        if seed is not None:
            body["seed"] = int(seed)
        if stop:
            body["stop"] = stop
        return body

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        url = self.base_url.rstrip("/") + "/chat/completions"
        headers = {"Accept": "text/event-stream"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        timeout = httpx.Timeout(self.timeout_s, connect=min(self.timeout_s, 10.0))
        with (
            httpx.Client(timeout=timeout) as client,
            client.stream("POST", url, json=self._payload(messages, stop, **kwargs), headers=headers) as r,
        ):
            if r.status_code >= 400:
                body = r.read().decode("utf-8", "replace")
                raise RuntimeError(f"{url} answered HTTP {r.status_code}: {' '.join(body.split())[:200]}")
            for line in r.iter_lines():
                if not line.startswith("data:"):
                    continue  # comments, event names, keep-alives
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                event = json.loads(data)
                choices = event.get("choices") or []
                if not choices:
                    continue
                content = (choices[0].get("delta") or {}).get("content") or ""
                if content:
                    chunk = ChatGenerationChunk(message=AIMessageChunk(content=content))
                    if run_manager is not None:
                        run_manager.on_llm_new_token(content, chunk=chunk)
                    yield chunk

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = "".join(c.text for c in self._stream(messages, stop, run_manager, **kwargs))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])
