"""What a model would be sent under a token budget: the summary (if any) plus the messages that fit.

The messages are taken from those after the summary checkpoint: by default a sliding window from the
tail; with the `importance` strategy (sessions/budget/importance.py) the last turns and then the older messages
that matter most. An assistant message
with toolCalls and the tool messages answering it form one unit: kept together or dropped together,
and a tool result whose call is not in the window is never sent on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.sessions.budget.token_counts import count_message, fill_token_counts, message_cost
from openclaw_cli.sessions.budget.tokens import count_tokens
from openclaw_cli.sessions.store import SessionStore

PRUNE_STRATEGIES = ("sliding", "importance")
DEFAULT_KEEP_RECENT_TURNS = 4


@dataclass
class Context:
    summary: str | None
    summary_tokens: int
    messages: list[dict[str, Any]]
    tokens: int
    budget: int
    dropped: int  # messages after the checkpoint that did not fit
    problems: list[Any] = field(default_factory=list)
    strategy: str = "sliding"

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "summaryTokens": self.summary_tokens,
            "messages": self.messages,
            "tokens": self.tokens,
            "budget": self.budget,
            "dropped": self.dropped,
            "strategy": self.strategy,
        }


def group_units(messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Split messages into units; a tool call and its results form one unit, orphan results are dropped."""
    units: list[list[dict[str, Any]]] = []
    open_calls: set[str] = set()
    for message in messages:
        if message.get("role") == "tool":
            call_id = message.get("toolCallId")
            if units and call_id in open_calls:
                units[-1].append(message)
            continue  # a result without its call in view cannot be sent alone
        calls = message.get("toolCalls") if message.get("role") == "assistant" else None
        open_calls = (
            {str(c.get("id")) for c in calls if isinstance(c, dict)} if isinstance(calls, list) else set()
        )
        units.append([message])
    return units


def build_context(
    messages: list[dict[str, Any]],
    summary: str | None,
    checkpoint: int | None,
    budget: int,
    *,
    strategy: str = "sliding",
    keep_recent_turns: int = DEFAULT_KEEP_RECENT_TURNS,
) -> Context:
    """The summary (when it fits) and whole units of the messages after `checkpoint` within budget:
    the newest (`sliding`), or the last turns and then the most important (`importance`)."""
    if budget < 0:
        raise InvalidInput("the token budget must be zero or more")
    if strategy not in PRUNE_STRATEGIES:
        raise InvalidInput(f"unknown prune strategy {strategy!r}: use sliding or importance")
    summary_tokens = count_tokens(summary) if summary else 0
    use_summary = bool(summary) and summary_tokens <= budget
    remaining = budget - (summary_tokens if use_summary else 0)
    after = [m for m in messages if checkpoint is None or m["idx"] > checkpoint]
    units = group_units(after)
    costs = [sum(message_cost(m) for m in unit) for unit in units]
    if strategy == "importance":
        # Imported here: compiling the rules' patterns costs ~10 ms, which the default never pays.
        from openclaw_cli.sessions.budget.importance import select_units, unit_score

        starts = [unit[0].get("role") == "user" for unit in units]
        scores = [unit_score(unit) for unit in units]
        positions = select_units(costs, scores, starts, remaining, keep_recent_turns)
    else:
        positions = _sliding(costs, remaining)
    window = [m for position in positions for m in units[position]]
    used = (budget - remaining) + sum(costs[position] for position in positions)
    return Context(
        summary if use_summary else None,
        summary_tokens if use_summary else 0,
        window,
        used,
        budget,
        len(after) - len(window),
        strategy=strategy,
    )


def _sliding(costs: list[int], budget: int) -> list[int]:
    """The newest units within budget: nothing older than the first unit that does not fit."""
    first = len(costs)
    while first > 0 and costs[first - 1] <= budget:
        first -= 1
        budget -= costs[first]
    return list(range(first, len(costs)))


def session_context(
    store: SessionStore,
    key_or_id: str,
    budget: int,
    *,
    strategy: str = "sliding",
    keep_recent_turns: int = DEFAULT_KEEP_RECENT_TURNS,
) -> Context:
    """context(key, budget): what a model would be sent for a session's current state."""
    session_id = store.resolve(key_or_id)
    saved = store.read_context(session_id)
    result = store.read_messages(session_id)
    fill_token_counts(store.session_dir(session_id), result.messages)
    checkpoint = saved.get("summaryCheckpoint")
    summary = saved.get("summary")
    context = build_context(
        result.messages,
        summary if isinstance(summary, str) else None,
        checkpoint if isinstance(checkpoint, int) and not isinstance(checkpoint, bool) else None,
        budget,
        strategy=strategy,
        keep_recent_turns=keep_recent_turns,
    )
    context.problems = list(result.problems)
    return context


