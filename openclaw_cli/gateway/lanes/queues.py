"""Lanes (seed 003 §6): one queue per session, one run at a time in it, and a global cap on runs.

What a message does when its session already has work (`gateway.queue.mode`, default collect):

- collect: it joins the newest turn that has not started (texts joined by blank lines, in order). A
  message to an idle session (nothing running, nothing waiting on its lane) starts at once: it waits for
  no debounce. One that arrives while a run is busy starts a turn that runs after it and waits until no
  message has arrived for `debounceMs`, so what people send during a run becomes one turn.
- followup: it becomes its own turn, run after everything before it.
- queue: the legacy one-message-at-a-time form: its own turn, in order, like followup.
- steer: it is steered into the running turn (or, when none runs, the earliest waiting one), with no
  debounce: the turn stores it as a user message of its own and sends it with its next model call,
  the first one or the one after a tool result (agent/turn/steering.py), and the run goes on; one reply
  answers everything. When the turn has no model call left (its final reply is streaming), the message
  is not lost: it runs next as a followup turn, ahead of anything queued after it (several such
  messages share that turn, each stored separately). Its ack is the run it was steered into; that
  run's final `chat` event names the followup (`followupRunId`) when there is one. If the run is
  cancelled, its steered messages share its fate: stored, not answered. A command (`/new`,
  `/compact`...) is never steered: it is its own turn.
- steer-backlog: steered like steer, and also kept as a followup turn of its own, queued at once,
  that answers it again (so two replies: the run's and its own). The session still holds the message
  once: when the run took it, the followup answers the stored message (the runtime's replay_idx)
  instead of storing it again; when the run did not take it, the followup simply stores and answers
  it (and no extra followup is made). With no turn to steer into, it is just its own turn.
- interrupt: the running turn is cancelled (the runtime stores the user's message, drops the reply, and
  reports "aborted"); the new message runs next. Nothing queued is dropped.

Whatever the mode, a turn is one person's (its `user_id`, whose memory it reads and writes): in a group,
a message from somebody else never joins or steers into another person's turn; it becomes its own.

A session's messages are stored in the order they arrived, except that a steered message goes into
the running turn ahead of turns already queued (that is what steering is for). Runs across all
sessions are capped by `agents.maxConcurrent` (run_limiter.py); the cap can change while the gateway runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from openclaw_cli.agent.turn.commands import parse_command
from openclaw_cli.agent.turn.requests import EventSink, TurnRequest, TurnResult
from openclaw_cli.agent.turn.steering import SteeredMessage, Steering
from openclaw_cli.gateway.lanes.run_limiter import RunLimiter

QUEUE_MODES = ("collect", "followup", "queue", "steer", "steer-backlog", "interrupt")
Runner = Callable[[TurnRequest, EventSink, asyncio.Event], Awaitable[TurnResult]]
Listener = Callable[[str, dict[str, Any]], None]  # (event name, payload), called on the event loop


# When the frame or request carrying the message being handled was read (time.monotonic(), which on
# Linux is CLOCK_MONOTONIC, the clock time.perf_counter() reads too): lets a client on the same host
# separate time spent waiting to be read from the gateway's own work.
RECEIVED_AT: ContextVar[float | None] = ContextVar("received_at", default=None)


def new_run_id() -> str:
    return "run-" + uuid.uuid4().hex[:16]


@dataclass
class Message:
    text: str
    sender: str | None = None
    journal_id: str | None = None  # its line in the inbox journal, marked done when the turn ends
    received_at: float = field(default_factory=lambda: RECEIVED_AT.get() or time.monotonic())


@dataclass
class Steered:
    """A message steered into a turn: what the runtime sees, and the lane's own bookkeeping."""

    message: Message
    item: SteeredMessage
    listener: Listener | None
    backlog: Turn | None = None  # steer-backlog: the followup turn that answers it again


