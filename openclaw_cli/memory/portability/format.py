"""The memory export format (seed 000 §9), version 1.0: what one record looks like and how it is checked.

JSON (`--format json`, one document)::

    {"version": "1.0", "agent": "main", "exportedAt": "2026-02-26T10:00:00.000Z",
     "embedder": {"provider": "local", "model": "...", "dimensions": 896} | null,
     "records": [RECORD, ...]}

JSON Lines (`--format jsonl`, streamed): the header object above without `records` on the first line, one
RECORD per line, and an end line `{"end": true, "records": N}`. The end line is how a file cut short at a
line boundary is told from a complete one; reading treats both lines as advisory, so that a stream filtered
or joined in a shell pipeline still imports, with warnings (portability/stream.py).

RECORD::

    {"id": "mem-...", "scope": "user"|"agent", "userId": "lin"|null, "agentId": "main",
     "category": "profile"|"preference"|"event"|"case"|"lesson"|"insight"|"note",
     "attribute": "job"|null, "language": "en",
     "content": {"l0": "one line", "l1": "detail"|null, "l2": "verbatim source"|null},
     "source": {...}|null,
     "fsrs": {"stability": 3.2|null, "difficulty": 5.1|null, "lastReview": ISO|null,
              "nextReview": ISO|null, "reps": 0, "lapses": 0},
     "createdAt": ISO, "updatedAt": ISO, "reflectedAt": ISO|null}

No embeddings: the importing store re-embeds with its own model. `embedder` in the header is only
informational. Versions are MAJOR.MINOR: a file of the same major and an older minor has its missing
fields filled with defaults; a newer minor's unknown fields are ignored; another major is refused, and
`openclaw memory migrate` rewrites it (see portability/migrate.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.core.textcheck import HINT as TEXT_HINT
from openclaw_cli.core.textcheck import find_bad_text
from openclaw_cli.memory.store.records import (
    CLOCK_SKEW,
    DEFAULT_USER,
    EARLIEST_CREATED,
    FsrsState,
    MemoryRecord,
    check_text,
    iso,
    utc_now,
    validate_category,
    validate_record_id,
    validate_scope,
    validate_user,
)

FORMAT_VERSION = "1.0"
CURRENT_MAJOR, CURRENT_MINOR = 1, 0
_VERSION_RE = re.compile(r"^(\d{1,4})\.(\d{1,4})$")
MIGRATE_HINT = "run `openclaw memory migrate FILE` to rewrite it to version " + FORMAT_VERSION


def parse_version(value: Any) -> tuple[int, int]:
    """`"1.0"` -> (1, 0); anything else that is not MAJOR.MINOR is an error naming the value."""
    if not isinstance(value, str) or not _VERSION_RE.match(value):
        raise InvalidInput(
            f"export version {value!r} is not a version like {FORMAT_VERSION!r}",
            hint="is this an openclaw memory export?",
        )
    major, minor = value.split(".")
    return int(major), int(minor)


def check_importable(value: Any) -> tuple[int, int]:
    """The file's version, when this openclaw can import it as it is; refused with a pointer otherwise."""
    major, minor = parse_version(value)
    if major != CURRENT_MAJOR:
        raise InvalidInput(
            f"export version {value} has another major version than this openclaw reads ({FORMAT_VERSION})",
            hint=MIGRATE_HINT,
        )
    return major, minor


class _Strict(BaseModel):
    """Fields of the current version are known: anything else is a typo, unless the file is newer."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ExportContent(_Strict):
    l0: StrictStr
    l1: StrictStr | None = None
    l2: StrictStr | None = None


class ExportFsrs(_Strict):
    stability: float | None = Field(None, ge=0)
    difficulty: float | None = Field(None, ge=0)
    last_review: AwareDatetime | None = Field(None, alias="lastReview")
    next_review: AwareDatetime | None = Field(None, alias="nextReview")
    reps: StrictInt = Field(0, ge=0)
    lapses: StrictInt = Field(0, ge=0)


class ExportRecord(_Strict):
    id: StrictStr
    scope: StrictStr = "user"
    user_id: StrictStr | None = Field(None, alias="userId")
    agent_id: StrictStr | None = Field(None, alias="agentId")
    category: StrictStr = "note"
    attribute: StrictStr | None = None
    language: StrictStr | None = None
    content: ExportContent
    source: dict[str, Any] | None = None
    fsrs: ExportFsrs | None = None
    created_at: AwareDatetime = Field(alias="createdAt")
    updated_at: AwareDatetime | None = Field(None, alias="updatedAt")
    reflected_at: AwareDatetime | None = Field(None, alias="reflectedAt")


# A newer minor version may add fields: they are ignored rather than refused (same models, extra="ignore").
_IGNORE_EXTRA = ConfigDict(extra="ignore", populate_by_name=True)


class _LenientContent(ExportContent):
    model_config = _IGNORE_EXTRA


class _LenientFsrs(ExportFsrs):
    model_config = _IGNORE_EXTRA


class _LenientRecord(ExportRecord):
    model_config = _IGNORE_EXTRA
    content: _LenientContent
    fsrs: _LenientFsrs | None = None


def header(
    agent: str, embedder: dict[str, Any] | None, exported_at: datetime | None = None
) -> dict[str, Any]:
    return {
        "version": FORMAT_VERSION,
        "agent": agent,
        "exportedAt": iso(exported_at or utc_now()),
        "embedder": embedder,
    }


def record_to_export(record: MemoryRecord) -> dict[str, Any]:
    """One stored record in the export format (no vector, no derived hash, no vector status)."""
    fs = record.fsrs
    return {
        "id": record.id,
        "scope": record.scope,
        "userId": record.user_id,
        "agentId": record.agent_id,
        "category": record.category,
        "attribute": record.attribute,
        "language": record.language,
        "content": {"l0": record.l0, "l1": record.l1, "l2": record.l2},
        "source": record.source,
        "fsrs": {
            "stability": fs.stability,
            "difficulty": fs.difficulty,
            "lastReview": iso(fs.last_review),
            "nextReview": iso(fs.next_review),
            "reps": fs.reps,
            "lapses": fs.lapses,
        },
        "createdAt": iso(record.created_at),
        "updatedAt": iso(record.updated_at),
        "reflectedAt": iso(record.reflected_at),
    }


@dataclass(frozen=True)
class RecordError:
    """Why one record of a file cannot be imported; `index` is its 0-based position among the records."""

    index: int
    message: str
    line: int | None = None

    def describe(self) -> str:
        where = f"records[{self.index}]" + (f" (line {self.line})" if self.line is not None else "")
        return f"{where}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "line": self.line, "message": self.message}


def _pydantic_message(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}" if where else f"{first['msg']}{more}"


def _finite(name: str, value: float | None) -> None:
    if value is not None and not math.isfinite(value):
        raise InvalidInput(f"fsrs.{name} must be a finite number")


def _check_time(name: str, moment: datetime | None) -> None:
    """Times near datetime's limits overflow FSRS arithmetic later; before 1970 is a mistake."""
    if moment is not None and not EARLIEST_CREATED <= moment <= datetime(9000, 1, 1, tzinfo=moment.tzinfo):
        raise InvalidInput(f"{name} {iso(moment)} is out of range")


