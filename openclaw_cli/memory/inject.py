"""The memory block injected at the end of the system prompt (seed 000 §5.4).

A query (or a conversation's recent messages) is searched; the hits become Markdown lines
`- [category, recorded YYYY-MM-DD] L0`, the best few followed by their L1 detail. Every line carries
its date so the model can judge whether a memory is still true (trap 4 of seed 000 §6.2: "is learning
Rust" said three months ago). Insights come before facts that scored the same, and the block is cut to
`memoryMaxTokens` counted with tiktoken. The memories that made it into the block count as FSRS hits.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from openclaw_cli.memory.search.legs import expansion
from openclaw_cli.memory.search.pipeline import SearchHit, SearchRequest
from openclaw_cli.memory.text.analysis import has_han
from openclaw_cli.sessions.budget.tokens import count_tokens

if TYPE_CHECKING:
    from openclaw_cli.config.loading import InjectSettings
    from openclaw_cli.memory.agent_memory import AgentMemory
    from openclaw_cli.sessions.store import SessionStore

BlockLanguage = Literal["zh", "en"]
# A weak query's alternative phrasings from a model (memory/query_expansion.py); empty when it has none.
Expander = Callable[[str], Sequence[str]]

# How much of a conversation becomes the search query: the last few messages carry the topic, and
# search caps a query at 2000 characters anyway (search.MAX_QUERY_CHARS).
RECENT_MESSAGES = 4
QUERY_CHARS = 2000
# Scores equal to this many decimals count as the same score, where insights go first: relevance and
# retrievability are estimates, so a difference in the fifth decimal says nothing about which is better.
TIE_DECIMALS = 2

_TEMPLATES: dict[BlockLanguage, dict[str, Any]] = {
    "en": {
        "heading": "## Memories about this user",
        "intro": "What you have learned about this user in past conversations, most relevant first:",
        "line": "- [{category}, recorded {date}] {l0}",
        "categories": {},
    },
    "zh": {
        "heading": "## 关于此用户的记忆",
        "intro": "以下是你过去与此用户交互中积累的记忆，按相关性排序：",
        "line": "- [{category}, 记于 {date}] {l0}",
        "categories": {
            "profile": "档案",
            "preference": "偏好",
            "event": "事件",
            "case": "案例",
            "lesson": "教训",
            "insight": "洞察",
            "note": "笔记",
        },
    },
}

# Token counts kept per text: a person's memories come back turn after turn, each line counted again
# (~20 tiktoken calls a turn), and the whole block is counted twice (render_block, then the block).
LINE_COST_CACHE = 2048
BLOCK_COST_CACHE = 8

_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")
_HAN_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WHITESPACE = re.compile(r"\s+")


@dataclass
class MemoryBlock:
    """The Markdown block (empty when nothing was found), the memories in it, its tiktoken count."""

    text: str
    record_ids: list[str]
    tokens: int
    language: str  # "zh" or "en"
    query: str = ""
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "recordIds": self.record_ids,
            "tokens": self.tokens,
            "language": self.language,
            "query": self.query,
            "warnings": self.warnings,
        }


def build_memory_block(
    service: AgentMemory,
    settings: InjectSettings,
    *,
    query: str | None = None,
    messages: Sequence[dict[str, Any]] | None = None,
    user_id: str | None = None,
    record_hits: bool = True,
    now: datetime | None = None,
    expander: Expander | None = None,
    lock: AbstractContextManager[Any] | None = None,
    notes: bool = True,
) -> MemoryBlock:
    """The memory block for `query`, or for the recent `messages` of a conversation when no query is given.

    `record_hits=False` leaves FSRS untouched (an operator looking, not the agent recalling). `expander`:
    a model that may expand a weak query (recall). `lock`: held for each search and for recording the
    hits, never while the model answers. `notes=False`: the owner's workspace notes stay out (recall).
    """
    moment = now or datetime.now(UTC)
    raw = query if query is not None else query_from_messages(messages or ())
    # Whatever a conversation holds must not fail the turn: search refuses NUL and over-long queries.
    search_text = raw.replace("\x00", " ")[:QUERY_CHARS]
    language = conversation_language(search_text if query is not None else _conversation_text(messages))
    if not search_text.strip():
        return MemoryBlock("", [], 0, language, search_text, ["nothing to search for: the query is empty"])
    hits, warnings = recall(
        service, search_text, settings.top_k, user_id, moment, expander, lock, notes=notes
    )
    text, chosen = render_block(order_hits(hits), language, settings)
    if record_hits and chosen:
        # Reviewed in the search's order, not the block's (grouped by kind): the rank rates the review.
        rank = {hit.record.id: index for index, hit in enumerate(hits)}
        with lock or nullcontext():
            service.record_hits(sorted(chosen, key=lambda record_id: rank.get(record_id, len(rank))), moment)
    return MemoryBlock(text, chosen, _block_tokens(text), language, search_text, warnings)


def recall(
    service: AgentMemory,
    text: str,
    k: int,
    user_id: str | None,
    now: datetime | None = None,
    expander: Expander | None = None,
    lock: AbstractContextManager[Any] | None = None,
    *,
    notes: bool = True,
    categories: tuple[str, ...] = (),
) -> tuple[list[SearchHit], list[str]]:
    """The best `k` memories for `text` that `user_id` may see: their own memories and the agent's
    (which belong to nobody: lessons and cases of its work), never another person's. Nobody known
    (None, an anonymous message) sees the agent's memories only. The workspace notes are the owner's own
    memories (workspace/markdown_index.py); `notes=False` leaves them out even for the owner, where others
    read what the answer says (a group, a session shared with other people: identity.notes_private).

    With an `expander`, a weak result (search/legs/expansion.py: `wanted`) is completed by the phrasings the
    model gives for `text`, each searched for the same person in the same way, what they find kept only
    where the query's own search agrees (`fuse`). `lock` is held for each search, not while the model
    answers. `categories` keeps those categories only (an MCP client's memory_search)."""
    guard = lock or nullcontext()
    with guard:
        hits, warnings = _recall_local(service, text, k, user_id, now, notes=notes, categories=categories)
    if expander is None or not expansion.wanted(text, hits):
        return hits, warnings
    phrasings = expansion.usable(text, expander(text))
    if not phrasings:
        return hits, warnings

    def search(query: str, size: int, everything: bool) -> list[SearchHit]:
        with guard:
            return _recall_local(
                service, query, size, user_id, now, everything, notes=notes, categories=categories
            )[0]

    return expansion.complete(text, k, hits, phrasings, search), warnings


def _recall_local(
    service: AgentMemory,
    text: str,
    k: int,
    user_id: str | None,
    now: datetime | None,
    all_results: bool = False,
    *,
    notes: bool = True,
    categories: tuple[str, ...] = (),
) -> tuple[list[SearchHit], list[str]]:
    agent_only = SearchRequest(
        query=text, k=k, scopes=("agent",), categories=categories, all_results=all_results
    )
    agent = service.search(agent_only, now)
    # A stray agent-scope note (an older store's, which the sync before every search gives to the owner) is
    # never shown either.
    agent_hits = [hit for hit in agent.hits if not hit.record.private_note]
    if user_id is None:
        return agent_hits, list(agent.warnings)
    mine = service.search(
        SearchRequest(
            query=text,
            k=k,
            user_id=user_id,
            scopes=("user",),
            categories=categories,
            all_results=all_results,
        ),
        now,
    )
    own = mine.hits if notes else [hit for hit in mine.hits if not hit.record.private_note]
    seen = {hit.record.id for hit in own}
    hits = own + [hit for hit in agent_hits if hit.record.id not in seen]
    hits.sort(key=lambda hit: -hit.candidate.score)
    return hits[:k], list(dict.fromkeys(mine.warnings + agent.warnings))


def query_from_messages(messages: Sequence[dict[str, Any]]) -> str:
    """The search query for a conversation: the text of its last few user and assistant messages,
    latest last (tool calls and results are the model's work, not the topic)."""
    texts = [_message_text(m) for m in messages if m.get("role") in ("user", "assistant")]
    recent = [t for t in texts if t.strip()][-RECENT_MESSAGES:]
    joined = "\n".join(recent)
    return joined[-QUERY_CHARS:]


def _conversation_text(messages: Sequence[dict[str, Any]] | None) -> str:
    # The user's own words decide the language; the assistant may quote another language.
    user = [_message_text(m) for m in messages or () if m.get("role") == "user"]
    return "\n".join(user[-RECENT_MESSAGES:])


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI-style content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def conversation_language(text: str) -> BlockLanguage:
    """Chinese ("zh") when Han characters outnumber Latin words ("我喜欢用 TypeScript" is Chinese), else "en"."""
    if not has_han(text):
        return "en"
    han = len(_HAN_CHAR.findall(text))
    latin_words = len(_LATIN_WORD.findall(text))
    return "zh" if han >= latin_words else "en"


def order_hits(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """Best first; among equal scores, insights before the facts they sum up (seed 000 §7)."""
    ranked = list(enumerate(hits))
    ranked.sort(
        key=lambda pair: (
            -round(pair[1].candidate.score, TIE_DECIMALS),
            pair[1].record.category != "insight",
            pair[0],
        )
    )
    return [hit for _, hit in ranked]


def render_block(
    hits: Sequence[SearchHit], language: BlockLanguage, settings: InjectSettings
) -> tuple[str, list[str]]:
    """The Markdown block within the token budget, and the ids of the memories it shows.

    A memory whose line does not fit is left out and the next (shorter) one tried; an expanded memory
    that does not fit falls back to its L0 line.
    """
    if not hits:
        return "", []
    template = _TEMPLATES[language]
    head = f"{template['heading']}\n\n{template['intro']}\n"
    budget = settings.memory_max_tokens
    used = _line_tokens(head)
    if used > budget:
        return "", []
    lines: list[str] = []
    chosen: list[str] = []
    for rank, hit in enumerate(hits):
        options = [_memory_line(hit, template, expand=True)] if rank < settings.expand_top else []
        options.append(_memory_line(hit, template, expand=False))
        for option in dict.fromkeys(options):
            cost = _line_tokens("\n" + option)
            if used + cost <= budget:
                lines.append(option)
                chosen.append(hit.record.id)
                used += cost
                break
    # Pieces counted apart can merge into fewer or more tokens together: check the whole, trim if over.
    while lines and _block_tokens(_join(head, lines)) > budget:
        lines.pop()
        chosen.pop()
    return (_join(head, lines), chosen) if lines else ("", [])


@functools.lru_cache(maxsize=LINE_COST_CACHE)
def _line_tokens(text: str) -> int:
    return count_tokens(text)


@functools.lru_cache(maxsize=BLOCK_COST_CACHE)
def _block_tokens(text: str) -> int:
    return count_tokens(text)


def _join(head: str, lines: Sequence[str]) -> str:
    return head + "\n" + "\n".join(lines)


def _memory_line(hit: SearchHit, template: dict[str, Any], *, expand: bool) -> str:
    record = hit.record
    category = template["categories"].get(record.category, record.category)
    date = record.created_at.astimezone(UTC).strftime("%Y-%m-%d")
    # One line per memory: a newline in stored text must not start a heading or a fake memory line.
    line = template["line"].format(category=category, date=date, l0=_one_line(record.l0))
    if expand and record.l1:
        line += "\n  " + _one_line(record.l1)
    return str(line)


def _one_line(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def session_messages(sessions: SessionStore, key_or_id: str) -> list[dict[str, Any]]:
    """The messages of the session named by a key (its current session) or an id; NotFound otherwise."""
    return sessions.read_messages(sessions.resolve(key_or_id)).messages
