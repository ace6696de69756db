"""A database connection string as it may be shown: its password replaced by ***.

The PostgreSQL DSN of `memory.postgres.dsn` may hold a password (in URL form, `user:secret@host` or
`?password=`, or as `password=` in key=value form). Settings print it, and errors name the server, only
through `mask_dsn`, so the password never reaches a terminal or a log.
"""

from __future__ import annotations

import re

_URL_SECRET = re.compile(r"(?P<head>^[a-z][a-z0-9+.-]*://[^:/@?]*):[^@/?]*@", re.IGNORECASE)
_KEYWORD_SECRET = re.compile(r"(?P<head>\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def mask_dsn(dsn: str) -> str:
    """`dsn` with any password replaced by ***, in URL form (user:secret@, ?password=) and key=value form."""
    if "://" in dsn:
        masked = _URL_SECRET.sub(lambda m: f"{m.group('head')}:***@", dsn)
        return re.sub(r"([?&]password=)[^&]*", r"\1***", masked, flags=re.IGNORECASE)
    return _KEYWORD_SECRET.sub(lambda m: f"{m.group('head')}***", dsn)


def strip_password(dsn: str) -> str:
    """`dsn` without any password, to be kept in a file: the password stays where the user put it
    (memory.postgres.dsn, PGPASSWORD or ~/.pgpass, which libpq reads itself) and is not copied."""
    if "://" in dsn:
        bare = _URL_SECRET.sub(lambda m: f"{m.group('head')}@", dsn)
        bare = re.sub(r"([?&])password=[^&]*&?", r"\1", bare, flags=re.IGNORECASE)
        return bare.rstrip("?&")
    return " ".join(_KEYWORD_SECRET.sub("", dsn).split())
