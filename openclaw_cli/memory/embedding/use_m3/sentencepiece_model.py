"""The SentencePiece model USE-m3 ships (the package's sp.model, a protobuf ModelProto): read without the
protobuf runtime, and adapted for the `sentencepiece` library.

ModelProto: 1 = repeated SentencePiece {1 piece, 2 score (float32)}, 3 = NormalizerSpec
{1 name, 2 precompiled_charsmap, 3 add_dummy_prefix, 4 remove_extra_whitespaces, 5 escape_whitespaces}.
"""

from __future__ import annotations

import struct
from typing import Any

_PIECES, _NORMALIZER = 1, 3
_LENGTH_DELIMITED = 2


def read_sentencepiece(data: bytes) -> tuple[list[tuple[str, float]], bytes]:
    """(pieces with scores, precompiled charsmap). Every piece, control pieces included, stays in the
    vocabulary: the package's tokenizer lets all of them match, and ids must line up with the embedding
    table."""
    top = _fields(data)
    vocab = []
    for raw in top.get(_PIECES, []):
        piece = _fields(raw)
        score = struct.unpack("<f", piece[2][0])[0] if 2 in piece else 0.0
        vocab.append((piece[1][0].decode("utf-8"), score))
    normalizer = _fields(top[_NORMALIZER][0]) if _NORMALIZER in top else {}
    return vocab, normalizer.get(2, [b""])[0]


def without_normalizer(data: bytes) -> bytes:
    """The same model with SentencePiece's identity normaliser and none of its whitespace rules: for text
    normalised beforehand (use_m3.build_normalizer), so that both segmentations see the same string.

    A second NormalizerSpec is appended rather than the first one replaced: a parser merges the two
    (each field set in the later one wins), and finding the first means walking 128,000 pieces in Python."""
    spec = (
        _key(1, _LENGTH_DELIMITED) + _varint_bytes(len(b"identity")) + b"identity"
        + _key(2, _LENGTH_DELIMITED) + b"\x00"  # an empty precompiled_charsmap
        + _key(3, 0) + b"\x00"  # add_dummy_prefix
        + _key(4, 0) + b"\x00"  # remove_extra_whitespaces
        + _key(5, 0) + b"\x00"  # escape_whitespaces
    )  # fmt: skip
    return data + _key(_NORMALIZER, _LENGTH_DELIMITED) + _varint_bytes(len(spec)) + spec


def _fields(data: bytes) -> dict[int, list[Any]]:
    """One message: field number -> values (int for varints, bytes otherwise), in order."""
    fields: dict[int, list[Any]] = {}
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        wire = key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, pos = data[pos : pos + size], pos + size
        elif wire == _LENGTH_DELIMITED:
            size, pos = _varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        fields.setdefault(key >> 3, []).append(value)
    return fields


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _key(field: int, wire: int) -> bytes:
    return _varint_bytes(field << 3 | wire)


def _varint_bytes(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
