"""What model calls cost: the tokens a provider reported for a call, priced by litellm's packaged cost map
(llm_openai for `openai/` models, without importing litellm), summed over a turn's calls; and a one-shot
completion that says what it used (query expansion inside a chat turn)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from openclaw_cli.llm import openai_models as llm_openai
from openclaw_cli.llm.calls import DEFAULT_TIMEOUT_SECONDS, client, completion_response, plugin_provider


@dataclass(frozen=True)
class Usage:
    """Tokens model calls used, as the provider reported them; cost in USD where litellm knows the
    model's price (None where it does not: an unknown price is not a price of 0)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost is None and other.cost is None else (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens, cost
        )


# Models litellm's cost map has no price for. The map is the packaged one (llm.py sets
# LITELLM_LOCAL_MODEL_COST_MAP) and does not change while the process runs, and litellm does not cache a
# miss: each lookup of an unpriced model tries every generalisation of its name again (a few ms a call).
_unpriced: set[str] = set()


def call_usage(model: str, reported: Any) -> Usage:
    """The provider's usage of one call, priced by litellm's cost map (None for a model it has not)."""
    prompt = int(getattr(reported, "prompt_tokens", 0) or 0)
    completion = int(getattr(reported, "completion_tokens", 0) or 0)
    if llm_openai.handles(model):
        return Usage(prompt, completion, llm_openai.price(model, prompt, completion))
    if model in _unpriced or plugin_provider(model) is not None:  # a plugin's model has no price here
        return Usage(prompt, completion, None)
    litellm = client()
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt, completion_tokens=completion
        )
        cost: float | None = float(prompt_cost) + float(completion_cost)
    except Exception:  # noqa: BLE001 - an unpriced model; the turn never fails over its cost
        _unpriced.add(model)
        cost = None
    return Usage(prompt, completion, cost)


def complete_counted(
    model: str,
    messages: Sequence[dict[str, Any]],
    api_base: str | None = None,
    *,
    max_retries: int = 2,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    **options: Any,
) -> tuple[str, Usage | None]:
    """llm.complete, with the tokens (and cost) the call used as the provider reported them (None: not)."""
    text, response = completion_response(
        model, messages, api_base, max_retries=max_retries, timeout=timeout, **options
    )
    reported = getattr(response, "usage", None)
    return text, None if reported is None else call_usage(model, reported)
