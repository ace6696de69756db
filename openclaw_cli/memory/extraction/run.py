"""Extraction of long-term memories from conversations (seed 000 §6.1, seed 003 §4.1).

After an agent turn, `note_turn` schedules an extraction in the background: turns within
`memory.extraction.coalesceSeconds` share one run, and a session gets at most `maxPerHour` automatic
runs per hour (runs beyond wait; their messages are not lost, the checkpoint keeps them). Each run takes
the messages from the session's checkpoint on, asks the extraction model for memories (one request per
speaker in a group chat, written to that speaker's user memory), writes them through
`writing.write_memories`, and only then moves the checkpoint. Without a model, or when it fails, the
explicit patterns of `extraction/patterns.py` still produce memories, and the failure is reported once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from openclaw_cli.llm import calls as llm
from openclaw_cli.memory.extraction import candidates as harvest
from openclaw_cli.memory.extraction.prompt import ExtractionReply, chunks, extraction_messages
from openclaw_cli.memory.extraction.schedule import CoalescingScheduler
from openclaw_cli.memory.extraction.state import ExtractionState, read_state, write_state
from openclaw_cli.memory.store.records import utc_now
from openclaw_cli.memory.writing.candidate import WriteOutcome
from openclaw_cli.memory.writing.llm_judge import LlmJudge, extraction_model
from openclaw_cli.memory.writing.write_path import write_memories
from openclaw_cli.sessions.locks import ProcessLock, lock_for

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.sessions.store import SessionStore

# Only what people said and what the assistant answered carries memories; tool output and system
# prompts do not.
EXTRACTED_ROLES = ("user", "assistant")
# progress(messages done since the last call, messages in the run)
Progress = Callable[[int, int], None]


@dataclass
class ExtractionReport:
    """One extraction run: its messages [start, end), what was written, and how."""

    session_id: str
    start: int
    end: int
    outcomes: list[WriteOutcome] = field(default_factory=list)
    used_model: bool = False
    used_patterns: bool = False
    # Why the model could not be used; set on the first failed run of a streak only (reported once).
    model_error: str | None = None
    model_failed: bool = False
    notes: list[str] = field(default_factory=list)
    dry_run: bool = False
    # Set when an automatic run was postponed by the hourly limit.
    deferred_until: datetime | None = None

    @property
    def method(self) -> str:
        if self.used_model and self.used_patterns:
            return "model+patterns"
        return "model" if self.used_model else "patterns" if self.used_patterns else "none"

    def public_dict(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "messages": {"start": self.start, "end": self.end},
            "method": self.method,
            "modelError": self.model_error,
            "modelFailed": self.model_failed,
            "dryRun": self.dry_run,
            "deferredUntil": self.deferred_until.isoformat() if self.deferred_until else None,
            "outcomes": [outcome.public_dict() for outcome in self.outcomes],
            "notes": self.notes,
        }


class ExtractionService:
    """Extraction for one agent's sessions. Thread-safe; one background worker per service."""

    def __init__(
        self,
        home: Home,
        agent_id: str,
        settings: Settings,
        memory: MemoryService,
        sessions: SessionStore,
        *,
        clock: Callable[[], datetime] = utc_now,
        on_report: Callable[[ExtractionReport], None] | None = None,
        on_error: Callable[[str, BaseException], None] | None = None,
    ) -> None:
        """`on_report` receives every background run's report; `on_error` what a background run raised."""
        self.home = home
        self.agent_id = agent_id
        self.settings = settings
        self.memory = memory
        self.sessions = sessions
        self.clock = clock
        self.on_report = on_report
        self.model = extraction_model(settings.llm)
        self._failing: str | None = None
        self._users: dict[str, str | None] = {}
        self._background_memory: MemoryService | None = None
        self._unstored: dict[str, list[WriteOutcome]] = {}
        self._unstored_lock = threading.Lock()
        extraction = settings.memory.extraction
        self._scheduler = CoalescingScheduler(
            self._background_run, extraction.coalesce_seconds, on_error=on_error
        )

    # ------------------------------------------------------------------ public API

    def note_turn(self, session_id: str, user_id: str | None = None) -> None:
        """After an agent turn: schedule a coalesced extraction in the background (never blocks)."""
        if not self.settings.memory.extraction.enabled:
            return
        self.sessions.session_dir(session_id)  # a bad id fails here, in the caller, not in the worker
        self._users[session_id] = user_id
        self._scheduler.poke(session_id)

    def remember_now(
        self, session_id: str, message: dict[str, Any], user_id: str | None = None
    ) -> list[WriteOutcome]:
        """ "Remember this" / 记住 written at once; [] when the message asks for nothing to be remembered."""
        content = str(message.get("content") or "")
        if message.get("role", "user") != "user" or not harvest.patterns.asks_to_remember(content):
            return []
        if message.get("anonymous"):
            return []  # nobody to remember it for (identity.py); the turn says why
        with self._session_lock(session_id):
            previous = self._previous_message(session_id, message)
            person = message.get("userId") or message.get("sender") or user_id
            origin = harvest.Origin(session_id, person, self._l2_limit())
            wanted = harvest.from_patterns(
                [message], origin, explicit_only=True, previous=previous
            ).candidates
            # No judge: the reply must not wait for a model, and the grey zone then counts as new.
            outcomes = write_memories(self.memory, wanted, judge=None, now=self.clock())
            idx = message.get("idx")
            if isinstance(idx, int) and wanted:
                state = read_state(self._dir(session_id))
                if idx >= state.checkpoint:
                    state.remembered.append(idx)
                    # Not synced: the memory itself is (SQLite); this note only spares the message a
                    # second extraction. The fsync cost ~15 ms of the turn, under the memory lock that
                    # every turn waits for; after a power cut the note may be missing, and the message is
                    # then extracted again, and the write path finds it stored (a duplicate or a merge).
                    write_state(self._dir(session_id), state, self.clock(), durable=False)
        return outcomes

    def flush(self, session_id: str, upto: int | None = None, user_id: str | None = None) -> ExtractionReport:
        """Extract now from the checkpoint up to message index `upto` (exclusive; None: all)."""
        return self._extract(session_id, upto=upto, user_id=user_id)

    def run(
        self,
        session_id: str,
        *,
        dry_run: bool = False,
        user_id: str | None = None,
        progress: Progress | None = None,
    ) -> ExtractionReport:
        """On demand (the CLI): everything from the checkpoint on; a dry run writes nothing.
        `progress(done, total)` is told how many of the messages are done, chunk by chunk."""
        return self._extract(session_id, user_id=user_id, dry_run=dry_run, progress=progress)

    def close(self, wait: bool = True) -> None:
        """Stop the background worker; with `wait`, pending extractions run first."""
        stopped = self._scheduler.close(wait=wait)
        # A run still going (close without wait) keeps its connections; the process ends them.
        if stopped and self._background_memory is not None:
            self._background_memory.close()
            self._background_memory = None

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until no background extraction is pending or running (tests, orderly shutdown)."""
        return self._scheduler.wait_idle(timeout)

    # ------------------------------------------------------------------ the run

    def take_unstored(self, session_id: str) -> list[WriteOutcome]:
        """What background runs of the session did not store (duplicates, skips), each once: the next
        turn tells the person what it matched and why, so nothing goes missing without a word."""
        with self._unstored_lock:
            return self._unstored.pop(session_id, [])

    def _background_run(self, session_id: str) -> float | None:
        report = self._extract(
            session_id, user_id=self._users.get(session_id), automatic=True, memory=self._worker_memory()
        )
        unstored = [o for o in report.outcomes if o.action in ("duplicate", "skipped")]
        if unstored:
            with self._unstored_lock:
                self._unstored.setdefault(session_id, []).extend(unstored)
        if self.on_report is not None:
            self.on_report(report)
        if report.deferred_until is not None:
            return max((report.deferred_until - self.clock()).total_seconds(), 0.0)
        return None

    def _extract(
        self,
        session_id: str,
        *,
        upto: int | None = None,
        user_id: str | None = None,
        dry_run: bool = False,
        automatic: bool = False,
        memory: MemoryService | None = None,
        progress: Progress | None = None,
    ) -> ExtractionReport:
        directory = self._dir(session_id)
        with self._session_lock(session_id):
            state = read_state(directory)
            now = self.clock()
            messages = self.sessions.read_messages(session_id).messages
            end = messages[-1]["idx"] + 1 if messages else 0
            end = end if upto is None else min(upto, end)
            report = ExtractionReport(
                session_id, state.checkpoint, max(end, state.checkpoint), dry_run=dry_run
            )
            if automatic and (later := state.next_allowed(now, self.settings.memory.extraction.max_per_hour)):
                report.deferred_until = later
                return report
            window = self._window(messages, state, end)
            if window:
                self._harvest(report, window, user_id, memory or self.memory, progress)
            if not dry_run and end > state.checkpoint:
                state.advance(end)
                if automatic:
                    state.runs.append(now)
                write_state(directory, state, now)
        return report

    def _window(
        self, messages: Sequence[dict[str, Any]], state: ExtractionState, end: int
    ) -> list[dict[str, Any]]:
        remembered = set(state.remembered)
        return [
            m
            for m in messages
            if state.checkpoint <= m["idx"] < end
            and m.get("role") in EXTRACTED_ROLES
            and m["idx"] not in remembered
            and not m.get("anonymous")  # said by nobody known: remembered for nobody
        ]

    def _harvest(
        self,
        report: ExtractionReport,
        window: list[dict[str, Any]],
        user_id: str | None,
        memory: MemoryService,
        progress: Progress | None,
    ) -> None:
        """Memories from `window`, chunk by chunk, one model request per speaker and chunk."""
        judge = self._judge()
        for whole in chunks(window):
            for speaker, person in _speakers(whole):
                # An unlabelled speaker is one person of a shared session: only their words are read.
                chunk = whole if speaker is not None else _said_by(whole, person)
                origin = harvest.Origin(report.session_id, person or speaker or user_id, self._l2_limit())
                found = self._from_model(report, chunk, origin, speaker)
                if found is None:
                    own = [m for m in chunk if m.get("role") != "user" or m.get("sender") == speaker]
                    found = harvest.from_patterns(own, origin)
                    report.used_patterns = True
                report.notes.extend(found.notes)
                report.outcomes.extend(found.skipped)
                report.outcomes.extend(
                    write_memories(
                        memory, found.candidates, judge=judge, now=self.clock(), dry_run=report.dry_run
                    )
                )
            if progress is not None:
                progress(len(whole), len(window))
        if report.used_model and not report.model_failed:
            self._failing = None
        if judge is not None and judge.failures:
            report.notes.append(
                f"the dedup judge could not answer {judge.failures} time(s), so those memories were kept "
                f"as new: {judge.last_error}"
            )

    def _from_model(
        self,
        report: ExtractionReport,
        chunk: list[dict[str, Any]],
        origin: harvest.Origin,
        speaker: str | None,
    ) -> harvest.Harvest | None:
        """The model's memories about `speaker` in `chunk`; None when there is no model or it failed
        (after a failure, the rest of the run uses patterns: one failure, one wait, one report)."""
        if self.model is None or report.model_failed:
            return None
        try:
            reply = llm.complete_json(
                self.model,
                extraction_messages(chunk, speaker),
                ExtractionReply,
                self.settings.llm.api_base,
                api_key=self.settings.llm.api_key,
                max_retries=self.settings.llm.max_retries,
                timeout=self.settings.llm.timeout_seconds,
                temperature=0,
            )
        except llm.ModelUnavailable as exc:
            self._report_failure(report, exc.message)
            return None
        report.used_model = True
        return harvest.from_model(reply.memories, chunk, origin, speaker)

    def _report_failure(self, report: ExtractionReport, message: str) -> None:
        report.model_failed = True
        if self._failing is None:
            report.model_error = f"extraction model unavailable, explicit patterns used instead: {message}"
        self._failing = message

    # ------------------------------------------------------------------ plumbing

    def _judge(self) -> LlmJudge | None:
        return LlmJudge(self.settings.llm, self.model) if self.model else None

    def _l2_limit(self) -> int:
        return self.settings.memory.max_text_chars

    def _dir(self, session_id: str) -> Any:
        return self.sessions.session_dir(session_id)

    @contextmanager
    def _session_lock(self, session_id: str) -> Iterator[None]:
        self.sessions.ensure()
        lock: ProcessLock = lock_for(self.sessions.locks_dir / f"extract-{session_id}.lock")
        with lock.hold():
            yield

    def _previous_message(self, session_id: str, message: dict[str, Any]) -> dict[str, Any] | None:
        """The same speaker's user message before `message` (what "remember this" may point at)."""
        idx = message.get("idx")
        earlier = [
            m
            for m in self.sessions.read_messages(session_id).messages
            if m.get("role") == "user"
            and m.get("sender") == message.get("sender")
            and (not isinstance(idx, int) or m["idx"] < idx)
            and m.get("content") != message.get("content")
        ]
        return earlier[-1] if earlier else None

    def _worker_memory(self) -> MemoryService:
        """The worker's own MemoryService: SQLite connections are not shared between threads."""
        if self._background_memory is None:
            from openclaw_cli.identity.persons import owner_id
            from openclaw_cli.memory.service import MemoryService

            owner = owner_id(self.settings)
            self._background_memory = MemoryService(
                self.home, self.agent_id, self.settings.memory, owner=owner
            )
        return self._background_memory


