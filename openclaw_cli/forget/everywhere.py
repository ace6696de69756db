"""One person forgotten in this process: the databases, transcripts, journal, histories and stray files.

The order: look everywhere first (nothing is written for a person nobody knows: NotFound names the
persons that are known), then remove the memories (theirs, and others' made from their messages), then
the transcripts, the journal (unless a running gateway rewrites its own, gateway/rpc/purge.py), their
`openclaw chat` prompt history, and what files.py finds in logs, exports and backups. The copies of each
memory database (memory/backups/, and the files a restore or a salvage kept) are purged like it. Each step is
atomic on its own and the whole is idempotent: a purge cut short is finished by running it again.

The memory stores are every store the home knows of (forget/stores.py): the configured backend's, the other
backend's when it still exists and the sources of `memory migrate-backend`; a server that cannot be reached
is reported in `unreachable` (the command fails naming it), never skipped in silence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import NotFound, OpenclawError
from openclaw_cli.core.paths import SHARED_AGENT, Home
from openclaw_cli.forget.report import ForgetReport as ForgetReport
from openclaw_cli.forget.report import ForgetRequest as ForgetRequest

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.forget.stores import KnownStores, Place
    from openclaw_cli.gateway.inbox import Pending
    from openclaw_cli.sessions.upkeep.redact import SessionFinding

MAX_LISTED = 20  # known persons named in the error for an unknown one


def resolve_person(given: str, settings: Settings) -> str:
    """The canonical person id of `--user` (an address linked to a name becomes the name)."""
    from openclaw_cli.identity.persons import canonical_person
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
    from openclaw_cli.identity.persons import canonical_person, for_key
    from openclaw_cli.sessions.keys import parse_key

    try:
        if entry.user_id:
            return canonical_person(entry.user_id, settings.session.identity_links)
        return for_key(settings, parse_key(entry.session_key), sender=entry.sender).person
    except OpenclawError:
        return None


def history_files(home: Home, person: str, links: Mapping[str, Sequence[str]]) -> list[Path]:
    """The person's `openclaw chat` prompt histories, under every agent."""
    from openclaw_cli.identity.persons import history_name

    agents = home.root / "agents"
    if not agents.is_dir():
        return []
    names = {history_name(alias) for alias in aliases(person, links)}
    return sorted(p / "chat" / n for p in agents.iterdir() for n in names if (p / "chat" / n).is_file())


@dataclass
class _Survey:
    """What the home holds of the person, found before anything is written."""

    findings: dict[str, list[SessionFinding]] = field(default_factory=dict)  # agent -> sessions
    # (place, agent, its store holds the person), for every store of every known location
    stores: list[tuple[Place, str, bool]] = field(default_factory=list)
    journal: list[str] = field(default_factory=list)  # texts of the person's journal entries
    histories: list[Path] = field(default_factory=list)

    def empty(self) -> bool:
        return not (
            any(self.findings.values())
            or any(holds for _, _, holds in self.stores)
            or self.journal
            or self.histories
        )


def _survey(home: Home, settings: Settings, person: str, stores: KnownStores) -> _Survey:
    from openclaw_cli.gateway.inbox import Inbox
    from openclaw_cli.sessions.store import SessionStore
    from openclaw_cli.sessions.upkeep.redact import find

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
    for place in stores:
        with place.service.damage_guard():
            for agent in place.agents:
                survey.stores.append((place, agent, bool(place.store(agent).storage.rows_of_users(ids))))
    survey.journal = [
        e.text for e in Inbox(journal_path(home)).entries() if journal_person(e, settings) == person
    ]
    survey.histories = history_files(home, person, links)
    return survey


def known_persons(home: Home, settings: Settings, stores: KnownStores) -> list[str]:
    """Every person the home holds something of: memories, sessions, journal entries."""
    from openclaw_cli.gateway.inbox import Inbox
    from openclaw_cli.identity.persons import canonical_person
    from openclaw_cli.sessions.store import SessionStore
    from openclaw_cli.sessions.upkeep.redact import persons

    found: set[str] = set()
    for place in stores:
        for agent in place.agents:
            for user in place.store(agent).storage.user_ids():
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


def lookalikes(person: str, known: list[str]) -> list[str]:
    """The known ids that may name the same person as `person` without being linked to it: the same peer id
    bare or on another channel (`victim`, `openai:victim`, `telegram:victim`)."""

    def bare(value: str) -> str:
        channel, sep, peer = value.lower().partition(":")
        return peer if sep and channel and peer else value.lower()

    return [other for other in known if other != person and bare(other) == bare(person)]


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
    from openclaw_cli.forget.stores import KnownStores

    person = request.person
    stores = KnownStores(home, settings, request.agent_id)
    try:
        survey = _survey(home, settings, person, stores)
        if survey.empty():
            if stores.unreachable:  # it may be there: say so rather than that nobody knows them
                raise stores.first_error()
            raise _unknown(person, known_persons(home, settings, stores))
        report = ForgetReport(person)
        report.unreachable = [u.to_dict() for u in stores.unreachable]
        covered = set(survey.findings) if request.all_agents else {request.agent_id}
        report.lookalikes = lookalikes(person, known_persons(home, settings, stores))
        needles = _forget_memories(settings, request, survey, covered, report)
        # Words of their memories that searches met: all words go, as a table does not say whose each is.
        report.left += stores.forget_words()
    finally:
        stores.close()
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
    from openclaw_cli.channels.media import forget_media

    report.files += forget_media(home.root / "media", person)  # the photos and files they sent
    from openclaw_cli.forget.files import scrub_files

    cleaned, left = scrub_files(home, needles)
    report.files += cleaned
    report.left += left
    report.not_covered.sort()
    return report


def _forget_memories(
    settings: Settings, request: ForgetRequest, survey: _Survey, covered: set[str], report: ForgetReport
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
    copies_done: set[Path] = set()
    for place, agent, holds in survey.stores:
        if not request.all_agents and agent not in (request.agent_id, SHARED_AGENT):
            if holds and agent not in report.not_covered:
                report.not_covered.append(agent)
            continue
        with place.service.damage_guard():  # a damaged database is named, with what to do about it
            store = place.store(agent)
            for texts in store.storage.texts_of_users(ids):
                needles += [text.strip() for text in texts if text and len(text.strip()) >= 8]
            done = purge_person(store, ids, taint)
        report.memories += done.memories
        report.history_rows += done.history_rows
        report.derived += done.derived
        where = place.where(agent)
        report.databases.append(where)
        report.stores.append(
            {
                "store": where,
                "purged": done.memories,
                "historyRows": done.history_rows,
                "derived": done.derived,
            }
        )
        report.disk_note = report.disk_note or purge_disk_note(store)
        if store.path not in copies_done:  # its backups hold the person too (a server store: the files'
            copies_done.add(store.path)  # backups from before it moved there)
            cleaned, left = purge_copies(store.path, ids, taint)
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
    from openclaw_cli.sessions.store import Durability, SessionStore
    from openclaw_cli.sessions.upkeep.redact import delete_session, redact_session

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
    from openclaw_cli.memory.transcripts.index import TranscriptIndex, transcripts_path

    if not transcripts_path(home, agent).exists():
        return
    index = TranscriptIndex(home, agent, settings.memory)
    try:
        index.forget_sessions(session_ids, compact=False)
        index.catch_up()
        index.compact()
    finally:
        index.close()
