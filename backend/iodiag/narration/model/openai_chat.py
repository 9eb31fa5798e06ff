"""A langchain chat model for any OpenAI-compatible ``/v1/chat/completions`` endpoint, over httpx.

vLLM, the llama.cpp server and Ollama all speak this protocol; streaming is server-sent events, one
``data: {json}`` line per token and ``data: [DONE]`` at the end. Written directly on httpx (already a
dependency) rather than through ``langchain-openai``, which would pull in the OpenAI SDK for one call.

:meth:`OpenAICompatibleChat.call_tools` is the one request that is not streamed: it offers functions
(``tools``) and reads back the calls the model asks for. The conversation that follows carries them as an
assistant message with ``tool_calls`` (kept raw in ``additional_kwargs``, as langchain-openai keeps them) and
one ``tool`` message per call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal

import httpx
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class FunctionCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    arguments: str = Field(default="{}", description="JSON text, as the model wrote it (not necessarily valid)")

    @field_validator("arguments", mode="before")
    @classmethod
    def _text(cls, v: Any) -> Any:
        # Some servers send the arguments as an object rather than as JSON text.
        return json.dumps(v) if isinstance(v, dict) else ("{}" if v is None else v)


class ToolCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class ToolReply(BaseModel):
    """The assistant message of a non-streamed reply: text, calls, or both."""

    model_config = ConfigDict(frozen=True)

    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)


class EndpointRejected(RuntimeError):
    """The endpoint refused the request (HTTP 4xx): for a request with ``tools``, most often no tool support."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _message(m: BaseMessage) -> dict[str, Any]:
    if isinstance(m, SystemMessage):
        return {"role": "system", "content": m.content}
    if isinstance(m, HumanMessage):
        return {"role": "user", "content": m.content}
    if isinstance(m, ToolMessage):
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}
    if isinstance(m, AIMessage):
        out: dict[str, Any] = {"role": "assistant", "content": m.content}
        calls = m.additional_kwargs.get("tool_calls")
        if calls:
            out["tool_calls"] = calls
        return out
    raise ValueError(f"unsupported message type {type(m).__name__}")


def _reply(url: str, data: Any) -> ToolReply:
    """The first choice's message of a chat completion; calls without an id get one (some servers omit it)."""
    try:
        message = data["choices"][0]["message"]
        calls = [
            {**c, "id": c.get("id") or f"call_{i}", "type": "function"}
            for i, c in enumerate(message.get("tool_calls") or [])
        ]
        return ToolReply(content=message.get("content") or "", tool_calls=calls)
    except (KeyError, IndexError, TypeError, AttributeError, ValidationError) as exc:
        raise RuntimeError(f"{url} answered something that is not a chat completion: {exc}") from None


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
            "messages": [_message(m) for m in messages],
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

    def _headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def call_tools(
        self,
        messages: list[BaseMessage],
        tools: list[dict[str, Any]],
        tool_choice: str | dict[str, Any] = "auto",
        timeout_s: float | None = None,
        **kwargs: Any,
    ) -> ToolReply:
        """One non-streamed request offering ``tools``; the reply's text and the calls the model asks for.

        Raises :class:`EndpointRejected` on HTTP 4xx (an endpoint without tool support answers so) and
        ``RuntimeError`` or an httpx error on any other failure.
        """
        url = self.base_url.rstrip("/") + "/chat/completions"
        body = {**self._payload(messages, None, **kwargs), "stream": False, "tools": tools, "tool_choice": tool_choice}
        wait = min(self.timeout_s, timeout_s) if timeout_s is not None else self.timeout_s
        timeout = httpx.Timeout(wait, connect=min(wait, 10.0))
        with httpx.Client(timeout=timeout) as client:
            r = client.post(url, json=body, headers=self._headers("application/json"))
        if r.status_code >= 400:
            text = " ".join(r.text.split())[:200]
            if r.status_code < 500 and r.status_code not in (408, 429):  # a timeout or a rate limit passes
                raise EndpointRejected(r.status_code, f"{url} answered HTTP {r.status_code}: {text}")
            raise RuntimeError(f"{url} answered HTTP {r.status_code}: {text}")
        try:
            data = r.json()
        except ValueError:
            raise RuntimeError(f"{url} answered something that is not JSON") from None
        return _reply(url, data)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        url = self.base_url.rstrip("/") + "/chat/completions"
        headers = self._headers("text/event-stream")
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