@dataclass
class Turn:
    agent_id: str
    session_key: str
    mode: str
    run_id: str = field(default_factory=new_run_id)
    messages: list[Message] = field(default_factory=list)
    listeners: list[Listener] = field(default_factory=list)
    user_id: str | None = None
    ready_at: float = 0.0  # monotonic time before which it must not start (collect's debounce)
    debounced: bool = False  # collect, made while its lane was busy: each message joining it waits anew
    created_at: float = field(default_factory=time.monotonic)
    started_at: float = 0.0
    ended_at: float = 0.0
    started: bool = False
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    steering: Steering = field(default_factory=Steering, repr=False)
    steered: list[Steered] = field(default_factory=list, repr=False)
    replay: Message | None = None  # steer-backlog: the one message it answers again
    replay_idx: int | None = None  # where the steered run stored it (None: not taken, store it)
    done: asyncio.Future[TurnResult] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    @property
    def text(self) -> str:
        """The messages joined in order; when several people spoke (a group), each line says who."""
        if len({m.sender for m in self.messages}) > 1:
            return "\n\n".join(f"{m.sender or 'unknown'}: {m.text}" for m in self.messages)
        return "\n\n".join(m.text for m in self.messages)

    @property
    def sender(self) -> str | None:
        senders = {m.sender for m in self.messages}
        return self.messages[0].sender if len(senders) == 1 else None

    def publish(self, event: str, payload: dict[str, Any]) -> None:
        for listener in list(self.listeners):
            listener(event, payload)


@dataclass
class Lane:
    key: tuple[str, str]  # (agentId, sessionKey)
    pending: deque[Turn] = field(default_factory=deque)
    current: Turn | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    worker: asyncio.Task[None] | None = None


