"""The terminal side of `openclaw chat`: prompt_toolkit reads lines (editing, history), rich renders.

A reply streams into a rich Live view as Markdown, a spinner standing in for it until its first piece
arrives. Without a terminal on stdin (a pipe, a script) the lines are read plainly and the reply printed
as it comes, so `echo hi | openclaw chat` works too. Once the first prompt is on the screen the backend
starts loading what the first reply needs (ChatBackend.preload), while the user types.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.agent.turn.commands import CHAT_COMMANDS, Command, parse_command
from openclaw_cli.core.errors import InvalidInput, OpenclawError
from openclaw_cli.core.input_lines import MESSAGE_BYTES, lines

if TYPE_CHECKING:
    from rich.console import Console

    from openclaw_cli.agent.clients.chat import ChatBackend

PROMPT = "you> "
HELP = """Commands:
  /new, /reset      start a new session (this one is archived; its facts go to memory first)
  /compact          summarise the older messages now
  /skill NAME TEXT  answer TEXT following the skill NAME (see `openclaw skills list`)
  /memory QUERY     search long-term memory
  /search QUERY     search what was said in your past sessions
  /remember TEXT    store TEXT in long-term memory now
  /forget ID        delete the memory with that id
  /status           the session, model and mode
  /exit             leave (Ctrl-D works too)"""
NEEDS_ARGUMENT = {"memory": "QUERY", "search": "QUERY", "remember": "TEXT", "forget": "ID"}


def read_lines(
    history_path: Path | None, interactive: bool, on_prompt: Callable[[], None] | None = None
) -> Iterator[str]:
    """Lines typed at the prompt; Ctrl-C clears the line, Ctrl-D (or the end of input) ends.

    `on_prompt` is called once, when the first prompt has been drawn (not before: a thread started
    earlier would compete with the drawing for the interpreter)."""
    if not interactive:
        # Bytes, decoded here: text-mode stdin turns bytes that are not UTF-8 into lone surrogates
        # (surrogateescape), which failed only when the message was stored.
        sent = "shorten it; the lines before it were sent"
        piped = lines(sys.stdin.buffer, MESSAGE_BYTES, "standard input", ends=True, hint=sent)
        for number, raw in enumerate(piped, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidInput(
                    f"standard input line {number} is not valid UTF-8 (byte {exc.start})",
                    hint="convert it with iconv first; the lines before it were sent",
                ) from exc
            yield line.rstrip("\n").removesuffix("\r")
        return
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    history = FileHistory(str(history_path)) if history_path is not None else InMemoryHistory()
    session: PromptSession[str] = PromptSession(history=history)
    if on_prompt is not None:
        pending = [on_prompt]

        def drawn(_app: object) -> None:
            while pending:
                pending.pop()()

        session.app.after_render += drawn
    while True:
        try:
            yield session.prompt(PROMPT)
        except KeyboardInterrupt:
            continue
        except EOFError:
            return


def start_loading_renderer() -> threading.Thread:
    """Import what a reply is drawn with, in a background thread: called once the prompt is up. rich's
    Markdown (markdown-it, pygments) alone took ~36 ms of the first turn through a running gateway, whose
    other work is ~70 ms."""
    thread = threading.Thread(target=_load_renderer, name="chat-renderer", daemon=True)
    thread.start()
    return thread


def _load_renderer() -> None:
    from rich.live import Live  # noqa: F401
    from rich.markdown import Markdown
    from rich.spinner import Spinner  # noqa: F401

    Markdown("*ready*")  # markdown-it builds its parser's rules on first use


class ChatScreen:
    """Renders what the backend says; one instance per chat."""

    def __init__(self, console: Console, backend: ChatBackend, agent_id: str, live: bool) -> None:
        self.console = console
        self.backend = backend
        self.agent_id = agent_id
        self.live = live
        self.said: set[str] = set()  # the banner: not repeated after every message
        self.sent = 0  # messages sent, and how many of them got no reply because the turn failed:
        self.failed = 0  # a piped chat exits non-zero after a failed turn (issue 48)

    def notice(self, text: str) -> None:
        if text not in self.said:
            self.console.print(f"[yellow]* {_escape(text)}[/yellow]")

    def error(self, text: str) -> None:
        self.console.print(f"[red]error: {_escape(text)}[/red]")

    def handle(self, line: str) -> bool:
        """One line typed by the user; False when the chat should end."""
        text = line.strip()
        if not text:
            return True
        command = parse_command(text, CHAT_COMMANDS)
        if command is None and _looks_like_command(text):
            self.error(f"unknown command {text.split()[0]} (type /help for the list)")
            return True
        sending = command is None or command.name in ("new", "reset", "skill")  # the turn handles them
        try:
            if sending:
                self.reply(text)
                return True
            assert command is not None
            return self.run_command(command)
        except OpenclawError as exc:
            self.failed += sending  # the gateway broke off: the message got no reply
            self.error(exc.message + (f" ({exc.hint})" if exc.hint else ""))
            return True

    def run_command(self, command: Command) -> bool:
        if command.name == "exit":
            return False
        if command.name == "help":
            self.console.print(HELP, markup=False, highlight=False)
        elif command.name in NEEDS_ARGUMENT and not command.rest:
            self.error(f"usage: /{command.name} {NEEDS_ARGUMENT[command.name]}")
        elif command.name == "compact":
            with self.console.status("summarising…"):
                outcome = self.backend.compact()
            from openclaw_cli.agent.compaction import CompactionResult
            from openclaw_cli.agent.summarise import describe_compaction

            self.notice(describe_compaction(CompactionResult(**_snake(outcome))))
        elif command.name == "memory":
            self.show_memories(self.backend.memory_search(command.rest))
        elif command.name == "search":
            self.show_turns(self.backend.session_search(command.rest))
        elif command.name == "remember":
            stored = self.backend.remember(command.rest)
            if stored.get("action") in ("duplicate", "merged"):  # say what it matched, not just "remembered"
                self.notice(f"{stored['action']}: {stored.get('reason')} ({stored.get('id')})")
            else:
                self.notice(f"remembered {stored.get('id')}: {stored.get('l0', command.rest)}")
        elif command.name == "forget":
            gone = self.backend.forget(command.rest)
            self.notice(f"forgot {gone.get('id', command.rest)}")
        elif command.name == "status":
            for key, value in self.backend.status().items():
                self.console.print(f"{key}: {value}", markup=False, highlight=False)
        return True

    def show_memories(self, hits: list[dict[str, Any]]) -> None:
        if not hits:
            self.notice("no memories found")
            return
        for hit in hits:
            self.console.print(
                f"[dim]{_escape(str(hit.get('id')))}[/dim]  {_escape(str(hit.get('category', '')))}  "
                f"{_escape(str(hit.get('l0', hit.get('text', ''))))}"
            )

    def show_turns(self, hits: list[dict[str, Any]]) -> None:
        if not hits:
            self.notice("nothing found in past sessions")
            return
        for hit in hits:
            when = str(hit.get("ts") or "")[:16]
            who = hit.get("sender") or hit.get("role")
            self.console.print(
                f"[dim]{_escape(when)}  {_escape(str(who))}[/dim]  {_escape(str(hit.get('text', '')))}"
            )

    def reply(self, text: str) -> None:
        """Send a message and render the reply as it streams."""
        self.sent += 1
        if not self.live:
            result = self.backend.send(text, self._plain_event)
            if result.get("reply"):
                sys.stdout.write("\n")
            self._finish(result)
            return
        from rich.live import Live
        from rich.markdown import Markdown
        from rich.spinner import Spinner
        from rich.text import Text

        pieces: list[str] = []
        waiting = Spinner("dots", text="thinking…", style="dim")
        live = Live(waiting, console=self.console, refresh_per_second=15, transient=False)
        with _keys_unechoed(), live as view:

            def on_event(kind: str, payload: dict[str, Any]) -> None:
                if kind == "delta":
                    pieces.append(str(payload.get("text", "")))
                    view.update(Markdown("".join(pieces)))
                elif kind == "notice":
                    self.notice(str(payload.get("text", "")))
                elif kind == "tool":
                    view.console.print(f"[dim]· {_escape(str(payload.get('name')))}[/dim]")

            result = self.backend.send(text, on_event)
            if not pieces:  # no reply (an error, or stopped before it began): the spinner goes
                view.update(Text(""))
        self._finish(result)

    def _plain_event(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == "delta":
            sys.stdout.write(str(payload.get("text", "")))
            sys.stdout.flush()
        elif kind == "notice":
            self.notice(str(payload.get("text", "")))

    def _finish(self, result: dict[str, Any]) -> None:
        if result.get("status") == "error":
            self.failed += 1
            self.error(str(result.get("error")))
        elif result.get("status") == "aborted":
            self.notice("stopped; your message is kept")


@contextmanager
def _keys_unechoed() -> Iterator[None]:
    """While a reply streams, the terminal does not echo keys. A Ctrl-C echoed as `^C` after a
    full-width line of the live view (rich pads each line to the width) wrapped the cursor onto the next
    line, so the view redrew the partial reply below its old copy: it showed twice. Keys typed meanwhile
    stay queued, and appear at the next prompt."""
    try:
        import termios
    except ImportError:  # not a POSIX terminal: nothing to quiet
        yield
        return
    fd = sys.stdin.fileno()
    try:
        before = termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError):  # stdin is no terminal
        yield
        return
    quiet = list(before)
    quiet[3] &= ~(termios.ECHO | getattr(termios, "ECHOCTL", 0))
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, before)


def _looks_like_command(text: str) -> bool:
    word = text.split()[0]
    return word.startswith("/") and len(word) > 1 and word[1:].isalpha()


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _snake(outcome: dict[str, Any]) -> dict[str, Any]:
    """A compaction outcome from JSON (camelCase) back to CompactionResult's fields."""
    names = {
        "sessionId": "session_id",
        "previousCheckpoint": "previous_checkpoint",
        "summaryTokens": "summary_tokens",
    }
    return {names.get(key, key): value for key, value in outcome.items() if names.get(key, key) in _FIELDS}


_FIELDS = {
    "session_id",
    "compacted",
    "reason",
    "checkpoint",
    "previous_checkpoint",
    "summarised",
    "kept",
    "summary_tokens",
}


def run_chat(
    backend: ChatBackend,
    console: Console,
    agent_id: str,
    banner: list[str],
    lines: Callable[[], Iterator[str]],
    live: bool,
) -> ChatScreen:
    """Run the chat until the lines end or /exit; the screen, which counts the messages that failed."""
    screen = ChatScreen(console, backend, agent_id, live)
    for line in banner:
        screen.notice(line)
    screen.said.update(banner)
    for line in lines():
        if not screen.handle(line):
            break
    return screen
