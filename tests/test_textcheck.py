"""textcheck.find_bad_text: the one check every JSON input path makes for strings that are not text."""

from __future__ import annotations

import json

from openclaw_cli.core.textcheck import find_bad_text


def test_a_lone_surrogate_escape_is_found_with_its_path() -> None:
    value = json.loads('{"text": "ok", "content": {"l0": "fine", "l1": "x\\ud800y"}}')
    bad = find_bad_text(value)
    assert bad is not None
    assert (bad.path, bad.char, bad.position) == ("content.l1", "\ud800", 2)
    expected = "'records[3].content.l1' holds a lone surrogate \\ud800 at character 2"
    assert bad.describe("records[3]") == expected


def test_a_low_surrogate_alone_is_found_in_a_list() -> None:
    bad = find_bad_text(json.loads('{"tags": ["a", "\\udc00"]}'))
    assert bad is not None and bad.path == "tags[1]" and bad.char == "\udc00"


def test_a_surrogate_pair_is_one_character_and_passes() -> None:
    value = json.loads('{"text": "coffee \\ud83d\\ude00", "n": 1, "ok": true, "none": null}')
    assert value["text"].endswith("\U0001f600")
    assert find_bad_text(value) is None


def test_a_bad_key_is_named_printably() -> None:
    bad = find_bad_text(json.loads('{"source": {"k\\ud800": 1}}'))
    assert bad is not None and bad.in_key
    assert bad.path == 'source["k\\ud800"]'  # escaped: the message itself stays printable
    assert bad.describe().startswith("the key source[")
    bad.describe().encode("utf-8")  # no surrogate left in the message


def test_keys_that_are_not_names_are_quoted_in_the_path() -> None:
    bad = find_bad_text({"source": {"chat id": "\ud800"}})
    assert bad is not None and bad.path == 'source["chat id"]'


def test_nul_only_when_asked() -> None:
    assert find_bad_text({"text": "a\x00b"}) is None
    bad = find_bad_text({"text": "a\x00b"}, nul=True)
    assert bad is not None and bad.problem == "a NUL character at character 2"


def test_the_top_level_string_itself() -> None:
    bad = find_bad_text("\ud800")
    assert bad is not None and bad.path == ""
    assert bad.describe() == "the value holds a lone surrogate \\ud800 at character 1"


def test_a_value_deeper_than_the_recursion_limit_is_walked() -> None:
    value: object = "\udfff"
    for _ in range(5000):
        value = [value]
    bad = find_bad_text(value)
    assert bad is not None and bad.path == "[0]" * 5000