def to_record(
    obj: Any,
    agent_id: str,
    max_chars: int,
    *,
    lenient: bool = False,
    derive: bool = True,
    now: datetime | None = None,
) -> MemoryRecord:
    """Validate one exported record and build the record to store (InvalidInput says what is wrong).

    The importing agent owns what it imports, so `agentId` becomes `agent_id`; the language and L0 hash
    are derived again from the text (never trusted from the file); missing FSRS state starts fresh.
    `derive=False` only validates: the derived fields are left empty (a third of the cost, for the
    validation pass over a whole file).
    """
    from openclaw_cli.memory.store.forgetting import initial_state
    from openclaw_cli.memory.text.analysis import detect_language, l0_hash

    if not isinstance(obj, dict):
        raise InvalidInput(f"expected a JSON object, got {type(obj).__name__}")
    bad = find_bad_text(obj)  # every field, before pydantic or the store sees one
    if bad is not None:
        raise InvalidInput(bad.describe(), hint=TEXT_HINT)
    model = _LenientRecord if lenient else ExportRecord
    try:
        parsed = model.model_validate(obj)
    except ValidationError as exc:
        raise InvalidInput(_pydantic_message(exc)) from exc
    record_id = validate_record_id(parsed.id)
    scope = validate_scope(parsed.scope)
    category = validate_category(parsed.category)
    user = validate_user(parsed.user_id) if parsed.user_id is not None else None
    if scope == "user" and user is None:
        user = DEFAULT_USER
    l0 = check_text("content.l0", parsed.content.l0, max_chars, required=True)
    assert l0 is not None
    l1 = check_text("content.l1", parsed.content.l1, max_chars)
    l2 = check_text("content.l2", parsed.content.l2, max_chars)
    moment = now or utc_now()
    _check_time("createdAt", parsed.created_at)
    if parsed.created_at > moment + CLOCK_SKEW:
        raise InvalidInput(f"createdAt {iso(parsed.created_at)} is in the future")
    for name, value in (("updatedAt", parsed.updated_at), ("reflectedAt", parsed.reflected_at)):
        _check_time(name, value)
    # Any offset is a valid time; the store (and FSRS, which refuses others) keeps UTC.
    created_at = parsed.created_at.astimezone(UTC)
    fsrs = FsrsState()
    if parsed.fsrs is None and derive:
        fsrs = initial_state(created_at)
    elif parsed.fsrs is not None:
        _finite("stability", parsed.fsrs.stability)
        _finite("difficulty", parsed.fsrs.difficulty)
        _check_time("fsrs.lastReview", parsed.fsrs.last_review)
        _check_time("fsrs.nextReview", parsed.fsrs.next_review)
        fsrs = FsrsState.model_validate(parsed.fsrs.model_dump())
    return MemoryRecord.model_validate(
        {
            "id": record_id,
            "scope": scope,
            "userId": user,
            "agentId": agent_id,
            "category": category,
            "l0": l0,
            "l1": l1,
            "l2": l2,
            "language": detect_language(l0) if derive else "other",  # as record_rows.new_record
            "l0Hash": l0_hash(l0) if derive else "",
            "createdAt": created_at,
            "updatedAt": parsed.updated_at or created_at,
            "source": parsed.source,
            "fsrs": fsrs,
            "attribute": parsed.attribute,
            "reflectedAt": parsed.reflected_at,
        }
    )
