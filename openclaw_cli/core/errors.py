"""Domain errors. The CLI maps each to a one-line message and an exit code."""

from __future__ import annotations


class OpenclawError(Exception):
    """A problem the user can act on. `hint` says what to do about it."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(OpenclawError):
    """The command line itself cannot be used (e.g. an argument that is not text); exit status 2 like click's."""

    exit_code = 2


class InvalidInput(OpenclawError):
    """The user gave a value that cannot be used (bad id, empty query, too long)."""


class NotFound(OpenclawError):
    """A session, record or key that does not exist."""


class ConfigError(OpenclawError):
    """openclaw.json is unreadable or holds an invalid value."""


class StoreError(OpenclawError):
    """A file or database on disk is damaged or cannot be used."""


class Conflict(OpenclawError):
    """The requested change clashes with what is stored (e.g. an id that already exists)."""
