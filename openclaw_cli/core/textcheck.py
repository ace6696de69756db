"""Text that cannot be stored or sent, found once where parsed JSON enters.

JSON may spell a UTF-16 surrogate on its own (`"\\ud800"`), and Python's json parser accepts it, so the
parsed string holds a code point that is not a character: it cannot be encoded as UTF-8, and fails
later, where it is written to a file, a database or a socket, or handed to a tokenizer. Every input
path (a JSON Lines batch, an import, a config file, a gateway request) checks the whole parsed value
here, keys included, and refuses it with the path of the bad string. Text fields that are stored also
refuse NUL (`nul=True`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
HINT = (
    "text is UTF-8, and a \\uD800-\\uDFFF escape is one half of a surrogate pair: give the character itself"
)


@dataclass(frozen=True)
class BadText:
    """Where a string that is not text sits in a parsed value, and what is wrong with it."""

    path: str  # e.g. `content.l1`, `records[3].source["chat id"]`; "" for the value itself
    char: str  # the offending code point
    position: int  # 1-based, within the string
    in_key: bool = False  # the object key at `path` is bad, not its value

    @property
    def problem(self) -> str:
        what = "a NUL character" if self.char == "\x00" else f"a lone surrogate \\u{ord(self.char):04x}"
        return f"{what} at character {self.position}"

    def describe(self, root: str = "") -> str:
        """One phrase: `'content.l1' holds a lone surrogate \\ud800 at character 3`."""
        where = join(root, self.path)
        subject = f"the key {where}" if self.in_key else (f"'{where}'" if where else "the value")
        return f"{subject} holds {self.problem}"


def join(root: str, path: str) -> str:
    if not root or not path:
        return root or path
    return root + path if path.startswith("[") else f"{root}.{path}"


def _key_step(key: str) -> str:
    # Keys are user data: a key that is not a plain name is quoted with escapes, so the path stays printable.
    return key if _PLAIN_KEY.match(key) else f"[{json.dumps(key)}]"


# A trail is the way down to a node, built only when something is found: (key or index, parent's trail).
Trail = tuple[str | int, "Trail"] | None


def _path(trail: Trail) -> str:
    steps: list[str | int] = []
    while trail is not None:
        step, trail = trail
        steps.append(step)
    path = ""
    for step in reversed(steps):
        path = join(path, f"[{step}]" if isinstance(step, int) else _key_step(step))
    return path


def _bad_position(text: str, nul: bool) -> int | None:
    """Where the first lone surrogate (or NUL, when `nul`) of `text` is. Fast for the usual case: an
    ASCII string cannot hold a surrogate, and UTF-8 encoding (C speed) stops at the first one."""
    found = text.find("\x00") if nul else -1
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            found = exc.start if found < 0 else min(found, exc.start)
    return found if found >= 0 else None


def find_bad_text(value: Any, *, nul: bool = False) -> BadText | None:
    """A string of a parsed JSON value (an object's keys are looked at before its values) that holds a
    lone surrogate, or NUL when `nul`; None when all is text. Walks without recursion: values may be deep."""
    stack: list[tuple[Any, Trail]] = [(value, None)]
    while stack:
        node, trail = stack.pop()
        if isinstance(node, str):
            at = _bad_position(node, nul)
            if at is not None:
                return BadText(_path(trail), node[at], at + 1)
        elif isinstance(node, dict):
            children: list[tuple[Any, Trail]] = []
            for key, child in node.items():
                if isinstance(key, str) and (at := _bad_position(key, nul)) is not None:
                    return BadText(_path((key, trail)), key[at], at + 1, in_key=True)
                if isinstance(child, str | dict | list):
                    children.append((child, (str(key), trail)))
            stack.extend(reversed(children))
        elif isinstance(node, list):
            stack.extend(
                (child, (n, trail))
                for n, child in reversed(list(enumerate(node)))
                if isinstance(child, str | dict | list)
            )
    return None


def tool_arguments(arguments: str) -> dict[str, Any] | str:
    """A model's tool-call arguments parsed, or why they cannot be used (one phrase for the model: it
    reads the error and corrects its call). A model can write a lone `\\ud800` escape too; nothing could
    store it, so it is refused here like every other input."""
    try:
        raw = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        return f"arguments are not valid JSON ({exc.msg})"
    if not isinstance(raw, dict):
        return "arguments must be a JSON object"
    bad = find_bad_text(raw)
    if bad is not None:
        return f"invalid arguments ({bad.describe()})"
    return raw
