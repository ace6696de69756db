"""Reading a model's reply as JSON of a given pydantic schema (llm.complete_json asks, this checks)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TypeVar

from openclaw_cli.llm.errors import InvalidReply

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def parse_json_reply(text: str, schema: type[M]) -> M:
    """`text` as `schema`: a bare JSON value, or one in a ``` fence, or the outermost {...} in prose."""
    from pydantic import ValidationError

    fenced = _FENCE.match(text)
    body = fenced.group(1) if fenced else text.strip()
    if not body.startswith(("{", "[")):
        start, end = body.find("{"), body.rfind("}")
        if start < 0 or end <= start:
            raise InvalidReply(f"the reply holds no JSON object: {_snippet(text)}")
        body = body[start : end + 1]
    try:
        return schema.model_validate_json(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "reply"
        raise InvalidReply(f"the reply does not fit the expected JSON ({where}: {first.get('msg')})") from exc


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat[:80] + ("..." if len(flat) > 80 else ""))
