"""`openclaw chat` as a real process: piped input, and typed into a real terminal (tmux) read off the screen."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from openclaw_cli.core.paths import Home
from openclaw_cli.sessions.store import SessionStore
from tests import agent_helpers
from tests.agent_helpers import ScriptedModel, WindowedFakeOpenAI, config_env
from tests.conftest import ROOT, base_env, run_cli
from tests.fake_openai import FAKE_API_KEY
from tests.import_trace import traced

KEY = "agent:main:main"

# The fake model server that enforces a context window, and the scripted model behind it (agent_helpers).
fake, model = agent_helpers.fake, agent_helpers.model


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def chat(home: Path, lines: str, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    """`openclaw chat --local` fed `lines` on a pipe."""
    return run_cli(home, "chat", "--local", *args, input=lines, env=env or config_env(None))


def contents(home: Path, key: str = KEY, agent: str = "main") -> list[str]:
    store = SessionStore(Home(home), agent)
    return [m["content"] for m in store.read_messages(store.resolve(key)).messages]


def test_help_has_examples(home: Path) -> None:
    result = run_cli(home, "chat", "--help")
    assert result.returncode == 0
    assert "Examples:" in result.stdout and "openclaw chat --local" in result.stdout


def test_without_a_model_it_says_how_to_configure_one_and_still_stores_and_extracts(home: Path) -> None:
    result = chat(home, "hello there\nremember that my favourite tea is sencha\n")
    assert result.returncode == 0, result.stderr
    assert "No model is configured" in result.stdout and "openclaw config set llm.model" in result.stdout
    assert result.stdout.count("No model is configured") == 1  # said once, not after every message
    assert "Saved to memory: " in result.stdout
    assert contents(home) == ["hello there", "remember that my favourite tea is sencha"]
    listed = run_cli(home, "memory", "list", "--json").json()
    assert any("sencha" in record["l0"] for record in listed)


def test_a_reply_streams_to_the_screen_and_compact_summarises(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    """One process for both: each chat process with a model pays for importing litellm."""
    model.replies.append("Hello Alice, nice to meet you.")
    lines = "hi, I am Alice\nline 1\nline 2\n/compact\n"
    result = chat(home, lines, env=config_env(fake.url, embed_url=fake.url))
    assert result.returncode == 0, result.stderr
    assert "Hello Alice, nice to meet you." in result.stdout
    assert contents(home)[:2] == ["hi, I am Alice", "Hello Alice, nice to meet you."]
    assert "Compacted: 4 message(s) summarised up to #3, 2 kept as they are." in result.stdout, result.stdout


def test_piped_lines_that_are_not_utf8_stop_the_chat_with_one_error_line(home: Path) -> None:
    result = run_cli(home, "chat", "--local", input=b"first\r\nsecond \xff\nthird\n", env=config_env(None))
    assert result.returncode == 1, result.stderr
    assert result.stderr == (
        "openclaw: error: standard input line 2 is not valid UTF-8 (byte 7) "
        "(convert it with iconv first; the lines before it were sent)\n"
    )
    assert contents(home) == ["first"]


def test_memory_remember_forget_and_status_commands(home: Path) -> None:
    result = chat(home, "/remember my cat is called Miso\n/memory cat Miso\n/status\n")
    assert result.returncode == 0, result.stderr
    remembered = next(line for line in result.stdout.splitlines() if "remembered" in line)
    record_id = remembered.split("remembered ", 1)[1].split(":", 1)[0]
    assert record_id in result.stdout.split(remembered, 1)[1]  # /memory found it
    assert "mode: in-process" in result.stdout and "sessionKey: agent:main:main" in result.stdout
    forgot = chat(home, f"/forget {record_id}\n/memory cat Miso\n")
    assert f"forgot {record_id}" in forgot.stdout and "no memories found" in forgot.stdout


def test_new_starts_a_new_session_and_says_so(home: Path) -> None:
    chat(home, "first\n")
    store = SessionStore(Home(home), "main")
    first = store.resolve(KEY)
    result = chat(home, "/new\n")
    assert "Started a new session" in result.stdout and f"{first} is archived" in result.stdout
    assert contents(home) == []  # a command, not a message: the new session starts empty


def test_compact_without_a_model_is_an_error_line_and_the_chat_goes_on(home: Path) -> None:
    result = chat(home, "hello\n/compact\nstill here\n")
    assert "error: summaries need a model" in result.stdout
    assert contents(home) == ["hello", "still here"]


def test_exit_ends_the_chat(home: Path) -> None:
    result = chat(home, "one\n/exit\ntwo\n")
    assert result.returncode == 0
    assert contents(home) == ["one"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("/memory", "usage: /memory QUERY"),
        ("/remember", "usage: /remember TEXT"),
        ("/forget", "usage: /forget ID"),
        ("/forget ../../etc/passwd", "error: "),
        ("/forget mem-missing", "no memory with id"),
        ("/frobnicate", "unknown command /frobnicate"),
    ],
    ids=[
        "memory-no-query",
        "remember-no-text",
        "forget-no-id",
        "forget-bad-id",
        "forget-unknown-id",
        "unknown",
    ],
)
def test_bad_slash_commands_get_one_error_line(home: Path, line: str, message: str) -> None:
    result = chat(home, f"{line}\nafter\n")
    assert result.returncode == 0
    assert message in result.stdout and "Traceback" not in result.stdout + result.stderr
    assert contents(home) == ["after"]  # the bad command was not sent as a message


def test_a_model_error_is_shown_and_the_chat_goes_on(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    fake.fail_next(1, status=500, endpoint="/chat/completions")
    model.replies.append("Back again.")
    result = chat(home, "first try\nsecond try\n", env=config_env(fake.url, embed_url=fake.url))
    assert "error: The model did not answer" in result.stdout and "HTTP 500" in result.stdout
    assert "Back again." in result.stdout
    assert contents(home) == ["first try", "second try", "Back again."]


def test_a_session_of_another_agent_is_a_usage_error(home: Path) -> None:
    result = chat(home, "hi\n", "--session", "agent:work:main")
    assert result.returncode == 2 and "--agent work" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_malformed_session_key_is_refused(home: Path) -> None:
    result = chat(home, "hi\n", "--session", "agent:main:../../x")
    assert result.returncode in (1, 2) and result.stderr.startswith("openclaw: error:")
    assert not (home / "agents" / "main" / "sessions").exists()


def test_agent_and_session_options(home: Path) -> None:
    result = chat(home, "hello work\n", "--agent", "work", "--session", "agent:work:direct:alice")
    assert result.returncode == 0, result.stderr
    assert contents(home, "agent:work:direct:alice", "work") == ["hello work"]


def test_without_a_gateway_it_runs_in_process_and_says_so(home: Path) -> None:
    port = free_port()
    result = run_cli(home, "chat", "--port", str(port), input="hi\n", env=config_env(None))
    assert result.returncode == 0, result.stderr
    assert f"no gateway on port {port}: running in-process" in result.stdout
    assert contents(home) == ["hi"]


def test_start_up_imports_nothing_heavy(home: Path) -> None:
    proc, modules = traced(home, "chat", "--local", env=config_env(None))
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {name.split(".")[0] for name in modules}
    heavy = {"litellm", "openai", "onnxruntime", "numpy", "jieba", "tiktoken"}
    assert imported.isdisjoint(heavy), imported & heavy
    assert "prompt_toolkit" in imported or "rich" in imported


# -- a real terminal --------------------------------------------------------------------------------


class Terminal:
    """A tmux pane running a command on its own tmux server (it never touches the user's sessions)."""

    def __init__(self, tmp: Path, command: list[str], env: dict[str, str]) -> None:
        self.socket = f"openclaw-test-{uuid.uuid4().hex[:8]}"
        script = tmp / "run.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        script.write_text(f"#!/bin/sh\n{exports}cd {shlex.quote(str(ROOT))}\nexec {shlex.join(command)}\n")
        script.chmod(0o700)
        self.tmux("new-session", "-d", "-s", "chat", "-x", "100", "-y", "40", str(script))

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=20)
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "chat")

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.1)
        raise AssertionError(f"{text!r} not on the screen:\n{self.screen()}")

    def type(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "chat", *keys)

    def close(self) -> None:
        self.tmux("kill-server")


