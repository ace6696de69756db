"""Change one key of a JSON5 document in place, keeping its comments, key order and layout.

No maintained Python library round-trips JSON5 with comments: `json5` (the one config.py reads with)
parses to plain dicts, and `json-five`, which keeps a model of the text, installs a package also named
`json5`, so the two cannot live together. This module therefore edits the text itself: a small scanner
finds where each member's key and value sit (strings, comments and nesting understood), then only the
value's characters are replaced, or a new `key: value` member is inserted after the last member of its
object, in that object's indentation. Everything else of the file stays byte for byte as it was.
The caller checks the result: `json5.loads(edit) == expected`, else it falls back to plain JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_PUNCT = "{}[]:,"
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


class EditError(ValueError):
    """The text is not JSON5 this scanner understands."""


@dataclass
class Token:
    kind: str  # one of _PUNCT, "string", "atom"
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace() or c == "\ufeff":
            i += 1
        elif text.startswith("//", i):
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            if close < 0:
                raise EditError("unterminated comment")
            i = close + 2
        elif c in _PUNCT:
            tokens.append(Token(c, i, i + 1))
            i += 1
        elif c in "'\"":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise EditError("unterminated string")
            tokens.append(Token("string", i, j + 1))
            i = j + 1
        else:
            j = i
            while (
                j < n
                and not text[j].isspace()
                and text[j] not in _PUNCT + "'\""
                and not text.startswith(("//", "/*"), j)
            ):
                j += 1
            tokens.append(Token("atom", i, j))
            i = j
    return tokens


@dataclass
class Node:
    start: int
    end: int
    kind: str  # object, array, scalar
    close: int = -1  # index of the closing bracket
    members: list[Member] = field(default_factory=list)


@dataclass
class Member:
    key: str
    key_start: int
    value: Node
    comma_end: int | None = None  # end of the comma after the value, if any


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0

    def peek(self) -> Token:
        if self.pos >= len(self.tokens):
            raise EditError("unexpected end of the document")
        return self.tokens[self.pos]

    def take(self, kind: str | None = None) -> Token:
        token = self.peek()
        if kind is not None and token.kind != kind:
            raise EditError(f"expected {kind!r} at offset {token.start}")
        self.pos += 1
        return token

    def value(self) -> Node:
        token = self.peek()
        if token.kind == "{":
            return self.obj()
        if token.kind == "[":
            return self.array()
        if token.kind in ("string", "atom"):
            self.pos += 1
            return Node(token.start, token.end, "scalar")
        raise EditError(f"unexpected {token.kind!r} at offset {token.start}")

    def key(self) -> tuple[str, int]:
        token = self.take()
        raw = self.text[token.start : token.end]
        if token.kind == "string":
            import json5

            return str(json5.loads(raw)), token.start
        if token.kind == "atom":
            return raw, token.start
        raise EditError(f"expected a key at offset {token.start}")

    def obj(self) -> Node:
        node = Node(self.take("{").start, 0, "object")
        while self.peek().kind != "}":
            name, at = self.key()
            self.take(":")
            member = Member(name, at, self.value())
            node.members.append(member)
            if self.peek().kind == ",":
                member.comma_end = self.take(",").end
            elif self.peek().kind != "}":
                raise EditError(f"expected ',' or '}}' at offset {self.peek().start}")
        close = self.take("}")
        node.close, node.end = close.start, close.end
        return node

    def array(self) -> Node:
        node = Node(self.take("[").start, 0, "array")
        while self.peek().kind != "]":
            self.value()
            if self.peek().kind == ",":
                self.take(",")
            elif self.peek().kind != "]":
                raise EditError(f"expected ',' or ']' at offset {self.peek().start}")
        close = self.take("]")
        node.close, node.end = close.start, close.end
        return node


def parse(text: str) -> Node:
    parser = _Parser(text)
    root = parser.value()
    if parser.pos != len(parser.tokens):
        raise EditError("text after the document")
    if root.kind != "object":
        raise EditError("the document is not an object")
    return root


def _line_start(text: str, at: int) -> int:
    return text.rfind("\n", 0, at) + 1


def _indent_at(text: str, at: int) -> str:
    start = _line_start(text, at)
    line = text[start:at]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _indent_unit(text: str) -> str:
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else "  "


def _unquoted_style(root: Node, text: str) -> bool:
    first = root.members[0] if root.members else None
    return first is not None and text[first.key_start] not in "'\""


def render_key(name: str, unquoted: bool) -> str:
    return name if unquoted and _IDENTIFIER.match(name) else json.dumps(name, ensure_ascii=False)


def render_value(value: Any, indent: str, unit: str) -> str:
    """JSON for `value`, its inner lines indented to sit at `indent`."""
    if isinstance(value, dict | list) and value:
        return json.dumps(value, ensure_ascii=False, indent=len(unit)).replace("\n", "\n" + indent)
    return json.dumps(value, ensure_ascii=False)


def _nested(parts: list[str], value: Any) -> Any:
    for part in reversed(parts):
        value = {part: value}
    return value


def _insert(text: str, node: Node, name: str, value: Any, unquoted: bool, unit: str) -> str:
    """`text` with a member `name: value` added at the end of object `node`."""
    outer = _indent_at(text, node.start)
    if not node.members:
        inner = outer + unit
        member = f"{render_key(name, unquoted)}: {render_value(value, inner, unit)}"
        if text[node.start + 1 : node.close].strip() == "":
            return f"{text[: node.start + 1]}\n{inner}{member}\n{outer}{text[node.close :]}"
        return f"{text[: node.start + 1]}\n{inner}{member}{text[node.start + 1 :]}"
    last = node.members[-1]
    inner = _indent_at(text, last.key_start)
    member = f"{render_key(name, unquoted)}: {render_value(value, inner, unit)}"
    after = last.comma_end if last.comma_end is not None else last.value.end
    line_end = text.find("\n", after)
    line_end = len(text) if line_end < 0 else line_end
    if _line_start(text, node.close) == _line_start(text, last.value.end):
        # the object closes on the last member's line ({a: 1}): add inline, before the brace
        if last.comma_end is not None:
            return f"{text[: last.comma_end]} {member},{text[last.comma_end :]}"
        return f"{text[: last.value.end]}, {member}{text[last.value.end :]}"
    if last.comma_end is not None:  # trailing-comma style: keep it
        return f"{text[:line_end]}\n{inner}{member},{text[line_end:]}"
    return f"{text[: last.value.end]},{text[last.value.end : line_end]}\n{inner}{member}{text[line_end:]}"


def set_in_text(text: str, parts: list[str], value: Any) -> str:
    """`text` (a JSON5 object) with the member at `parts` set to `value`; EditError if it cannot."""
    if not text.strip():
        return json.dumps(_nested(parts, value), ensure_ascii=False, indent=2) + "\n"
    root = parse(text)
    unquoted, unit = _unquoted_style(root, text), _indent_unit(text)
    node = root
    for depth, part in enumerate(parts):
        matches = [m for m in node.members if m.key == part]
        if not matches:
            return _insert(text, node, part, _nested(parts[depth + 1 :], value), unquoted, unit)
        member = matches[-1]  # JSON5 readers keep the last of duplicate keys
        rest = parts[depth + 1 :]
        if not rest or member.value.kind != "object":
            indent = _indent_at(text, member.key_start)
            new = render_value(_nested(rest, value), indent, unit)
            return text[: member.value.start] + new + text[member.value.end :]
        node = member.value
    raise EditError("empty key")


def edited_config_text(old_text: str, parts: list[str], value: Any, expected: dict[str, Any]) -> str:
    """The new file text: `old_text` edited in place when that reads back as `expected`, else plain JSON
    (a document this scanner cannot follow loses its comments rather than blocking the change)."""
    import json5

    try:
        text = set_in_text(old_text, parts, value)
        if json5.loads(text) == expected:
            return text
    except (EditError, ValueError, RecursionError):
        pass
    return json.dumps(expected, ensure_ascii=False, indent=2) + "\n"