def _speakers(chunk: Sequence[dict[str, Any]]) -> list[tuple[str | None, str | None]]:
    """Who spoke, in order, as (sender label, person id): one extraction each. A label of None is a
    one-to-one chat's user; a person of None a message stored before messages named their person.
    A chunk where only the assistant speaks holds nothing about anyone."""
    return list(dict.fromkeys((m.get("sender"), m.get("userId")) for m in chunk if m.get("role") == "user"))


def _said_by(chunk: Sequence[dict[str, Any]], person: str | None) -> list[dict[str, Any]]:
    """The unlabelled user messages of `person` and everything the assistant said in `chunk`."""
    return [
        m for m in chunk if m.get("role") != "user" or (m.get("sender") is None and m.get("userId") == person)
    ]


def extract_session(
    home: Home,
    agent_id: str,
    settings: Settings,
    key_or_id: str,
    *,
    dry_run: bool = False,
    user_id: str | None = None,
    progress: Progress | None = None,
) -> ExtractionReport:
    """`openclaw memory extract`: one on-demand run over a session named by its key or id."""
    from openclaw_cli.identity.agent_config import for_agent
    from openclaw_cli.identity.auth_profiles import with_auth_profile
    from openclaw_cli.identity.persons import owner_id
    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.sessions.store import SessionStore

    settings = with_auth_profile(for_agent(settings, agent_id), home, agent_id)
    sessions = SessionStore(home, agent_id)
    memory = MemoryService(home, agent_id, settings.memory, fast_start=True, owner=owner_id(settings))
    service = ExtractionService(home, agent_id, settings, memory, sessions)
    try:
        session_id = sessions.resolve(key_or_id)
        return service.run(session_id, dry_run=dry_run, user_id=user_id, progress=progress)
    finally:
        service.close(wait=False)
        memory.close()
        sessions.close()
