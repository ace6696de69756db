"""One person forgotten in this process: the databases, transcripts, journal, histories and stray files.

The order: look everywhere first (nothing is written for a person nobody knows: NotFound names the
persons that are known), then remove the memories (theirs, and others' made from their messages), then
the transcripts, the journal (unless a running gateway rewrites its own, gateway/purge.py), their
`openclaw chat` prompt history, and what files.py finds in logs, exports and backups. The copies of each
memory database (memory/backups/, and the files a restore or a salvage kept) are purged like it. Each step is
atomic on its own and the whole is idempotent: a purge cut short is finished by running it again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.errors import NotFound, OpenclawError
from openclaw_cli.paths import SHARED_AGENT, Home

if TYPE_CHECKING:
    from openclaw_cli.config import Settings
    from openclaw_cli.gateway.inbox import Pending
    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.sessions.redact import SessionFinding

MAX_LISTED = 20  # known persons named in the error for an unknown one


@dataclass(frozen=True)
class ForgetRequest:
    person: str  # canonical (resolve_person)
    agent_id: str
    all_agents: bool = False
    sessions: bool = False


@dataclass
class ForgetReport:
    user: str
    memories: int = 0
    history_rows: int = 0
    derived: int = 0  # memories of others (or the agent's) made from the person's messages
    sessions: int = 0  # the person's own sessions, deleted
    redacted_sessions: int = 0
    redacted_messages: int = 0
    summaries: int = 0  # summaries dropped because they were built from redacted messages
    journal: int = 0  # gateway journal entries removed
    files: list[str] = field(default_factory=list)  # other files cleaned or removed
    left: list[str] = field(default_factory=list)  # files that still hold the words (not ours to edit)
    databases: list[str] = field(default_factory=list)
    not_covered: list[str] = field(default_factory=list)  # agents this purge did not cover
    via: str = "direct"  # or "gateway": the running gateway did the work
    disk_note: str | None = None  # what the purge guarantees on disk, where that is less than every byte

    @property
    def warning(self) -> str | None:
        parts = []
        if self.not_covered:
            parts.append(
                f"{self.user!r} remains in other agents ({', '.join(self.not_covered)}): this purge covered "
                "only this agent and the shared store; rerun with --all-agents"
            )
        if self.left:
            parts.append(
                f"these files still hold words of {self.user!r} and were left as they are (they are yours "
                f"to edit): {', '.join(self.left)}"
            )
        return "; ".join(parts) or None

    def to_dict(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "purged": self.memories,
            "historyRows": self.history_rows,
            "derived": self.derived,
            "sessions": self.sessions,
            "redactedSessions": self.redacted_sessions,
            "redactedMessages": self.redacted_messages,
            "summariesDropped": self.summaries,
            "journalEntries": self.journal,
            "files": self.files,
            "left": self.left,
            "databases": self.databases,
            "notCovered": self.not_covered,
            "via": self.via,
            "warning": self.warning,
            "diskNote": self.disk_note,
        }

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> ForgetReport:
        """A report as the gateway's `memory.purge` sent it."""
        return cls(
            user=str(value.get("user")),
            memories=int(value.get("purged") or 0),
            history_rows=int(value.get("historyRows") or 0),
            derived=int(value.get("derived") or 0),
            sessions=int(value.get("sessions") or 0),
            redacted_sessions=int(value.get("redactedSessions") or 0),
            redacted_messages=int(value.get("redactedMessages") or 0),
            summaries=int(value.get("summariesDropped") or 0),
            journal=int(value.get("journalEntries") or 0),
            files=[str(f) for f in value.get("files") or []],
            left=[str(f) for f in value.get("left") or []],
            databases=[str(d) for d in value.get("databases") or []],
            not_covered=[str(a) for a in value.get("notCovered") or []],
            via=str(value.get("via") or "gateway"),
            disk_note=value.get("diskNote"),
        )


def resolve_person(given: str, settings: Settings) -> str:
    """The canonical person id of `--user` (an address linked to a name becomes the name)."""
    from openclaw_cli.identity import canonical_person
    from openclaw_cli.memory.store.records import validate_user

    return canonical_person(validate_user(given), settings.session.identity_links)


def aliases(person: str, links: Mapping[str, Sequence[str]]) -> list[str]:
    """The ids the person's memories may be stored under: the name and every address linked to it."""
    found = [person]
    for name, addresses in links.items():
        if name.strip().lower() == person:
            found += [str(address).strip().lower() for address in addresses]
    return list(dict.fromkeys(found))


def agents_with_sessions(home: Home) -> list[str]:
    agents = home.root / "agents"
    if not agents.is_dir():
        return []
    return sorted(p.name for p in agents.iterdir() if (p / "sessions").is_dir() and p.name != SHARED_AGENT)


