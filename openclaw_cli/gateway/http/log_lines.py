"""What uvicorn logs about a client's mistake, cut to one line.

uvicorn's WebSocket protocol closes a text frame that is not valid UTF-8 with 1007, as it should, and then
logs the UnicodeDecodeError with its whole traceback (`logger.exception`): one bad client can fill the log
with tracebacks of code that worked. The frame is the client's fault and the close says so to the client;
the log keeps one line per frame, as a warning.
"""

from __future__ import annotations

import logging

# uvicorn's words (uvicorn/protocols/websockets/websockets_sansio_impl.py, and the wsproto and websockets
# implementations alike).
INVALID_UTF8 = "Invalid UTF-8 sequence received from client."
ONE_LINE = "closed a WebSocket with 1007: a text frame was not valid UTF-8"


class ClientMistakes(logging.Filter):
    """Rewrites uvicorn's record of an invalid UTF-8 text frame into one line without the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == INVALID_UTF8:
            record.msg, record.args = ONE_LINE, ()
            record.exc_info, record.exc_text, record.stack_info = None, None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def install() -> None:
    """Filter uvicorn's error logger (once, however often a gateway is served in this process)."""
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(existing, ClientMistakes) for existing in logger.filters):
        logger.addFilter(ClientMistakes())
