"""Embedding privacy (seed 000 §12 [3]): what an API embedder receives is masked; what is stored is not;
local embedders are unaffected."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_cli.config.loading import Settings
from openclaw_cli.memory.embedding.redact import CARD, EMAIL, ID, PHONE, redact
from openclaw_cli.memory.search.pipeline import SearchRequest
from tests import fake_openai as fake_server
from tests.memory_helpers import add, api_settings, service_for

fake_openai = fake_server.fake_openai

SECRET = "Dr. Wu's address is wu.dentist@example.com, phone +1 (415) 555-0134, card 4111 1111 1111 1111"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("write to wu.dentist@example.com today", f"write to {EMAIL} today"),
        ("邮箱 张伟@例子.com", f"邮箱 {EMAIL}"),
        ("call +1 (415) 555-0134 after six", f"call {PHONE} after six"),
        ("her number is 020-7946-0958", f"her number is {PHONE}"),
        ("my card is 4111-1111-1111-1111", f"my card is {CARD}"),
        ("passport 123456789 renewed", f"passport {ID} renewed"),
        ("身份证 11010119900307451X", f"身份证 {ID}"),
        ("ssn 123-45-6789", f"ssn {ID}"),
    ],
)
def test_what_identifies_a_person_is_masked(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "paid 120 euros on 2026-03-01 at 14:30",
        "born in 1990, three kids, flat 4B",
        "version 1.2.3 runs on 10.0.0.1",
        "order #12345 arrives on 07.12.2026",
        "Likes green tea",
        "",
    ],
)
def test_dates_prices_and_short_numbers_stay(text: str) -> None:
    assert redact(text) == text


def test_the_api_embedder_is_sent_masked_text_and_the_store_keeps_it_whole(
    tmp_path: Path, fake_openai: fake_server.FakeOpenAI
) -> None:
    service = service_for(tmp_path, api_settings(fake_openai.url))
    try:
        record_id = add(service, SECRET)
        assert service.get(record_id).l0 == SECRET
        service.search(SearchRequest(query="how do I reach wu.dentist@example.com", mode="vector"))
    finally:
        service.close()
    sent = [item for r in fake_openai.requests_to("/embeddings") for item in _inputs(r.body)]
    assert sent, "the API embedder was called"
    joined = "\n".join(sent)
    for private in ("wu.dentist@example.com", "555-0134", "4111"):
        assert private not in joined
    assert f"Dr. Wu's address is {EMAIL}, phone {PHONE}, card {CARD}" in sent
    assert f"how do I reach {EMAIL}" in sent


def test_redaction_can_be_turned_off_for_an_api_embedder(
    tmp_path: Path, fake_openai: fake_server.FakeOpenAI
) -> None:
    service = service_for(tmp_path, api_settings(fake_openai.url, redact=False))
    try:
        add(service, SECRET)
    finally:
        service.close()
    sent = [item for r in fake_openai.requests_to("/embeddings") for item in _inputs(r.body)]
    assert SECRET in sent


def test_a_local_embedder_embeds_the_text_as_it_is(tmp_path: Path) -> None:
    """The packaged model sends nothing out: the same text with and without `redact` gives one vector."""
    import numpy as np

    plain = service_for(tmp_path / "plain", Settings())
    masked = service_for(tmp_path / "masked", Settings(memory={"embedding": {"redact": True}}))
    try:
        one = plain.embedder().embed_passages([SECRET])
        other = masked.embedder().embed_passages([SECRET])
        redacted = plain.embedder().embed_passages([redact(SECRET)])
    finally:
        plain.close()
        masked.close()
    assert np.array_equal(one, other)
    assert not np.allclose(one, redacted)


def _inputs(body: object) -> list[str]:
    assert isinstance(body, dict)
    value = body.get("input", [])
    return [value] if isinstance(value, str) else list(value)