def journal_path(home: Home) -> Path:
    return home.root / "gateway" / "inbox.jsonl"


def journal_person(entry: Pending, settings: Settings) -> str | None:
    """Whose a journal entry is: its `userId`, else (older entries) who its sender or key names."""
    from openclaw_cli.identity import canonical_person, for_key
    from openclaw_cli.sessions.keys import parse_key

    try:
        if entry.user_id:
            return canonical_person(entry.user_id, settings.session.identity_links)
        return for_key(settings, parse_key(entry.session_key), sender=entry.sender).person
    except OpenclawError:
        return None


def history_files(home: Home, person: str, links: Mapping[str, Sequence[str]]) -> list[Path]:
    """The person's `openclaw chat` prompt histories, under every agent."""
    from openclaw_cli.identity import history_name

    agents = home.root / "agents"
    if not agents.is_dir():
        return []
    names = {history_name(alias) for alias in aliases(person, links)}
    return sorted(p / "chat" / n for p in agents.iterdir() for n in names if (p / "chat" / n).is_file())


@dataclass
class _Survey:
    """What the home holds of the person, found before anything is written."""

    findings: dict[str, list[SessionFinding]] = field(default_factory=dict)  # agent -> sessions
    stores: dict[str, bool] = field(default_factory=dict)  # agent -> its store holds the person
    journal: list[str] = field(default_factory=list)  # texts of the person's journal entries
    histories: list[Path] = field(default_factory=list)

    def empty(self) -> bool:
        return not (
            any(self.findings.values()) or any(self.stores.values()) or self.journal or self.histories
        )


def _survey(home: Home, settings: Settings, person: str, service: MemoryService) -> _Survey:
    from openclaw_cli.gateway.inbox import Inbox
    from openclaw_cli.sessions.redact import find
    from openclaw_cli.sessions.store import SessionStore

    links = settings.session.identity_links
    ids = aliases(person, links)
    survey = _Survey()
    for agent in agents_with_sessions(home):
        store = SessionStore(home, agent)
        try:
            found = [find(store, sid, person, settings) for sid in store.session_ids_on_disk()]
        finally:
            store.close()
        survey.findings[agent] = [f for f in found if f is not None]
    for agent in service.stored_agents():
        storage = service.store(home.memory_db(agent), create=False).storage
        survey.stores[agent] = bool(storage.rows_of_users(ids))
    survey.journal = [
        e.text for e in Inbox(journal_path(home)).entries() if journal_person(e, settings) == person
    ]
    survey.histories = history_files(home, person, links)
    return survey


def known_persons(home: Home, settings: Settings, service: MemoryService) -> list[str]:
    """Every person the home holds something of: memories, sessions, journal entries."""
    from openclaw_cli.gateway.inbox import Inbox
    from openclaw_cli.identity import canonical_person
    from openclaw_cli.sessions.redact import persons
    from openclaw_cli.sessions.store import SessionStore

    found: set[str] = set()
    for agent in service.stored_agents():
        for user in service.store(home.memory_db(agent), create=False).storage.user_ids():
            try:
                found.add(canonical_person(user, settings.session.identity_links))
            except OpenclawError:
                found.add(user)
    for agent in agents_with_sessions(home):
        store = SessionStore(home, agent)
        try:
            for session_id in store.session_ids_on_disk():
                found |= persons(store, session_id, settings)
        finally:
            store.close()
    for entry in Inbox(journal_path(home)).entries():
        if (who := journal_person(entry, settings)) is not None:
            found.add(who)
    return sorted(found)


def _unknown(person: str, known: list[str]) -> NotFound:
    listed = ", ".join(known[:MAX_LISTED]) + (
        f" and {len(known) - MAX_LISTED} more" if len(known) > MAX_LISTED else ""
    )
    return NotFound(
        f"nothing is known of {person!r} (no memories, sessions or journal entries); "
        f"known persons: {listed or 'none'}",
        hint="check the id: see `openclaw memory list` and `openclaw session list`",
    )


