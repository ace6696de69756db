"""One agent turn, step by step (issue 10):

1. resolve the session (reset rules, `/new` and `/reset`), telling the user when a new one started;
2. load the workspace files; 3. retrieve memories (FSRS hits) into the memory block;
4. fit the history to the context window (old tool results cut first, a sliding window of whole tool
   units, a summary of what came before once the history passes the threshold);
5. stream the model's reply through llm.py, running the memory tools it calls (replies.py); before each
   model call, the messages steered into the turn (request.steering) are stored and join the context;
6. append every message; 7. schedule extraction.

It runs in a worker thread (all of it blocks: files, SQLite, HTTP); events go out through `sink`.
A model failure is reported to the user, and the user's message stays stored. Compaction with the
agent's model is summarise.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from openclaw_cli.agent import context as prompt_context
from openclaw_cli.agent.compaction import CompactionResult
from openclaw_cli.agent.summarise import compact, describe_compaction
from openclaw_cli.agent.tools.builtin import tool_specs
from openclaw_cli.agent.turn import plugin_hooks
from openclaw_cli.agent.turn.commands import parse_command
from openclaw_cli.agent.turn.history import History, compaction_due, read_history
from openclaw_cli.agent.turn.memory_steps import flush, remember_now, schedule_extraction
from openclaw_cli.agent.turn.private_notes import notes_private
from openclaw_cli.agent.turn.replies import run_tools, stream_reply
from openclaw_cli.agent.turn.requests import NO_MODEL, EventSink, TurnRequest, TurnResult
from openclaw_cli.agent.turn.stages import span
from openclaw_cli.agent.turn.state import Cancel, TurnContext
from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.sessions.keys import parse_key

if TYPE_CHECKING:
    from openclaw_cli.agent.services import AgentServices
    from openclaw_cli.config.loading import Settings

MAX_TOOL_ROUNDS = 4  # model calls per turn that may ask for tools; the last one must answer
MEMORY_CONTEXT_MESSAGES = 6  # recent messages the memory query also looks at


def run_turn(
    services: AgentServices,
    settings: Settings,
    request: TurnRequest,
    sink: EventSink,
    cancel: Cancel,
    now: Callable[[], datetime],
) -> TurnResult:
    turn = TurnContext(services, settings, request, sink, cancel, now, TurnResult(request.run_id, "", "ok"))
    if plugin_hooks.holds_deltas(turn):
        turn.sink = plugin_hooks.HeldDeltas(sink)  # the reply goes out once message_sending had its say
    try:
        return _run(turn)
    finally:
        if request.steering is not None:
            request.steering.close()  # what was not taken goes back to the caller (a followup)
        plugin_hooks.turn_end(turn)


def _run(turn: TurnContext) -> TurnResult:
    request, settings = turn.request, turn.settings
    replay = _replayed_message(turn) if request.replay_idx is not None else None
    if replay is not None:
        session_id = turn.result.session_id
        model = settings.llm.model
        if model is None:
            _take_steered(turn, session_id)  # stored, like the question, though nothing answers
            turn.notice(NO_MODEL)
        else:
            _answer(turn, session_id, model, replay)
        schedule_extraction(turn, session_id)
        return turn.result
    if not _plugins_received(turn):
        return turn.result
    request = turn.request
    command = parse_command(request.text)
    if command is not None and command.name == "compact":
        return _compact_command(turn)
    if command is not None and command.name == "skill" and _skill_refused(turn, command.rest):
        return turn.result
    if command is not None and command.name in ("new", "reset"):
        session_id, stored = _start_new_session(turn, command.rest)
        if stored is None:
            return turn.result  # nothing to answer: the new session is empty, the user told
        message = stored
    else:
        with span(turn.result.stages, "session append"):
            session_id, message = _append_user_message(turn)
    with span(turn.result.stages, "remember now"):
        remember_now(turn, session_id, message)
    model = settings.llm.model
    if model is None:
        _take_steered(turn, session_id)
        turn.notice(NO_MODEL)
    else:
        _answer(turn, session_id, model)
    with span(turn.result.stages, "extraction scheduling"):
        schedule_extraction(turn, session_id)
    return turn.result


# -- step 1: the session ----------------------------------------------------------------------------


def _plugins_received(turn: TurnContext) -> bool:
    """message_received: the plugins may rewrite the message, or cancel it (then nothing is stored)."""
    text = plugin_hooks.received(turn)
    if text is None:
        turn.notice("A plugin held this message back: it was not stored or answered.")
        return False
    if text != turn.request.text:
        turn.request = dataclasses.replace(turn.request, text=text)
    return True


def _append_user_message(turn: TurnContext) -> tuple[str, dict[str, Any]]:
    request = turn.request
    appended = turn.services.manager.append(
        request.session_key,
        "user",
        request.text,
        turn.now(),
        sender=request.sender,
        user_id=request.user_id,
        anonymous=request.user_id is None,
    )
    turn.result.session_id = appended.session_id
    turn.result.user_message_idx = int(appended.message["idx"])
    if appended.new_session and appended.reason != "created":
        turn.notice(f"A new session started ({appended.reason}); the earlier one is archived.")
    if appended.previous_session_id is not None:
        flush(turn, appended.previous_session_id, None)  # its last facts, before they are out of reach
        plugin_hooks.session_event(turn, "session_end", appended.previous_session_id, str(appended.reason))
    if appended.new_session:
        plugin_hooks.session_event(turn, "session_start", appended.session_id, str(appended.reason))
    return appended.session_id, appended.message


def _replayed_message(turn: TurnContext) -> dict[str, Any] | None:
    """The stored message a replay turn answers again; None (store it anew) if it is out of reach."""
    services, request = turn.services, turn.request
    session_id = services.sessions.current_session_id(services.manager.key(request.session_key))
    if session_id is None:
        return None
    for message in reversed(services.sessions.read_messages(session_id).messages):
        if message.get("idx") == request.replay_idx and message.get("role") == "user":
            turn.result.session_id = session_id
            turn.result.user_message_idx = request.replay_idx
            return message
    return None


def _take_steered(turn: TurnContext, session_id: str) -> None:
    """Store the messages steered in since the last model call, in order, as the user's messages."""
    steering = turn.request.steering
    if steering is None:
        return
    for item in steering.take():
        stored = turn.services.sessions.append(
            session_id,
            "user",
            item.text,
            turn.now(),
            sender=item.sender,
            user_id=turn.request.user_id,
            anonymous=turn.request.user_id is None,
        )
        item.stored_idx = int(stored["idx"])
        turn.appended += 1
        remember_now(turn, session_id, stored)


