"""Word lists written as one string of words, as the lexicons of the text modules are."""

from __future__ import annotations


def words(text: str) -> frozenset[str]:
    """The whitespace-separated words of `text`."""
    return frozenset(text.split())
