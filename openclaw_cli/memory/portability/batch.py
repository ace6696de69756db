"""JSON Lines input for `memory add --batch` and `memory search --batch`.

`add --batch` validates the whole input before anything is written: one malformed line (reported with
its line number) stores nothing. `search --batch` streams: each line is answered in order, and a bad
line stops the run with its line number after the answers before it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.core.textcheck import HINT as TEXT_HINT
from openclaw_cli.core.textcheck import find_bad_text
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.store.records import CATEGORIES, SCOPES, parse_created_at

if TYPE_CHECKING:  # the search pipeline's imports (~50 ms) are not for `memory add --batch`
    from openclaw_cli.memory.search.pipeline import SearchRequest

ADD_FIELDS = {"text", "l0", "category", "scope", "userId", "l1", "l2", "id", "createdAt", "source", "attribute"}
SEARCH_FIELDS = {"query", "k", "userId", "user", "category", "categories", "scope", "mode", "explain"}
MODES = ("hybrid", "bm25", "vector")
# `source` is provenance (a chat id, a file and line), not a document: a few levels are plenty, and a
# bound keeps storing and printing it far from the recursion limit.
MAX_SOURCE_DEPTH = 32
ADD_HINT = "nothing was stored"
SEARCH_HINT = "the lines before it were answered; fix this line and rerun from it"


def _not_finite(value: str) -> float:
    raise ValueError(f"{value} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:20]} is too large")
    return value


def _object(line: str, number: int, source: str, hint: str) -> dict[str, Any]:
    try:
        value = json.loads(line, parse_constant=_not_finite, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{source} line {number}: not valid JSON ({exc.msg})", hint=hint) from exc
    except RecursionError as exc:
        raise InvalidInput(f"{source} line {number}: JSON nested too deeply", hint=hint) from exc
    except ValueError as exc:  # an integer over Python's 4300-digit limit, NaN, Infinity, 1e400
        raise InvalidInput(f"{source} line {number}: unusable number ({str(exc)[:80]})", hint=hint) from exc
    if not isinstance(value, dict):
        raise InvalidInput(
            f"{source} line {number}: expected a JSON object, got {type(value).__name__}", hint=hint
        )
    bad = find_bad_text(value)  # every field, `source` included, before any is used
    if bad is not None:
        raise InvalidInput(f"{source} line {number}: {bad.describe()}", hint=f"{TEXT_HINT}; {hint}")
    return value


def _lines(text_lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text_lines, start=1):
        if line.strip():
            yield number, line


def _str(value: Any, name: str, number: int, source: str, hint: str = ADD_HINT) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InvalidInput(f"{source} line {number}: '{name}' must be a string", hint=hint)


def _depth(value: Any) -> int:
    """Nesting depth of parsed JSON, without recursion (the value may be deeper than the stack)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, level + 1) for child in children)
    return deepest