def _start_new_session(turn: TurnContext, rest: str) -> tuple[str, dict[str, Any] | None]:
    """`/new` or `/reset`: flush the current session to memory and archive it. The command is not a
    message: the new session starts empty, or with `rest` (`/new TEXT`) as its first user message."""
    services, request = turn.services, turn.request
    key = services.manager.key(request.session_key)
    current = services.sessions.current_session_id(key)
    if current is not None:
        flush(turn, current, None)
    meta, previous = services.manager.new(key, turn.now(), request.user_id)
    session_id = str(meta["sessionId"])
    turn.result.session_id = session_id
    if previous:
        plugin_hooks.session_event(turn, "session_end", str(previous), "new")
    plugin_hooks.session_event(turn, "session_start", session_id, "new")
    archived = f"; {previous} is archived" if previous else ""
    turn.notice(f"Started a new session {session_id}{archived}.")
    if not rest:
        return session_id, None
    stored = services.sessions.append(
        session_id,
        "user",
        rest,
        turn.now(),
        sender=request.sender,
        user_id=request.user_id,
        anonymous=request.user_id is None,
    )
    turn.result.user_message_idx = int(stored["idx"])
    return session_id, stored


def _compact_command(turn: TurnContext) -> TurnResult:
    key = turn.services.manager.key(turn.request.session_key)
    session_id = turn.services.sessions.current_session_id(key)
    if session_id is None:
        turn.notice("Nothing to compact: this conversation has no session yet.")
        return turn.result
    turn.result.session_id = session_id
    try:
        outcome = compact(
            turn.services, turn.settings, session_id, turn.now(), force=True, user_id=turn.request.user_id
        )
    except OpenclawError as exc:
        turn.result.status, turn.result.error = "error", f"compaction failed: {exc.message}"
        return turn.result
    turn.notice(describe_compaction(outcome))
    return turn.result


# -- steps 2-6: the prompt and the model ---------------------------------------------------------------


