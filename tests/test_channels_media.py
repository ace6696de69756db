"""Inbound media through the Telegram channel: size cap, type from the bytes, generated names, TTL, purge."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

from tests.channel_helpers import chat_requests, fake_embeddings, fakes, start
from tests.conftest import run_cli
from tests.fake_telegram import FakeTelegram
from tests.gateway_helpers import write_config

PDF = b"%PDF-1.7\n" + b"x" * 600


def _config(home: Path, model: object, tg: FakeTelegram) -> None:
    section = {"enabled": True, "apiBase": tg.api_base, "pollTimeoutSeconds": 1, "dmPolicy": "open"}
    write_config(
        home,
        model,  # type: ignore[arg-type]
        channels={"telegram": section},
        media={"maxBytes": 2048},
        memory=fake_embeddings(model),  # type: ignore[arg-type]
        session={"reset": {"atHour": None}, "dmScope": "per-channel-peer"},
    )


def _document(file_id: str, declared: int, name: str = "cat.jpg") -> dict[str, object]:
    return {
        "file_id": file_id,
        "file_unique_id": file_id,
        "file_name": name,
        "mime_type": "image/jpeg",
        "file_size": declared,
    }


def _media_files(home: Path) -> list[Path]:
    return [p for p in (home / "media").glob("*") if p.name != "index.jsonl"]


def test_a_file_named_jpg_holding_a_pdf_is_stored_as_pdf_under_a_generated_name(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        _config(home, model, tg)
        tg.files["files/F1"] = PDF
        gateway = start(home)
        try:
            tg.dm(1001, "", caption="my invoice", document=_document("F1", len(PDF)))
            sent = tg.wait_sent(1)
            assert "my invoice" in sent[0]["text"]
        finally:
            gateway.stop()
        files = _media_files(home)
        assert len(files) == 1 and files[0].suffix == ".pdf" and "cat" not in files[0].name
        assert files[0].read_bytes() == PDF
        assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
        assert stat.S_IMODE((home / "media").stat().st_mode) == 0o700
        prompt = json.dumps(chat_requests(model))
        assert f"media/{files[0].name}" in prompt and "application/pdf" in prompt and "my invoice" in prompt

        # session sweep deletes media past media.ttlDays; memory purge --user deletes a person's files
        old = time.time() - 40 * 86_400
        os.utime(files[0], (old, old))
        swept = run_cli(home, "session", "sweep")
        assert swept.returncode == 0, swept.stderr
        assert _media_files(home) == []


def test_files_over_the_cap_are_refused_before_or_while_downloading(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        _config(home, model, tg)
        tg.files["files/BIG"] = b"\xff\xd8\xff" + b"y" * 10_000
        tg.files["files/LIAR"] = b"\xff\xd8\xff" + b"z" * 10_000
        gateway = start(home)
        try:
            tg.dm(1001, "big one", document=_document("BIG", 10_003))
            tg.dm(1001, "lying one", document=_document("LIAR", 100))
            tg.wait_sent(2)
        finally:
            gateway.stop()
        downloads = [p["path"] for name, p in tg.calls if name == "download"]
        assert downloads == ["files/LIAR"]  # the declared size refused BIG before any byte was fetched
        assert list((home / "media").glob("*")) in ([], [home / "media" / "index.jsonl"])
        prompt = json.dumps(chat_requests(model))
        assert prompt.count("was sent but refused") >= 2
        log = gateway.log()
        assert "refused (media.maxBytes 2048)" in log and "refused while downloading" in log
        assert "Traceback" not in log


def test_memory_purge_deletes_the_persons_media(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        _config(home, model, tg)
        tg.files["files/A"] = PDF
        tg.files["files/B"] = b"\x89PNG\r\n\x1a\n" + b"p" * 100
        gateway = start(home)
        try:
            tg.dm(1001, "remember that I sent a pdf", document=_document("A", len(PDF)))
            tg.dm(1002, "mine", photo=[{"file_id": "B", "file_unique_id": "B", "width": 1, "height": 1}])
            tg.wait_sent(2)
        finally:
            gateway.stop()
        assert sorted(p.suffix for p in _media_files(home)) == [".pdf", ".png"]
        purged = run_cli(home, "memory", "purge", "--user", "telegram:1001", "--yes", "--sessions")
        assert purged.returncode == 0, purged.stderr
        assert [p.suffix for p in _media_files(home)] == [".png"]