def test_typed_into_a_real_terminal(
    home: Path, tmp_path: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    model.replies += ["Hello **Alice**, how can I help?", "You said hello."]
    env = {k: v for k, v in base_env(home).items() if k in ("PATH", "HOME", "LANG", "PYTHONPATH")}
    env.update(base_env(home))
    env.update(config_env(fake.url, embed_url=fake.url))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env["TERM"] = "xterm-256color"
    env["COLUMNS"] = "100"  # the pane's width: the live view's lines fill it, as in a user's terminal
    terminal = Terminal(tmp_path, [sys.executable, "-m", "openclaw_cli", "chat", "--local"], env)
    try:
        terminal.wait_for("you>")
        # while the user types, the chat loads what the first reply needs (the model client, memory)
        preloaded = _preloaded(terminal)
        assert all(
            part in preloaded for part in ("turn code", "model client", "embedder main", "search main")
        )
        assert "failed" not in preloaded
        terminal.type("helo", "Left", "l", "Enter")  # line editing: the missing l typed in place
        shown = terminal.wait_for("how can I help?")
        assert "Hello Alice, how can I help?" in shown  # Markdown rendered: no asterisks
        assert contents(home)[0] == "hello"
        terminal.wait_for("you>")
        terminal.type("Up", "Enter")  # history: the previous line again
        terminal.wait_for("You said hello.")
        terminal.type("/status", "Enter")
        terminal.wait_for("mode: in-process")
        model.replies.append("one two three four five six seven eight nine ten eleven twelve")
        fake.delay, fake.chunk_delay = 1.0, 0.3
        terminal.type("count slowly", "Enter")
        terminal.wait_for("thinking…")  # a spinner until the reply begins
        terminal.wait_for("two")
        terminal.type("C-c")  # stops the reply, not the chat
        shown = terminal.wait_for("stopped; your message is kept")
        fake.delay, fake.chunk_delay = 0.0, 0.0
        # the partial reply is on the screen once (an echoed ^C used to wrap the live view's line)
        assert len([line for line in shown.splitlines() if line.startswith("one two")]) == 1, shown
        assert "thinking…" not in shown
        terminal.type("/exit", "Enter")
        deadline = time.monotonic() + 20
        while "chat" in terminal.tmux("list-sessions") and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        terminal.close()
    assert contents(home) == [
        "hello",
        "Hello **Alice**, how can I help?",
        "hello",
        "You said hello.",
        "count slowly",
    ]
    # one prompt history per person typing (the owner here), so a purge of a person can remove theirs
    from openclaw_cli.identity.persons import DEFAULT_OWNER, history_name

    history = home / "agents" / "main" / "chat" / history_name(DEFAULT_OWNER)
    assert "+hello" in history.read_text() and oct(history.stat().st_mode & 0o777) == "0o600"


def _preloaded(terminal: Terminal, timeout: float = 90) -> str:
    """The chat's `/status` line about its background preload, once it has finished."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        terminal.type("/status", "Enter")
        time.sleep(0.5)
        lines = [line for line in terminal.screen().splitlines() if line.startswith("preloaded:")]
        if lines and lines[-1] not in ("preloaded: loading", "preloaded: not started"):
            terminal.type("C-l")  # a clear screen for what follows
            return lines[-1]
        time.sleep(0.5)
    raise AssertionError(f"the preload did not finish:\n{terminal.screen()}")


# -- through a running gateway ------------------------------------------------------------------------


def test_chat_through_a_running_gateway(home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel) -> None:
    from tests.gateway_helpers import running_gateway, write_config

    write_config(home, fake)
    model.replies.append("Hello from the gateway.")
    with running_gateway(home) as gateway:
        lines = "hello gateway\n/remember my bike is red\n/memory bike red\n/status\n/compact\n/new\n"
        result = run_cli(
            home, "chat", "--port", str(gateway.port), input=lines, env={"OPENAI_API_KEY": FAKE_API_KEY}
        )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"(gateway ws://127.0.0.1:{gateway.port}/ws)" in out
    assert "Hello from the gateway." in out
    remembered = next(line for line in out.splitlines() if "remembered" in line)
    record_id = remembered.split("remembered ", 1)[1].split(":", 1)[0]
    assert record_id in out.split(remembered, 1)[1]  # /memory found it through memory.search
    assert "turnsDone" in out  # /status came from the gateway
    assert "Nothing to compact" in out or "Compacted" in out
    assert out.count("Started a new session") == 1  # the notice arrives twice; shown once
    listed = run_cli(home, "session", "list", "--status", "archived", "--json").json()
    [archived] = listed
    store = SessionStore(Home(home), "main")
    assert [m["content"] for m in store.read_messages(archived["sessionId"]).messages] == [
        "hello gateway",
        "Hello from the gateway.",
    ]
    assert contents(home) == []


def test_through_a_gateway_the_reply_renderer_loads_while_the_user_types(
    home: Path, tmp_path: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    """The gateway client has no turn of its own to load, but the terminal's renderer it has (rich's
    Markdown: ~36 ms of the first turn): it is imported once the prompt is up, before anything is typed."""
    from tests.gateway_helpers import running_gateway, write_config

    write_config(home, fake)
    model.replies.append("Hello **from** the gateway.")
    trace = tmp_path / "imports.txt"
    env = {**base_env(home), "TERM": "xterm-256color", "COLUMNS": "100", "OPENAI_API_KEY": FAKE_API_KEY}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    with running_gateway(home) as gateway:
        chat_command = (
            f"exec {shlex.quote(sys.executable)} -X importtime -m openclaw_cli chat --port {gateway.port}"
        )
        terminal = Terminal(tmp_path, ["sh", "-c", f"{chat_command} 2>{shlex.quote(str(trace))}"], env)
        try:
            terminal.wait_for("you>")
            deadline = time.monotonic() + 60
            while "| rich.markdown" not in trace.read_text():
                assert time.monotonic() < deadline, "the renderer was not loaded while the prompt waited"
                time.sleep(0.1)
            terminal.type("hello", "Enter")
            shown = terminal.wait_for("the gateway.")
        finally:
            terminal.close()
    assert "Hello from the gateway." in shown  # drawn as Markdown: no asterisks
    assert f"(gateway ws://127.0.0.1:{gateway.port}/ws)" in shown


def test_a_wrong_gateway_token_is_one_clear_error(home: Path, fake: WindowedFakeOpenAI) -> None:
    from tests.gateway_helpers import running_gateway, write_config

    write_config(home, fake)
    with running_gateway(home) as gateway:
        result = run_cli(
            home,
            "chat",
            "--port",
            str(gateway.port),
            input="hi\n",
            env={"OPENCLAW_GATEWAY_TOKEN": "wrong-token"},
        )
    assert result.returncode == 1
    assert "wrong or missing token" in result.stderr and len(result.stderr.strip().splitlines()) == 1