def _system_prompt(turn: TurnContext, session_id: str, recent: list[dict[str, Any]]) -> str:
    services, request = turn.services, turn.request
    files: list[Any] = []
    memory_text = ""
    stages = turn.result.stages
    try:
        from openclaw_cli.memory.workspace.files import session_files

        key = parse_key(services.manager.key(request.session_key))
        turn.notes = notes_private(turn.settings, key, request.user_id, recent)
        with span(stages, "workspace files"):
            files = session_files(
                services.home,
                services.agent_id,
                turn.settings.memory,
                private=turn.notes,
                today=turn.now().date(),
            )
    except OpenclawError as exc:
        turn.notice(f"Workspace files were not loaded: {exc.message}")
    try:
        from openclaw_cli.memory.inject import build_memory_block

        # The lock is taken for each search, not across the model's expansion (seconds at worst).
        with span(stages, "memory injection"):
            block = build_memory_block(
                services.memory,
                turn.settings.memory.inject,
                query=_said(request.text),
                messages=recent[-MEMORY_CONTEXT_MESSAGES:],
                user_id=request.user_id,
                now=turn.now(),
                expander=turn.expander(),
                lock=services.memory_lock,
                notes=turn.notes,
            )
        memory_text = block.text
        turn.result.memory_ids = list(block.record_ids)
    except OpenclawError as exc:
        turn.notice(f"Memories were not retrieved: {exc.message}")
    system = prompt_context.system_text(services.agent_id, files, memory_text) + _skills_section(turn)
    blocks = plugin_hooks.prompt_blocks(turn, session_id)  # before_prompt_build: the plugins' blocks
    return "\n\n".join([system, *blocks]) if blocks else system


def _skills_section(turn: TurnContext) -> str:
    """The Skills list, and the body of a skill the user invoked with `/skill NAME` (skills/service.py)."""
    command = parse_command(turn.request.text)
    invoked = command.rest.split()[0] if command and command.name == "skill" and command.rest else None
    with span(turn.result.stages, "skills"):
        try:
            return turn.skill_view().system_section(invoked, turn.now().timestamp())
        except OpenclawError as exc:
            turn.notice(f"Skills were not loaded: {exc.message}")
            return ""


def _skill_refused(turn: TurnContext, rest: str) -> bool:
    """`/skill` without a usable skill's name: answered with what to do, the model is not called."""
    refusal = turn.skill_view().refusal(rest.split()[0] if rest else "")
    if refusal is not None:
        turn.sink("delta", {"text": refusal})
        turn.result.reply = refusal
    return refusal is not None


def _said(text: str) -> str:
    """What the user said in a message: `/new TEXT` said TEXT (the command word is no memory query),
    `/skill NAME TEXT` said TEXT."""
    command = parse_command(text)
    if command is not None and command.name == "skill":
        said = command.rest.split(maxsplit=1)[1:]
        return said[0] if said else text
    return command.rest if command is not None and command.name in ("new", "reset") else text


def _prompt(
    turn: TurnContext, session_id: str, system: str, history: History | None
) -> prompt_context.Prompt:
    """The round's messages: from `history` when it is still current, else read anew."""
    history = history or read_history(turn, session_id)
    with span(turn.result.stages, "context assembly"):
        budget = prompt_context.history_budget(turn.settings.llm.context_tokens, system, _tools(turn))
        group = parse_key(turn.services.manager.key(turn.request.session_key)).kind == "group"
        context = turn.settings.session.context
        return prompt_context.assemble(
            system,
            history.messages,
            history.summary,
            history.checkpoint,
            budget,
            group=group,
            strategy=context.prune_strategy,
            keep_recent_turns=context.keep_recent_turns,
        )


def _answer(turn: TurnContext, session_id: str, model: str, replay: dict[str, Any] | None = None) -> None:
    turn.model = model
    try:
        _model_rounds(turn, session_id, model, replay)
    finally:
        with span(turn.result.stages, "usage totals"):
            _add_usage(turn, session_id)


def _add_usage(turn: TurnContext, session_id: str) -> None:
    """Add the tokens (and cost) the turn's model calls used to the session's meta.json totals, and
    record the model as the session's latest, after the reply (agent/after_turn.py): a durable rewrite of
    meta.json the reply need not wait for."""
    used = turn.result.usage
    if used is None and turn.model is None:
        return
    store = turn.services.sessions
    model = turn.model

    def add() -> None:
        if used is None:
            store.writer(session_id).add_usage(0, 0, None, model=model)
        else:
            store.writer(session_id).add_usage(
                used.prompt_tokens, used.completion_tokens, used.cost, model=model
            )

    turn.services.after_turn.submit(f"adding usage to session {session_id}'s totals", add)