# -- tool-result pruning and summary compression (seed 003 §3.4, seed 000 §2.5) ---------------------------

PRUNED_KEEP_CHARS = 200  # what is left of an old tool result: enough to recall what it was about


def prune_tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of `messages` in which tool results older than the last user message are cut short.

    A tool result matters to the turn that asked for it; after that, the assistant's answer carries what
    was learnt. Cutting old results first lets more of the conversation itself fit the budget. Only the
    copy sent to the model changes: messages.jsonl keeps every result whole.
    """
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    pruned: list[dict[str, Any]] = []
    for position, message in enumerate(messages):
        content = str(message.get("content", ""))
        if message.get("role") != "tool" or position > last_user or len(content) <= PRUNED_KEEP_CHARS:
            pruned.append(message)
            continue
        short = f"{content[:PRUNED_KEEP_CHARS]}… [older tool result cut from {len(content)} characters]"
        copy = {**message, "content": short, "pruned": True}
        copy.pop("tokens", None)
        copy["tokens"] = count_message(copy)
        pruned.append(copy)
    return pruned


@dataclass(frozen=True)
class CompactionRule:
    """When older messages are summarised: more than `max_messages` after the checkpoint, or the summary
    plus those messages taking more than `ratio` of the history budget (`budget` tokens)."""

    max_messages: int
    ratio: float
    budget: int

    def due(self, pending: list[dict[str, Any]], summary_tokens: int) -> bool:
        tokens = summary_tokens + sum(message_cost(m) for m in pending)
        return len(pending) > self.max_messages or tokens > self.ratio * self.budget


@dataclass
class CompactionPlan:
    """Messages to fold into the summary (the oldest after the checkpoint) and the new checkpoint."""

    to_summarise: list[dict[str, Any]]
    checkpoint: int
    kept: int  # messages left after the new checkpoint

    @property
    def empty(self) -> bool:
        return not self.to_summarise


def plan_compaction(
    messages: list[dict[str, Any]],
    checkpoint: int | None,
    rule: CompactionRule,
    *,
    last_exchange_only: bool = False,
) -> CompactionPlan:
    """Split the messages after `checkpoint` into an older part to summarise and a recent tail to keep.

    The tail is the newest whole units (a tool call stays with its results) holding at most half the
    message threshold and 40% of the budget, so that right after a compaction the rule is no longer due.
    The newest unit is always kept: a summary never replaces the message being answered. A forced
    compaction (`last_exchange_only`) keeps just the last exchange: from the last user message on.
    """
    after = [m for m in messages if checkpoint is None or m["idx"] > checkpoint]
    units = group_units_keeping_orphans(after)
    keep_tokens = int(rule.budget * 0.4)
    keep_messages = max(1, rule.max_messages // 2)
    kept_units = 0
    count = tokens = 0
    for unit in reversed(units):
        cost = sum(message_cost(m) for m in unit)
        if last_exchange_only:
            if kept_units and units[len(units) - kept_units][0].get("role") == "user":
                break  # the unit kept last opens the exchange
        elif kept_units and (count + len(unit) > keep_messages or tokens + cost > keep_tokens):
            break
        kept_units += 1
        count += len(unit)
        tokens += cost
    while kept_units > 1 and units[len(units) - kept_units][0].get("role") != "user":
        kept_units -= 1  # the kept part starts with a question, not with an answer whose question is gone
        count -= len(units[len(units) - kept_units - 1])
    older = [m for unit in units[: len(units) - kept_units] for m in unit]
    if not older:
        return CompactionPlan([], checkpoint if checkpoint is not None else -1, count)
    return CompactionPlan(older, int(older[-1]["idx"]), count)


def group_units_keeping_orphans(messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Like group_units, but a tool result whose call is gone stays as its own unit (it must still be
    summarised or kept: the checkpoint may not jump over a message without accounting for it)."""
    units: list[list[dict[str, Any]]] = []
    open_calls: set[str] = set()
    for message in messages:
        if message.get("role") == "tool":
            if units and message.get("toolCallId") in open_calls:
                units[-1].append(message)
            else:
                units.append([message])
            continue
        calls = message.get("toolCalls") if message.get("role") == "assistant" else None
        open_calls = (
            {str(c.get("id")) for c in calls if isinstance(c, dict)} if isinstance(calls, list) else set()
        )
        units.append([message])
    return units
