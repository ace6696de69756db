"""What the model is sent for a turn: a system prompt (instructions, workspace files, memories, summary)
and the history that fits what is left of the context window.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from openclaw_cli.sessions.budget.context import (
    DEFAULT_KEEP_RECENT_TURNS,
    Context,
    build_context,
    prune_tool_results,
)
from openclaw_cli.sessions.budget.token_counts import message_cost
from openclaw_cli.sessions.budget.tokens import count_tokens

MAX_REPLY_TOKENS = 1024  # kept free for the answer (a quarter of the window, at most this)

BASE_INSTRUCTIONS = (
    "You are {agent}, a personal assistant with long-term memory. Memories about the user are given "
    "below when relevant; use memory_search to look for more, memory_add to keep a durable fact the "
    "user tells you, and memory_forget when the user asks you to forget something. Answer in the "
    "user's language."
)


@dataclass
class Prompt:
    messages: list[dict[str, Any]]  # OpenAI chat format, system prompt first
    tokens: int
    history_budget: int
    dropped: int  # messages after the checkpoint that did not fit
    history: list[dict[str, Any]] = field(default_factory=list)  # the stored messages sent


def reply_reserve(context_tokens: int) -> int:
    return min(MAX_REPLY_TOKENS, context_tokens // 4)


def system_text(agent_id: str, files: Sequence[Any], memory_text: str) -> str:
    """The system prompt: instructions, then each workspace file under its name, then the memory block."""
    parts = [BASE_INSTRUCTIONS.format(agent=agent_id)]
    for workspace_file in files:
        text = str(workspace_file.text).strip()
        if text:
            parts.append(f"## {workspace_file.name}\n\n{text}")
    if memory_text.strip():
        parts.append(memory_text.strip())
    return "\n\n".join(parts)


def to_chat_message(message: dict[str, Any], *, group: bool = False) -> dict[str, Any]:
    """A stored message in the OpenAI chat format (tool calls and results included). In a group chat
    the user's messages say who spoke; in a direct chat there is only one user to name."""
    role = message.get("role")
    content = str(message.get("content", ""))
    if group and role == "user" and message.get("sender"):
        content = f"[{message['sender']}] {content}"
    out: dict[str, Any] = {"role": role, "content": content}
    if role == "assistant" and message.get("toolCalls"):
        out["tool_calls"] = message["toolCalls"]
        out["content"] = content or None
    if role == "tool":
        out["tool_call_id"] = message.get("toolCallId")
    return out


def history_budget(context_tokens: int, system: str, tools: Sequence[dict[str, Any]]) -> int:
    """Tokens left for summary + history once the reply, system prompt and tool schemas are counted."""
    fixed = _fixed_tokens(system) + (_fixed_tokens(json.dumps(list(tools))) if tools else 0)
    return max(0, context_tokens - reply_reserve(context_tokens) - fixed)


# A turn counts its system prompt twice (the compaction check, then the first round) and the same tool
# schemas every turn: ~1 ms of tiktoken each at 2,000 memories' prompts, kept for the few texts in use.
_fixed_tokens = functools.lru_cache(maxsize=16)(count_tokens)


def assemble(
    system: str,
    messages: list[dict[str, Any]],
    summary: str | None,
    checkpoint: int | None,
    budget: int,
    *,
    group: bool = False,
    strategy: str = "sliding",
    keep_recent_turns: int = DEFAULT_KEEP_RECENT_TURNS,
) -> Prompt:
    """The system prompt with the summary, and the whole units of history that fit `budget`.

    Old tool results are cut first (prune_tool_results), then the sliding window (or, with `strategy`
    importance, the last turns and the most important older messages) keeps tool calls with their
    results (sessions/budget/context.py).
    """
    pruned = prune_tool_results(messages)
    context = build_context(
        pruned, summary, checkpoint, budget, strategy=strategy, keep_recent_turns=keep_recent_turns
    )
    _keep_the_question(context, pruned)
    if context.dropped:
        # A window cut mid-conversation starts at the user's next message: some APIs refuse a history
        # that opens with the assistant, and an answer without its question misleads.
        while context.messages and context.messages[0].get("role") != "user":
            context.tokens -= message_cost(context.messages.pop(0))
            context.dropped += 1
    system_prompt = system
    if context.summary:
        system_prompt += f"\n\n## Summary of the earlier conversation\n\n{context.summary}"
    chat = [
        {"role": "system", "content": system_prompt},
        *(to_chat_message(m, group=group) for m in context.messages),
    ]
    return Prompt(chat, context.tokens, budget, context.dropped, context.messages)


def _keep_the_question(context: Context, messages: list[dict[str, Any]]) -> None:
    """The message being answered is always sent, even past the budget (the model then says whether
    it fits: a context overflow leads to a compaction and a retry)."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
    if last_user is None or any(m is messages[last_user] for m in context.messages):
        return
    context.dropped += len(context.messages) - len(messages[last_user:])
    context.messages = messages[last_user:]
    context.tokens = sum(message_cost(m) for m in context.messages)