def _source(value: Any, number: int, source: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidInput(f"{source} line {number}: 'source' must be an object", hint=ADD_HINT)
    if _depth(value) > MAX_SOURCE_DEPTH:
        raise InvalidInput(
            f"{source} line {number}: 'source' is nested more than {MAX_SOURCE_DEPTH} levels deep",
            hint=ADD_HINT,
        )
    return value


def _created(value: Any, number: int, source: str) -> Any:
    text = _str(value, "createdAt", number, source)
    if not text:
        return None
    try:
        return parse_created_at(text)
    except InvalidInput as exc:
        raise InvalidInput(f"{source} line {number}: {exc.message}", hint=exc.hint or ADD_HINT) from exc


def _add_item(obj: dict[str, Any], number: int, source: str) -> NewMemory:
    unknown = set(obj) - ADD_FIELDS
    if unknown:
        raise InvalidInput(
            f"{source} line {number}: unknown field(s) {', '.join(sorted(unknown))}",
            hint=f"allowed: {', '.join(sorted(ADD_FIELDS))}",
        )
    text = obj.get("text", obj.get("l0"))
    if not isinstance(text, str):
        raise InvalidInput(f"{source} line {number}: needs a 'text' (or 'l0') string", hint=ADD_HINT)
    return NewMemory(
        l0=text,
        category=_str(obj.get("category"), "category", number, source) or "note",
        scope=_str(obj.get("scope"), "scope", number, source) or "user",
        user_id=_str(obj.get("userId"), "userId", number, source),
        l1=_str(obj.get("l1"), "l1", number, source),
        l2=_str(obj.get("l2"), "l2", number, source),
        record_id=_str(obj.get("id"), "id", number, source),
        created_at=_created(obj.get("createdAt"), number, source),
        source=_source(obj.get("source"), number, source),
        attribute=_str(obj.get("attribute"), "attribute", number, source),
    )


def parse_add_lines(text_lines: Iterable[str], source: str = "input") -> list[tuple[int, NewMemory]]:
    items = [
        (number, _add_item(_object(line, number, source, ADD_HINT), number, source))
        for number, line in _lines(text_lines)
    ]
    _refuse_repeated_ids(items, source)
    return items


def _refuse_repeated_ids(items: list[tuple[int, NewMemory]], source: str) -> None:
    """An id names one memory: a second line with it would be dropped as "existing", silently, even
    when its text differs. Identical lines are refused too: a repeated line is a mistake in the input."""
    first_line: dict[str, int] = {}
    for number, item in items:
        if item.record_id is None:
            continue
        if item.record_id in first_line:
            raise InvalidInput(
                f"{source} line {number}: id {item.record_id!r} is also the id of line "
                f"{first_line[item.record_id]}",
                hint="give each memory its own id; " + ADD_HINT,
            )
        first_line[item.record_id] = number


def _choice(value: Any, name: str, allowed: tuple[str, ...], where: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise InvalidInput(f"{where}: unknown {name} {value!r}", hint=f"use one of: {', '.join(allowed)}")
    return value


def _search_categories(obj: dict[str, Any], defaults: SearchRequest, where: str) -> tuple[str, ...]:
    value = obj.get("categories", obj.get("category"))
    if value is None:
        return defaults.categories
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list):
        raise InvalidInput(f"{where}: 'category' must be a string or a list of strings", hint=SEARCH_HINT)
    return tuple(_choice(v, "category", CATEGORIES, where) for v in values)


def parse_search_line(
    line: str, number: int, defaults: SearchRequest, source: str = "input"
) -> SearchRequest:
    from openclaw_cli.memory.search.pipeline import SearchRequest

    where = f"{source} line {number}"
    obj = _object(line, number, source, SEARCH_HINT)
    unknown = set(obj) - SEARCH_FIELDS
    if unknown:
        raise InvalidInput(
            f"{where}: unknown field(s) {', '.join(sorted(unknown))}",
            hint=f"allowed: {', '.join(sorted(SEARCH_FIELDS))}",
        )
    query = obj.get("query")
    if not isinstance(query, str):
        raise InvalidInput(f"{where}: needs a 'query' string", hint=SEARCH_HINT)
    k = obj.get("k", defaults.k)
    if not isinstance(k, int) or isinstance(k, bool):
        raise InvalidInput(f"{where}: 'k' must be an integer", hint=SEARCH_HINT)
    explain = obj.get("explain", defaults.explain)
    if not isinstance(explain, bool):  # "no" would otherwise count as true
        raise InvalidInput(f"{where}: 'explain' must be true or false", hint=SEARCH_HINT)
    user = obj.get("userId", obj.get("user", defaults.user_id))
    scope = obj.get("scope")
    return SearchRequest(
        query=query,
        k=k,
        user_id=_str(user, "userId", number, source, SEARCH_HINT),
        scopes=(_choice(scope, "scope", SCOPES, where),) if scope is not None else defaults.scopes,
        categories=_search_categories(obj, defaults, where),
        mode=_choice(obj.get("mode", defaults.mode), "mode", MODES, where),  # type: ignore[arg-type]
        explain=explain,
        all_results=defaults.all_results,
    )
