"""The pieces behind "remember that …": where sentences end (extraction/sentences.py) and the rewrite to
the third person, complete or not at all (extraction/person.py)."""

from __future__ import annotations

import pytest

from openclaw_cli.memory.extraction.person import third_person
from openclaw_cli.memory.extraction.sentences import clauses, sentences

SENTENCES = [
    ("My dentist is Dr. Wu. I like tea.", ["My dentist is Dr. Wu.", "I like tea."]),
    (
        "I arrive at 7 a.m. on Monday. I leave at 5 p.m.",
        ["I arrive at 7 a.m. on Monday.", "I leave at 5 p.m."],
    ),
    ("I arrive at 7 a.m. My wife arrives at 9.", ["I arrive at 7 a.m.", "My wife arrives at 9."]),
    ("I live at 12 St. James St. My wife is Ana.", ["I live at 12 St. James St.", "My wife is Ana."]),
    ("Take vitamin D, e.g. in winter. Thanks", ["Take vitamin D, e.g. in winter.", "Thanks"]),
    ("We moved to the U.S. in 2019.", ["We moved to the U.S. in 2019."]),
    ("Mail wu@example.com. Version v2.3 works.", ["Mail wu@example.com.", "Version v2.3 works."]),
    ("See https://example.com/a.b?c=1 now", ["See https://example.com/a.b?c=1 now"]),
    ("The rate is 3.5% today", ["The rate is 3.5% today"]),
    ("我的医生是Dr. Wu。我喜欢茶", ["我的医生是Dr. Wu。", "我喜欢茶"]),
    ("我的牙医是吴医生，在榆树街。我讨厌香菜！", ["我的牙医是吴医生，在榆树街。", "我讨厌香菜！"]),
    ("Wait... what? Really!", ["Wait...", "what?", "Really!"]),
    ('He said "call me." Then left', ['He said "call me."', "Then left"]),
]


@pytest.mark.parametrize(("text", "expected"), SENTENCES, ids=[row[0][:30] for row in SENTENCES])
def test_sentences_end_only_where_a_sentence_ends(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


CLAUSES = [
    (
        "my locker code is 4417 and my doctor is Dr Alvarez",
        ["my locker code is 4417", "my doctor is Dr Alvarez"],
    ),
    ("I live in Berlin; I work in Potsdam", ["I live in Berlin", "I work in Potsdam"]),
    ("my wife and I like hiking", ["my wife and I like hiking"]),  # "my wife" states nothing
    ("I like tea and coffee", ["I like tea and coffee"]),
    ("when I travel, I need an aisle seat", ["when I travel, I need an aisle seat"]),
    ("我喜欢咖啡，我讨厌西兰花", ["我喜欢咖啡", "我讨厌西兰花"]),
    ("我喜欢咖啡，也喜欢茶", ["我喜欢咖啡，也喜欢茶"]),
    ("我的牙医是吴医生，在榆树街", ["我的牙医是吴医生，在榆树街"]),
    ("我们周五开会，我负责记录", ["我们周五开会，我负责记录"]),
]


@pytest.mark.parametrize(("text", "expected"), CLAUSES, ids=[row[0][:30] for row in CLAUSES])
def test_a_compound_is_cut_only_into_whole_statements(text: str, expected: list[str]) -> None:
    assert clauses(text) == expected


REWRITES = [
    ("my locker code is 4417", "User's locker code is 4417"),
    ("I prefer oat milk in my coffee", "User prefers oat milk in their coffee"),
    ("my kids call me Papa Bear", "User's kids call the user Papa Bear"),
    ("Mrs. Lee is my landlady", "Mrs. Lee is the user's landlady"),
    ("I usually go to bed at 11", "User usually goes to bed at 11"),
    ("I really enjoy chess", "User really enjoys chess"),
    ("I try to run daily", "User tries to run daily"),
    ("I watch films on Fridays", "User watches films on Fridays"),
    (
        "I'm allergic to nuts and I've had a reaction",
        "User is allergic to nuts and the user has had a reaction",
    ),
    ("I'd rather sit by the window", "User would rather sit by the window"),
    ("I don't eat pork", "User does not eat pork"),
    ("I no longer drink coffee", "User no longer drinks coffee"),
    ("I went to Paris in 2019", "User went to Paris in 2019"),
    ("the build is broken", "the build is broken"),
    ("我的牙医是吴医生", "用户的牙医是吴医生"),
]
# Kept exactly as said: present or past unknown, or a group.
UNCHANGED = [
    "I quit smoking",
    "I read a lot",
    "we moved to Berlin",
    "our wifi password is hunter2",
    "我们周五开会",
]


@pytest.mark.parametrize(("text", "expected"), REWRITES, ids=lambda v: str(v)[:30])
def test_the_person_is_rewritten_completely(text: str, expected: str) -> None:
    assert third_person(text) == expected


def test_addresses_keep_their_words() -> None:
    assert third_person("my site is my.example.com and mail me at me@example.com") == (
        "User's site is my.example.com and mail the user at me@example.com"
    )


@pytest.mark.parametrize("text", UNCHANGED)
def test_what_cannot_be_rewritten_completely_is_not_rewritten_at_all(text: str) -> None:
    assert third_person(text) in (None, text)  # None: keep the words as said
