"""JSON Lines input for `memory add --batch` and `memory search --batch`.

`add --batch` validates the whole input before anything is written: one malformed line (reported with
its line number) stores nothing. `search --batch` streams: each line is answered in order, and a bad
line stops the run with its line number after the answers before it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from openclaw_cli.errors import InvalidInput
from openclaw_cli.memory.records import parse_iso
from openclaw_cli.memory.search import SearchRequest
from openclaw_cli.memory.service import NewMemory

ADD_FIELDS = {"text", "l0", "category", "scope", "userId", "l1", "l2", "id", "createdAt", "source"}
SEARCH_FIELDS = {"query", "k", "userId", "user", "category", "categories", "scope", "mode", "explain"}


def _object(line: str, number: int, source: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{source} line {number}: not valid JSON ({exc.msg})", hint="nothing was stored"
        ) from exc
    if not isinstance(value, dict):
        raise InvalidInput(f"{source} line {number}: expected a JSON object, got {type(value).__name__}")
    return value


def _lines(text_lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text_lines, start=1):
        if line.strip():
            yield number, line


def _str(value: Any, name: str, number: int, source: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InvalidInput(f"{source} line {number}: '{name}' must be a string")


def parse_add_lines(text_lines: Iterable[str], source: str = "input") -> list[tuple[int, NewMemory]]:
    items: list[tuple[int, NewMemory]] = []
    for number, line in _lines(text_lines):
        obj = _object(line, number, source)
        unknown = set(obj) - ADD_FIELDS
        if unknown:
            raise InvalidInput(
                f"{source} line {number}: unknown field(s) {', '.join(sorted(unknown))}",
                hint=f"allowed: {', '.join(sorted(ADD_FIELDS))}",
            )
        text = obj.get("text", obj.get("l0"))
        if not isinstance(text, str):
            raise InvalidInput(
                f"{source} line {number}: needs a 'text' (or 'l0') string", hint="nothing was stored"
            )
        created = _str(obj.get("createdAt"), "createdAt", number, source)
        try:
            created_at = parse_iso(created) if created else None
        except ValueError as exc:
            raise InvalidInput(f"{source} line {number}: createdAt is not an ISO 8601 time") from exc
        source_value = obj.get("source")
        if source_value is not None and not isinstance(source_value, dict):
            raise InvalidInput(f"{source} line {number}: 'source' must be an object")
        items.append(
            (
                number,
                NewMemory(
                    l0=text,
                    category=_str(obj.get("category"), "category", number, source) or "note",
                    scope=_str(obj.get("scope"), "scope", number, source) or "user",
                    user_id=_str(obj.get("userId"), "userId", number, source),
                    l1=_str(obj.get("l1"), "l1", number, source),
                    l2=_str(obj.get("l2"), "l2", number, source),
                    record_id=_str(obj.get("id"), "id", number, source),
                    created_at=created_at,
                    source=source_value,
                ),
            )
        )
    return items


def parse_search_line(
    line: str, number: int, defaults: SearchRequest, source: str = "input"
) -> SearchRequest:
    obj = _object(line, number, source)
    unknown = set(obj) - SEARCH_FIELDS
    if unknown:
        raise InvalidInput(f"{source} line {number}: unknown field(s) {', '.join(sorted(unknown))}")
    query = obj.get("query")
    if not isinstance(query, str):
        raise InvalidInput(f"{source} line {number}: needs a 'query' string")
    k = obj.get("k", defaults.k)
    if not isinstance(k, int) or isinstance(k, bool):
        raise InvalidInput(f"{source} line {number}: 'k' must be an integer")
    categories = obj.get("categories", obj.get("category"))
    if isinstance(categories, str):
        categories = [categories]
    scope = obj.get("scope")
    return SearchRequest(
        query=query,
        k=k,
        user_id=obj.get("userId", obj.get("user", defaults.user_id)),
        scopes=(scope,) if isinstance(scope, str) else defaults.scopes,
        categories=tuple(categories) if categories else defaults.categories,
        mode=obj.get("mode", defaults.mode),
        explain=bool(obj.get("explain", defaults.explain)),
    )