class LaneManager:
    def __init__(
        self,
        runner: Runner,
        limiter: RunLimiter,
        *,
        debounce_ms: int = 1000,
        on_turn_done: Callable[[Turn, TurnResult], None] | None = None,
    ) -> None:
        self.runner = runner
        self.limiter = limiter
        self.debounce_ms = debounce_ms
        self.on_turn_done = on_turn_done
        self.lanes: dict[tuple[str, str], Lane] = {}
        self.runs: dict[str, Turn] = {}  # run id -> turn, while queued or running

    # ------------------------------------------------------------------ submitting

    def submit(
        self,
        agent_id: str,
        session_key: str,
        message: Message,
        mode: str,
        *,
        listener: Listener | None = None,
        user_id: str | None = None,
    ) -> Turn:
        """Queue `message` on its session's lane under `mode`; the turn it joined (its run id is the ack)."""
        if mode not in QUEUE_MODES:
            raise ValueError(f"unknown queue mode {mode!r}")
        lane = self._lane(agent_id, session_key)
        waiting = [turn for turn in lane.pending if not turn.started]
        now = time.monotonic()
        target = self._steer_target(lane) if mode in ("steer", "steer-backlog") else None
        # A turn reads and writes one person's memory: another person's message is a turn of its own.
        if target is not None and target.user_id != user_id:
            target = None
        if target is not None and parse_command(message.text) is None:
            turn = self._steer(lane, target, message, mode, listener, user_id, now)
        elif (
            mode == "collect" and waiting and waiting[-1].mode == "collect" and waiting[-1].user_id == user_id
        ):
            turn = waiting[-1]
            if turn.debounced:
                turn.ready_at = now + self.debounce_ms / 1000
            self._join(turn, message, listener)
        else:
            if mode == "interrupt" and lane.current is not None:
                lane.current.cancel.set()
            turn = self._new_turn(lane, agent_id, session_key, mode, now, user_id)
            self._join(turn, message, listener)
        lane.wake.set()
        if lane.worker is None:
            lane.worker = asyncio.get_running_loop().create_task(self._drain(lane))
        return turn

    @staticmethod
    def _steer_target(lane: Lane) -> Turn | None:
        """The running turn while it still takes messages, else the earliest waiting one."""
        candidates = [lane.current] if lane.current is not None else []
        candidates += [t for t in lane.pending if not t.started and t.replay is None]
        for turn in candidates:
            if not turn.cancel.is_set() and not turn.steering.closed:
                return turn
        return None

    def _steer(
        self,
        lane: Lane,
        target: Turn,
        message: Message,
        mode: str,
        listener: Listener | None,
        user_id: str | None,
        now: float,
    ) -> Turn:
        """Offer the message to `target`; the turn whose run id acknowledges it."""
        item = SteeredMessage(message.text, message.sender)
        if not target.steering.offer(item):  # closed in between: its own turn
            turn = self._new_turn(lane, target.agent_id, target.session_key, "followup", now, user_id)
            self._join(turn, message, listener)
            return turn
        steered = Steered(message, item, listener)
        target.steered.append(steered)
        if listener is not None and listener not in target.listeners:
            target.listeners.append(listener)
        if mode != "steer-backlog":
            return target
        backlog = self._new_turn(lane, target.agent_id, target.session_key, "followup", now, user_id)
        backlog.replay = message
        self._join(backlog, message, listener)
        steered.backlog = backlog
        return backlog

    def _lane(self, agent_id: str, session_key: str) -> Lane:
        key = (agent_id, session_key)
        lane = self.lanes.get(key)
        if lane is None:
            lane = self.lanes[key] = Lane(key)
        return lane

    def _new_turn(
        self,
        lane: Lane,
        agent_id: str,
        session_key: str,
        mode: str,
        now: float,
        user_id: str | None,
        *,
        first: bool = False,
    ) -> Turn:
        # collect waits only behind a busy lane: an idle session's message has nothing to gather.
        debounced = mode == "collect" and (lane.current is not None or bool(lane.pending))
        delay = self.debounce_ms / 1000 if debounced else 0.0
        turn = Turn(agent_id, session_key, mode, user_id=user_id, ready_at=now + delay, debounced=debounced)
        if first:
            lane.pending.appendleft(turn)
        else:
            lane.pending.append(turn)
        self.runs[turn.run_id] = turn
        return turn

    @staticmethod
    def _join(turn: Turn, message: Message, listener: Listener | None) -> None:
        turn.messages.append(message)
        if listener is not None and listener not in turn.listeners:
            turn.listeners.append(listener)

    # ------------------------------------------------------------------ running

    async def _drain(self, lane: Lane) -> None:
        try:
            while lane.pending:
                turn = lane.pending[0]
                delay = turn.ready_at - time.monotonic()
                if delay > 0:
                    lane.wake.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(lane.wake.wait(), delay)
                    continue  # a new message may have pushed the debounce further
                await self.limiter.acquire()
                try:
                    lane.pending.popleft()
                    turn.started, turn.started_at = True, time.monotonic()
                    lane.current = turn
                    result = await self._run(turn)
                    turn.ended_at = time.monotonic()
                finally:
                    lane.current = None
                    await self.limiter.release()
                followup = self._settle_steered(lane, turn)
                self._finish(turn, result, followup)
        finally:
            lane.worker = None
            if not lane.pending and self.lanes.get(lane.key) is lane:
                del self.lanes[lane.key]

    async def _run(self, turn: Turn) -> TurnResult:
        request = TurnRequest(
            turn.agent_id,
            turn.session_key,
            turn.text,
            turn.run_id,
            sender=turn.sender,
            user_id=turn.user_id,
            steering=turn.steering,
            replay_idx=turn.replay_idx,
        )

        def emit(kind: str, payload: dict[str, Any]) -> None:
            base = {"runId": turn.run_id, "sessionKey": turn.session_key}
            if kind == "delta":
                turn.publish("chat", {**base, "state": "delta", "text": payload.get("text", "")})
            else:
                turn.publish(kind, {**base, **payload})

        try:
            return await self.runner(request, emit, turn.cancel)
        except Exception as exc:  # noqa: BLE001 - one failed turn must not stop the lane
            return TurnResult(turn.run_id, "", "error", error=f"{exc.__class__.__name__}: {exc}")

    def _settle_steered(self, lane: Lane, turn: Turn) -> Turn | None:
        """After a run: what it took is its own; what it did not take runs next (the followup made)."""
        turn.steering.close()
        taken = {id(item) for item in turn.steering.taken}
        leftovers: list[Steered] = []
        for steered in turn.steered:
            if id(steered.item) in taken:
                turn.messages.append(steered.message)  # stored by this run: its journal line is done
                if steered.backlog is not None:
                    steered.backlog.replay_idx = steered.item.stored_idx
            elif steered.backlog is None:  # a backlog turn stores and answers it already
                leftovers.append(steered)
        if not leftovers:
            return None
        first = leftovers[0]
        now = time.monotonic()
        followup = self._new_turn(
            lane, turn.agent_id, turn.session_key, "followup", now, turn.user_id, first=True
        )
        if turn.cancel.is_set():
            followup.cancel.set()  # they share the fate of the run they were steered into: stored, aborted
        self._join(followup, first.message, first.listener)
        for steered in leftovers[1:]:
            followup.steering.offer(steered.item)
            followup.steered.append(steered)
            if steered.listener is not None and steered.listener not in followup.listeners:
                followup.listeners.append(steered.listener)
        return followup

    def _finish(self, turn: Turn, result: TurnResult, followup: Turn | None = None) -> None:
        self.runs.pop(turn.run_id, None)
        for notice in result.notices:
            turn.publish("notice", {"runId": turn.run_id, "sessionKey": turn.session_key, "text": notice})
        state = {"ok": "final", "error": "error", "aborted": "aborted"}[result.status]
        text = result.reply if result.status == "ok" else (result.error or "")
        turn.publish(
            "chat",
            {
                "runId": turn.run_id,
                "sessionKey": turn.session_key,
                "state": state,
                "text": text,
                "sessionId": result.session_id,
                "usage": result.usage_dict(),  # the model's token counts and cost, summed over the run
                # messages steered in too late for this run's model calls run next in this turn
                **({"followupRunId": followup.run_id} if followup is not None else {}),
                # waiting (lane, debounce, global cap) and running (the runtime: session files and the
                # model), so a client can tell the gateway's own share of a turn's latency
                "queuedMs": round((turn.started_at - turn.created_at) * 1000, 3),
                "runMs": round((turn.ended_at - turn.started_at) * 1000, 3),
                "timings": {  # monotonic seconds: last message read, turn created, started, ended
                    "receivedAt": turn.messages[-1].received_at,
                    "createdAt": turn.created_at,
                    "startedAt": turn.started_at,
                    "endedAt": turn.ended_at,
                    "stages": {name: round(ms, 3) for name, ms in result.stages.items()},  # agent/turn/stages.py
                },
            },
        )
        if self.on_turn_done is not None:
            self.on_turn_done(turn, result)
        if not turn.done.done():
            turn.done.set_result(result)

    # ------------------------------------------------------------------ control

    def abort(self, run_id: str | None = None, session: tuple[str, str] | None = None) -> list[str]:
        """Cancel a run by id, or everything queued and running on a session's lane; the run ids hit."""
        turns: list[Turn] = []
        if run_id is not None and run_id in self.runs:
            turns.append(self.runs[run_id])
        if session is not None and session in self.lanes:
            lane = self.lanes[session]
            turns.extend([lane.current] if lane.current else [])
            turns.extend(lane.pending)
        for turn in turns:
            turn.cancel.set()
            turn.ready_at = 0.0
        for lane in self.lanes.values():
            lane.wake.set()
        return [turn.run_id for turn in turns]

    def running(self) -> list[asyncio.Future[TurnResult]]:
        """The completion futures of the turns running now."""
        return [lane.current.done for lane in self.lanes.values() if lane.current is not None]

    def busy(self) -> dict[str, int]:
        queued = sum(len(lane.pending) for lane in self.lanes.values())
        running = sum(1 for lane in self.lanes.values() if lane.current is not None)
        return {"lanes": len(self.lanes), "running": running, "queued": queued}

    async def wait_idle(self) -> None:
        workers = [lane.worker for lane in self.lanes.values() if lane.worker is not None]
        if workers:
            await asyncio.gather(*workers, return_exceptions=True)
