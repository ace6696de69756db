"""`openclaw chat "question"` (one message, the reply, exit), `-m/--model`, a piped chat's exit status, and a
local OpenAI-compatible server without any key (issue 48, "found by a new user").

The model is the fake OpenAI-compatible server on loopback, reached by the real openai client through
`llm.apiBase`; OPENAI_API_KEY is removed from the environment unless a test sets it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_cli.llm.openai_models import LOCAL_PLACEHOLDER_KEY
from tests.conftest import Result, run_cli
from tests.fake_openai import FakeOpenAI
from tests.gateway_helpers import echo_last_user

SECRET = "sk-local-secret-4242"


@pytest.fixture
def echo(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A fake model answering `echo: TEXT`; no OPENAI_API_KEY anywhere in the CLI's environment."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = FakeOpenAI().start()
    server.respond_with(echo_last_user)
    try:
        yield server
    finally:
        server.stop()


def _configure(
    home: Path, llm: dict[str, object] | None, embed: FakeOpenAI | None = None, **sections: object
) -> None:
    memory: dict[str, object] = {"extraction": {"enabled": False}}  # the turns' own calls only
    if embed is not None:  # the fake's embeddings: no local model to load in every chat process
        memory["embedding"] = {
            "provider": "litellm",
            "model": "openai/text-embedding-3-small",
            "apiBase": embed.url,
            "dimensions": 64,
            "maxRetries": 0,
        }
    config: dict[str, object] = {"memory": memory, "session": {"reset": {"atHour": None}}, **sections}
    if llm is not None:
        config["llm"] = {"maxRetries": 0, "timeoutSeconds": 20, **llm}
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    (home / "openclaw.json").write_text(json.dumps(config), encoding="utf-8")


def _local(home: Path, fake: FakeOpenAI, **llm: object) -> None:
    _configure(home, {"model": "openai/local-model", "apiBase": fake.url, **llm}, fake)


def _chat(home: Path, *args: str, input: str | None = None) -> Result:
    return run_cli(home, "chat", *args, input=input)


def _chat_requests(fake: FakeOpenAI) -> list[dict[str, object]]:
    return [r.body for r in fake.requests_to("/chat/completions")]


# -- one message as an argument ---------------------------------------------------------------------


def test_one_message_prints_only_its_reply(home: Path, echo: FakeOpenAI) -> None:
    _local(home, echo)
    answered = _chat(home, "what do I drink in the morning?")
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout == "echo: what do I drink in the morning?\n"  # no banner, no prompt


def test_one_message_of_several_words_is_joined(home: Path, echo: FakeOpenAI) -> None:
    _local(home, echo)
    answered = _chat(home, "hello", "there")
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout == "echo: hello there\n"


def test_one_message_is_stored_in_the_session(home: Path, echo: FakeOpenAI) -> None:
    _local(home, echo)
    assert _chat(home, "keep this one").returncode == 0
    shown = run_cli(home, "session", "show", "agent:main:main", "--json")
    contents = [m["content"] for m in shown.json()["messages"]]
    assert contents == ["keep this one", "echo: keep this one"]


def test_model_option_overrides_the_configured_model(home: Path, echo: FakeOpenAI) -> None:
    _local(home, echo)
    answered = _chat(home, "which model?", "-m", "openai/other-model")
    assert answered.returncode == 0, answered.stderr
    assert [body["model"] for body in _chat_requests(echo)] == ["other-model"]


def test_model_option_before_the_message(home: Path, echo: FakeOpenAI) -> None:
    _local(home, echo)
    answered = _chat(home, "--model", "openai/third-model", "which model?")
    assert answered.returncode == 0, answered.stderr
    assert [body["model"] for body in _chat_requests(echo)] == ["third-model"]


def test_model_option_overrides_an_agents_own_model(home: Path, echo: FakeOpenAI) -> None:
    _configure(
        home,
        {"model": "openai/global-model", "apiBase": echo.url},
        echo,
        agents={"list": [{"id": "main", "model": "openai/agent-model", "apiBase": echo.url}]},
    )
    answered = _chat(home, "which model?", "-m", "openai/asked-model")
    assert answered.returncode == 0, answered.stderr
    assert [body["model"] for body in _chat_requests(echo)] == ["asked-model"]


def test_a_failed_model_call_is_one_error_line_and_exit_1(home: Path, echo: FakeOpenAI) -> None:
    _local(home, echo)
    echo.fail_next(1, status=500, endpoint="/chat/completions")
    answered = _chat(home, "are you there?")
    assert answered.returncode == 1
    assert answered.stdout == ""
    lines = answered.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("openclaw: error: The model did not answer")
    assert "HTTP 500" in lines[0]


def test_one_message_without_a_model_is_an_error_that_says_what_to_set(home: Path) -> None:
    _configure(home, None)
    answered = _chat(home, "anyone?")
    assert answered.returncode == 1
    assert answered.stdout == ""
    lines = answered.stderr.strip().splitlines()
    assert len(lines) == 1 and "no model is configured" in lines[0]
    assert "llm.apiBase http://127.0.0.1:PORT/v1" in lines[0]


def test_help_shows_one_shot_examples(home: Path) -> None:
    shown = run_cli(home, "chat", "--help")
    assert shown.returncode == 0
    assert 'openclaw chat "summarise my week" -m openai/gpt-4o-mini' in shown.stdout
    assert "[MESSAGE]" in shown.stdout


# -- a piped chat's exit status ---------------------------------------------------------------------


def test_a_piped_chat_whose_turns_all_fail_exits_1(home: Path, echo: FakeOpenAI) -> None:
    _local(home, echo)
    echo.fail_next(2, status=500, endpoint="/chat/completions")
    chatted = _chat(home, input="first\nsecond\n")
    assert chatted.returncode == 1
    assert chatted.stdout.count("error: The model did not answer") == 2
    assert chatted.stderr == (
        "openclaw: error: 2 of 2 message(s) got no reply: the turn failed (see above)\n"
    )


def test_a_piped_chat_with_one_failed_turn_exits_1(home: Path, echo: FakeOpenAI) -> None:
    _local(home, echo)
    echo.fail_next(1, status=500, endpoint="/chat/completions")
    chatted = _chat(home, input="first\nsecond\n")
    assert chatted.returncode == 1
    assert "echo: second" in chatted.stdout
    assert "1 of 2 message(s) got no reply" in chatted.stderr


def test_a_piped_chat_whose_turns_succeed_exits_0(home: Path, echo: FakeOpenAI) -> None:
    _local(home, echo)
    chatted = _chat(home, input="first\nsecond\n")
    assert chatted.returncode == 0, chatted.stderr
    assert "echo: first" in chatted.stdout and "echo: second" in chatted.stdout


# -- a local server and keys ------------------------------------------------------------------------


def test_a_local_server_needs_no_key(home: Path, echo: FakeOpenAI) -> None:
    """The openai package refuses to build a client without a key ("Missing credentials"); a server on
    loopback gets a placeholder it ignores."""
    _local(home, echo)
    answered = _chat(home, "no key here")
    assert answered.returncode == 0, answered.stderr
    [request] = echo.requests_to("/chat/completions")
    assert request.headers["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"


def test_the_api_key_setting_is_sent(home: Path, echo: FakeOpenAI) -> None:
    _local(home, echo, apiKey=SECRET)
    answered = _chat(home, "with a key")
    assert answered.returncode == 0, answered.stderr
    [request] = echo.requests_to("/chat/completions")
    assert request.headers["authorization"] == f"Bearer {SECRET}"


def test_an_agents_own_api_key_is_sent_to_its_server(home: Path, echo: FakeOpenAI) -> None:
    _configure(
        home,
        {"model": "openai/global", "apiBase": "http://192.0.2.1/v1", "apiKey": "sk-global-not-for-agent"},
        echo,
        agents={"list": [{"id": "main", "model": "openai/mine", "apiBase": echo.url, "apiKey": SECRET}]},
    )
    answered = _chat(home, "whose key?")
    assert answered.returncode == 0, answered.stderr
    [request] = echo.requests_to("/chat/completions")
    assert request.headers["authorization"] == f"Bearer {SECRET}"


def test_an_agents_own_server_never_gets_the_global_key(home: Path, echo: FakeOpenAI) -> None:
    _configure(
        home,
        {"model": "openai/global", "apiBase": "http://192.0.2.1/v1", "apiKey": "sk-global-not-for-agent"},
        echo,
        agents={"list": [{"id": "main", "model": "openai/mine", "apiBase": echo.url}]},
    )
    answered = _chat(home, "whose key?")
    assert answered.returncode == 0, answered.stderr
    [request] = echo.requests_to("/chat/completions")
    assert request.headers["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"


def test_a_remote_server_without_a_key_says_what_to_set(home: Path, echo: FakeOpenAI) -> None:
    # 192.0.2.1 (TEST-NET-1) is never reached: the client refuses to start without a key.
    _configure(home, {"model": "openai/remote", "apiBase": "http://192.0.2.1/v1"}, echo)
    answered = _chat(home, "anyone?")
    assert answered.returncode == 1
    lines = answered.stderr.strip().splitlines()
    assert len(lines) == 1 and "no API key" in lines[0] and "llm.apiKey" in lines[0]


def test_config_set_and_show_never_print_the_key(home: Path) -> None:
    _configure(home, None)
    set_it = run_cli(home, "config", "set", "llm.apiKey", SECRET)
    assert set_it.returncode == 0, set_it.stderr
    assert set_it.stdout == "llm.apiKey = ***\n"
    assert SECRET in (home / "openclaw.json").read_text(encoding="utf-8")  # kept where it was put
    for args in (("config", "show"), ("config", "show", "--json"), ("config", "get", "llm.apiKey")):
        shown = run_cli(home, *args)
        assert shown.returncode == 0, shown.stderr
        assert SECRET not in shown.stdout + shown.stderr and "***" in shown.stdout


def test_an_agents_key_is_masked_too(home: Path) -> None:
    _configure(home, None, agents={"list": [{"id": "main", "apiKey": SECRET}]})
    shown = run_cli(home, "config", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    assert SECRET not in shown.stdout
    assert shown.json()["agents"]["list"][0]["apiKey"] == "***"


def test_the_no_model_hint_says_what_a_local_server_needs(home: Path) -> None:
    _configure(home, None)
    chatted = _chat(home, input="hello\n")
    assert chatted.returncode == 0, chatted.stderr  # no model is not a failed turn: nothing was asked
    out = " ".join(chatted.stdout.split())
    assert "llm.apiBase http://127.0.0.1:PORT/v1" in out and "no key is needed" in out
    assert "llm.apiKey" in out


# -- through the home's gateway ---------------------------------------------------------------------


def test_one_message_through_the_homes_gateway(home: Path, echo: FakeOpenAI) -> None:
    from tests.gateway_helpers import running_gateway, write_config

    write_config(home, echo, memory={"extraction": {"enabled": False}})
    with running_gateway(home):
        answered = _chat(home, "hello gateway")
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout == "echo: hello gateway\n"


def test_one_message_through_a_gateway_without_a_model_is_an_error(home: Path) -> None:
    from tests.gateway_helpers import running_gateway, write_config

    write_config(home, None, llm={"model": None}, memory={"extraction": {"enabled": False}})
    with running_gateway(home):
        answered = _chat(home, "anyone?")
    assert answered.returncode == 1
    assert answered.stdout == ""
    lines = answered.stderr.strip().splitlines()
    assert len(lines) == 1 and "no model is configured" in lines[0]