def forget_person(
    home: Home,
    settings: Settings,
    request: ForgetRequest,
    *,
    journal: bool = True,
    on_sessions_changed: Callable[[str, list[str]], None] | None = None,
) -> ForgetReport:
    """Forget `request.person` (see the module doc). `journal`: rewrite the gateway journal here (False
    when the running gateway rewrites its own). `on_sessions_changed(agent, session ids)` is told which
    sessions were deleted or rewritten (the gateway drops its open writers of them)."""
    from openclaw_cli.identity import owner_id
    from openclaw_cli.memory.service import MemoryService

    person = request.person
    service = MemoryService(home, request.agent_id, settings.memory, owner=owner_id(settings))
    try:
        with service.damage_guard():  # a damaged database is named, with what to do about it
            survey = _survey(home, settings, person, service)
            if survey.empty():
                raise _unknown(person, known_persons(home, settings, service))
            report = ForgetReport(person)
            covered = set(survey.findings) if request.all_agents else {request.agent_id}
            needles = _forget_memories(home, settings, request, survey, covered, service, report)
        # Words of their memories that searches met: all words go, as a table does not say whose each is.
        report.left += [str(path) for path in service.forget_words()]
    finally:
        service.close()
    for agent, findings in survey.findings.items():
        if agent in covered:
            needles += [text for finding in findings for text in finding.texts]
        elif findings and request.sessions and agent not in report.not_covered:
            report.not_covered.append(agent)
    if request.sessions:
        _forget_sessions(home, settings, person, survey, covered, report, needles, on_sessions_changed)
    needles += survey.journal
    if journal:
        from openclaw_cli.gateway.inbox import purge_file

        report.journal = purge_file(journal_path(home), lambda e: journal_person(e, settings) == person)
    for path in survey.histories:
        path.unlink(missing_ok=True)
        report.files.append(str(path))
    from openclaw_cli.forget.files import scrub_files

    cleaned, left = scrub_files(home, needles)
    report.files += cleaned
    report.left += left
    report.not_covered.sort()
    return report


def _forget_memories(
    home: Home,
    settings: Settings,
    request: ForgetRequest,
    survey: _Survey,
    covered: set[str],
    service: MemoryService,
    report: ForgetReport,
) -> list[str]:
    """Purge the covered stores (with the shared one); the texts of what went (for files.py)."""
    from openclaw_cli.memory.backends import purge_disk_note
    from openclaw_cli.memory.upkeep.recovery import purge_copies
    from openclaw_cli.memory.writing.purge import Taint, purge_person

    ids = aliases(request.person, settings.session.identity_links)
    findings = [f for agent in covered for f in survey.findings.get(agent, [])]
    taint = Taint(
        frozenset(f.session_id for f in findings if f.own),
        frozenset((f.session_id, idx) for f in findings for idx in f.redact),
    )
    needles: list[str] = []
    for agent, holds in survey.stores.items():
        if not request.all_agents and agent not in (request.agent_id, SHARED_AGENT):
            if holds:
                report.not_covered.append(agent)
            continue
        store = service.store(home.memory_db(agent), create=False)
        for texts in store.storage.texts_of_users(ids):
            needles += [text.strip() for text in texts if text and len(text.strip()) >= 8]
        done = purge_person(store, ids, taint)
        report.memories += done.memories
        report.history_rows += done.history_rows
        report.derived += done.derived
        report.databases.append(str(store.path))
        report.disk_note = report.disk_note or purge_disk_note(store)
        cleaned, left = purge_copies(store.path, ids, taint)  # its backups hold the person too
        report.files += cleaned
        report.left += left
    return needles


def _forget_sessions(
    home: Home,
    settings: Settings,
    person: str,
    survey: _Survey,
    covered: set[str],
    report: ForgetReport,
    needles: list[str],
    on_changed: Callable[[str, list[str]], None] | None,
) -> None:
    from openclaw_cli.sessions.redact import delete_session, redact_session
    from openclaw_cli.sessions.store import Durability, SessionStore

    for agent in sorted(covered):
        findings = survey.findings.get(agent, [])
        if not findings:
            continue
        store = SessionStore(home, agent, Durability.from_settings(settings.session))
        try:
            for finding in findings:
                if finding.own:
                    delete_session(store, finding.session_id)
                    report.sessions += 1
                    continue
                outcome = redact_session(store, finding.session_id, person, settings, needles)
                report.redacted_sessions += 1 if outcome.messages else 0
                report.redacted_messages += outcome.messages
                report.summaries += outcome.summaries
        finally:
            store.close()
        _forget_transcripts(home, settings, agent, [f.session_id for f in findings])
        if on_changed is not None:
            on_changed(agent, [f.session_id for f in findings])


def _forget_transcripts(home: Home, settings: Settings, agent: str, session_ids: list[str]) -> None:
    """The transcript index loses these sessions' rows with their messages, and its file is rewritten so no
    byte of them is left; what a redaction kept is indexed again from the rewritten files."""
    from openclaw_cli.memory.transcripts import TranscriptIndex, transcripts_path

    if not transcripts_path(home, agent).exists():
        return
    index = TranscriptIndex(home, agent, settings.memory)
    try:
        index.forget_sessions(session_ids, compact=False)
        index.catch_up()
        index.compact()
    finally:
        index.close()
