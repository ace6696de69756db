"""Loading what a first turn needs before it is asked for: the model client, each agent's embedders, its
memory stores and searcher, the tokenizer and the turn's own modules; and, in a gateway once it is ready,
the words of the agents' memories that searches will compare (start_word_warmup).

A long-lived process (the gateway at start, `openclaw chat` while the user types) calls `warm_runtime`
in a worker thread, so that the first turn pays none of it (`import litellm` alone takes seconds, the openai
package ~0.6 s). Each
step that fails is only reported: the turn meets the same error where it can say so to the user.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openclaw_cli.agent.runtime import AgentRuntime
    from openclaw_cli.agent.services import AgentServices
    from openclaw_cli.config.models import LlmSettings
    from openclaw_cli.memory.search.legs.word_warmup import WordWarmUp

# The query of the warm-up search: any text runs every stage (analysis, both legs, fusion).
WARM_QUERY = "what does the user like?"
# How often a warm-up waiting for the model client looks whether the runtime is closing.
STOP_POLL_SECONDS = 0.05


@dataclass
class WarmReport:
    """What was loaded ("model client", "embedder main", ...), what failed and why, how long it took."""

    done: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    # each step's own seconds (steps side by side share the cores, so they add up to more than `seconds`)
    steps: dict[str, float] = field(default_factory=dict)

    def step(self, name: str, action: Callable[[], Any]) -> None:
        started = time.perf_counter()
        try:
            action()
        except Exception as exc:  # noqa: BLE001 - a failed warm-up must not stop the process
            self.failed[name] = f"{exc.__class__.__name__}: {exc}"
        else:
            self.done.append(name)
        self.steps[name] = time.perf_counter() - started

    def to_dict(self) -> dict[str, Any]:
        steps = {name: round(seconds, 3) for name, seconds in self.steps.items()}
        return {"done": self.done, "failed": self.failed, "seconds": round(self.seconds, 3), "steps": steps}


def warm_runtime(
    runtime: AgentRuntime, agent_ids: Sequence[str], stop: threading.Event | None = None
) -> WarmReport:
    """Load, for each agent, what its first turn would load; blocks (call it from a worker thread).
    Once `stop` is set (the runtime is closing) no further step begins."""
    started = time.perf_counter()
    report = WarmReport()
    configured = (runtime.services(agent_id).settings.llm for agent_id in agent_ids)
    llm_settings = next((settings for settings in configured if settings.model is not None), None)
    client: threading.Thread | None = None
    if llm_settings is not None:
        # The model client's import is pure Python, the embedders' is mostly native (onnxruntime lets go
        # of the interpreter): loading them side by side takes about as long as the longer of the two.
        load = functools.partial(_preload_models, llm_settings)
        # A daemon: a process that ends during the import (the gateway stopped at start) need not wait.
        client = threading.Thread(
            target=report.step, args=("model client", load), name="warm-model", daemon=True
        )
        client.start()
    report.step("turn code", _import_turn_code)
    for agent_id in agent_ids:
        if stop is not None and stop.is_set():
            break
        services = runtime.services(agent_id)
        report.step(f"embedder {agent_id}", functools.partial(_embedder, services))
        if stop is None or not stop.is_set():
            report.step(f"search {agent_id}", functools.partial(_search, services))
    if client is not None:
        _join_unless_stopped(client, stop)
    report.seconds = time.perf_counter() - started
    return report


def _join_unless_stopped(thread: threading.Thread, stop: threading.Event | None) -> None:
    """Wait for the model client's preload, or only until the runtime starts closing: the preload fills
    no part of the runtime (litellm is imported once per process), so nothing is left half-built for the
    close, and a gateway stopped during its start-up does not wait seconds for an import it will not use."""
    while thread.is_alive() and not (stop is not None and stop.is_set()):
        thread.join(STOP_POLL_SECONDS)


def _preload_models(settings: LlmSettings) -> None:
    """The chat model's client first (the turn waits for it), then the extraction model's if it differs."""
    from openclaw_cli.llm import calls as llm

    for model in dict.fromkeys(name for name in (settings.model, settings.extract_model) if name):
        llm.preload(model, settings.api_base, settings.timeout_seconds, settings.api_key)


def _import_turn_code() -> None:
    # the turn's modules, imported by its first run (and the extraction it schedules after)
    import openclaw_cli.agent.turn.loop  # noqa: F401
    import openclaw_cli.memory.extraction.patterns  # noqa: F401
    import openclaw_cli.memory.extraction.run  # noqa: F401
    from openclaw_cli.sessions.budget.tokens import count_tokens

    count_tokens(WARM_QUERY)  # the tokenizer's BPE table is read on first use


def _embedder(services: AgentServices) -> None:
    services.memory.embedder()  # cached per process by its factory: the turn's searcher gets this one


def _search(services: AgentServices) -> None:
    """One memory search as a turn makes it (the owner's memories and the agent's): opens the stores and
    keeps their vectors in memory. It records no hits: nobody recalled anything."""
    from openclaw_cli.identity.persons import owner_id
    from openclaw_cli.memory.inject import build_memory_block

    with services.memory_lock:
        build_memory_block(
            services.memory,
            services.settings.memory.inject,
            query=WARM_QUERY,
            user_id=owner_id(services.settings),
            record_hits=False,
        )


def start_word_warmup(
    runtime: AgentRuntime, agent_ids: Sequence[str], busy: Callable[[], bool], stop: threading.Event
) -> WordWarmUp | None:
    """Embed the words of the agents' memories in the background, for a process that stays (the gateway,
    once ready): memory/search/legs/word_warmup.py. None when the first agent's embedder keeps no word
    vectors (an API embedder)."""
    from openclaw_cli.memory.search.legs.neighbours import word_vectors
    from openclaw_cli.memory.search.legs.word_warmup import Source, WordWarmUp

    first = runtime.services(agent_ids[0])
    vectors = word_vectors(first.memory.embedder())
    if vectors is None:
        return None

    def sources() -> list[Source]:
        found: dict[Any, Source] = {}
        for agent_id in agent_ids:
            services = runtime.services(agent_id)
            with services.memory_lock:
                stores = list(services.memory.existing_stores())
            for store in stores:  # the shared store once, with the lock of the first agent's connection
                found.setdefault(store.path, Source(store, services.memory_lock))
        return list(found.values())

    warmup = WordWarmUp(vectors, first.home.word_cache_dir, busy, stop)
    threading.Thread(target=warmup.forever, args=(sources,), name="word-warmup", daemon=True).start()
    return warmup