def _model_rounds(
    turn: TurnContext, session_id: str, model: str, replay: dict[str, Any] | None = None
) -> None:
    from openclaw_cli.llm.errors import ContextOverflow, ModelUnavailable

    stages = turn.result.stages
    first = read_history(turn, session_id)  # one read for the memory query, the check, the first round
    system = _system_prompt(turn, session_id, first.messages)
    budget = prompt_context.history_budget(turn.settings.llm.context_tokens, system, _tools(turn))
    history: History | None = first
    with span(stages, "compaction check"):
        if compaction_due(turn, first, budget) and _compact_if_due(turn, session_id, budget):
            history = None  # the summary changed
    retried = False
    for _round in range(MAX_TOOL_ROUNDS):
        stored = turn.appended
        _take_steered(turn, session_id)
        if turn.appended != stored:
            history = None  # steered messages joined the session
        if turn.cancel.is_set():  # no model call for a turn already cancelled
            turn.result.status = "aborted"
            return None
        prompt = _prompt(turn, session_id, system, history)
        history = None  # a later round follows the tool results this one stores
        messages = prompt.messages if replay is None else _with_replay(turn, prompt.messages, replay)
        tools = _tools(turn) if _round < MAX_TOOL_ROUNDS - 1 else []
        try:
            with span(stages, "model call"):
                text, calls = stream_reply(turn, model, messages, tools)
        except ContextOverflow as exc:
            if retried:
                return _fail(turn, exc.message)
            retried = True  # flush + compact, then the same round once more
            try:
                _compact(turn, session_id, budget, force=True)
            except OpenclawError as failure:
                return _fail(turn, f"{exc.message}; compaction failed too: {failure.message}")
            continue
        except ModelUnavailable as exc:
            return _fail(turn, exc.message)
        if turn.cancel.is_set():
            turn.result.status = "aborted"
            return None
        if not calls:
            return _reply(turn, session_id, text)
        run_tools(turn, session_id, text, calls)
    return _fail(turn, "the model kept calling tools without answering")


def _tools(turn: TurnContext) -> list[dict[str, Any]]:
    """The built-in tools (skill_read when the agent has a skill), and the plugin tools it allows."""
    builtin = tool_specs(skills=turn.skills is not None and bool(turn.skills.available))
    extra = plugin_hooks.tool_specs(turn)
    return [*builtin, *extra] if extra else builtin


def _reply(turn: TurnContext, session_id: str, text: str) -> None:
    """Store the model's reply as the turn's answer, after message_sending (which may rewrite or cancel it)."""
    sent = plugin_hooks.sending(turn, text)
    if sent is None:
        turn.notice("A plugin held the reply back: it was not stored or sent.")
        return None
    with span(turn.result.stages, "reply append"):
        turn.services.sessions.append(
            session_id, "assistant", sent, turn.now(), model=turn.model, tokens=turn.reply_tokens()
        )
    turn.result.reply = sent
    if isinstance(turn.sink, plugin_hooks.HeldDeltas) and sent:
        turn.sink.sink("delta", {"text": sent})
    return None


def _with_replay(
    turn: TurnContext, messages: list[dict[str, Any]], replay: dict[str, Any]
) -> list[dict[str, Any]]:
    """The context with the replayed question asked again just before what this turn stored."""
    group = parse_key(turn.services.manager.key(turn.request.session_key)).kind == "group"
    at = max(1, len(messages) - turn.appended)
    return [*messages[:at], prompt_context.to_chat_message(replay, group=group), *messages[at:]]


def _compact(turn: TurnContext, session_id: str, budget: int, *, force: bool) -> CompactionResult:
    """Flush and summarise this turn's session (forced after a context overflow, else when due)."""
    return compact(
        turn.services,
        turn.settings,
        session_id,
        turn.now(),
        force=force,
        history_budget=budget,
        user_id=turn.request.user_id,
    )


def _compact_if_due(turn: TurnContext, session_id: str, budget: int) -> bool:
    """Compact when the rule, checked again under the compaction lock, says so; whether it did."""
    try:
        outcome = _compact(turn, session_id, budget, force=False)
    except OpenclawError as exc:
        turn.notice(f"The older messages could not be summarised ({exc.message}); the newest are sent.")
        return False
    if outcome.compacted:
        turn.result.compacted = True
    return outcome.compacted


def _fail(turn: TurnContext, message: str) -> None:
    turn.result.status = "error"
    turn.result.error = f"The model did not answer: {message}. Your message is kept; try again."
