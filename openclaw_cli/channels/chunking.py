"""Cut a reply into parts a platform accepts: at paragraphs first, then sentences, then words.

A fenced code block (```) is kept whole in one part when it fits; one longer than a part is cut between
its lines, and each piece is closed and re-opened with the same fence, so no part holds half a block.
"""

from __future__ import annotations

import re

FENCE = re.compile(r"^(```|~~~)")
SENTENCE_END = re.compile(r"(?<=[.!?。！？;；])\s+")


def _blocks(text: str) -> list[tuple[str, bool]]:
    """(block, is_code) in order: paragraphs split at blank lines, a fenced block as one."""
    blocks: list[tuple[str, bool]] = []
    prose: list[str] = []
    code: list[str] | None = None
    fence = ""

    def flush_prose() -> None:
        joined = "\n".join(prose).strip("\n")
        for paragraph in re.split(r"\n\s*\n", joined):
            if paragraph.strip():
                blocks.append((paragraph.strip("\n"), False))
        prose.clear()

    for line in text.split("\n"):
        if code is None:
            opening = FENCE.match(line.strip())
            if opening:
                flush_prose()
                code, fence = [line], opening.group(1)
            else:
                prose.append(line)
        else:
            code.append(line)
            if line.strip() == fence:
                blocks.append(("\n".join(code), True))
                code = None
    if code is not None:  # an unclosed fence: keep it as code to the end
        blocks.append(("\n".join(code), True))
    flush_prose()
    return blocks


def _hard(piece: str, limit: int) -> list[str]:
    return [piece[i : i + limit] for i in range(0, len(piece), limit)]


def _pack(pieces: list[str], limit: int, joiner: str) -> list[str]:
    parts: list[str] = []
    current = ""
    for piece in pieces:
        candidate = f"{current}{joiner}{piece}" if current else piece
        if len(candidate) <= limit:
            current = candidate
            continue
        if current:
            parts.append(current)
        current = piece
    if current:
        parts.append(current)
    return parts


def _split_prose(block: str, limit: int) -> list[str]:
    pieces: list[str] = []
    for sentence in SENTENCE_END.split(block):
        if len(sentence) <= limit:
            pieces.append(sentence)
            continue
        for word in _pack(sentence.split(" "), limit, " "):
            pieces.extend(_hard(word, limit))
    return _pack(pieces, limit, " ")


def _split_code(block: str, limit: int) -> list[str]:
    lines = block.split("\n")
    opening = lines[0]
    closing = lines[-1] if len(lines) > 1 and FENCE.match(lines[-1].strip()) else opening[:3]
    body = lines[1:-1] if closing == lines[-1] else lines[1:]
    room = limit - len(opening) - len(closing) - 2
    parts = []
    for chunk in _pack([p for line in body for p in (_hard(line, room) if line else [""])], room, "\n"):
        parts.append(f"{opening}\n{chunk}\n{closing}")
    return parts


def split_text(text: str, limit: int) -> list[str]:
    """Parts of at most `limit` characters, in order; an empty reply is no part."""
    if len(text) <= limit:
        return [text] if text.strip() else []
    pieces: list[str] = []
    for block, is_code in _blocks(text):
        if len(block) <= limit:
            pieces.append(block)
        elif is_code:
            pieces.extend(_split_code(block, limit))
        else:
            pieces.extend(_split_prose(block, limit))
    return _pack(pieces, limit, "\n\n")
