"""writing/values.py: which pairs of texts state other values (never "the same meaning"), which state
the same ones written differently, and which are the same fact with a new value."""

from __future__ import annotations

import pytest

from openclaw_cli.memory.writing.values import value_change

# (old, new, the values that changed as "old -> new", same fact)
CHANGED = [
    (
        "User's passport number is ALICEHKPASS4417",
        "User's passport number is ALICEWSPASS4417",
        "ALICEHKPASS4417 -> ALICEWSPASS4417",
        True,
    ),
    ("User's phone number is 415-555-0123", "User's phone number is 415-555-0187", "123 -> 187", True),
    ("用户的手机号是13800138000", "用户的手机号是13900139000", "13800138000 -> 13900139000", True),
    ("User's card ends in 4417", "User's card ends in 9012", "4417 -> 9012", True),
    ("User likes oysters", "User no longer likes oysters", "nothing -> no longer", True),
    ("User likes oysters", "User doesn't like oysters", "nothing -> not", False),
    ("用户喜欢吃生蚝", "用户不再喜欢吃生蚝了", "nothing -> 不再", True),
    ("The sync is at 3 pm", "The sync is at 4 pm", "15:00 -> 16:00", True),
    ("The sync is at 3:30 p.m.", "The sync is at 3:45 p.m.", "15:30 -> 15:45", True),
    ("周会在下午三点", "周会在下午四点", "3 -> 4", True),
    ("The hotel costs ¥300 a night", "The hotel costs ¥3000 a night", "¥300 -> ¥3000", True),
    ("The hotel costs $300 a night", "The hotel costs €300 a night", "$300 -> €300", True),
    ("酒店每晚300元", "酒店每晚3000元", "¥300 -> ¥3000", True),
    ("User's manager is Lin", "User's manager is Lan", "Lin -> Lan", True),
    ("Lin is the user's manager", "Lan is the user's manager", "Lin -> Lan", True),
    ("用户的经理是林先生", "用户的经理是兰先生", "林 -> 兰", True),
    ("用户的女儿叫朵朵", "用户的女儿叫豆豆", "朵朵 -> 豆豆", True),
    ("Deploy of v2.3 failed", "Deploy of v2.4 failed", "3 -> 4", True),
    ("Weighs 72.5 kg", "Weighs 75 kg", "72.5 -> 75", True),
    (
        "User's email is lin@old.example",
        "User's email is lin@new.example",
        "lin@old.example -> lin@new.example",
        True,
    ),
    ("Dentist appointment on Monday", "Dentist appointment on Friday", "monday -> friday", True),
    ("Dentist appointment tomorrow", "Dentist appointment today", "tomorrow -> today", True),
    ("周一和老王开会", "周五和老王开会", "周一 -> 周五", True),
    ("Runs 10 km a week", "Runs 25 km a week now", "10 -> 25", False),
]

# Written differently, the same values.
SAME = [
    ("Meeting at 3 pm", "Meeting at 3pm"),
    ("Meeting at 3 pm", "Meeting at 15:00"),
    ("Rent is $1,250.50", "Rent is $1250.5"),
    ("下午三点开会", "下午3点开会"),
    ("房租三千块", "房租3000元"),
    ("十五岁", "15岁"),
    ("Birthday is on March 3", "The user's birthday is on March 03"),
    ("Prefers TypeScript over Java", "The user prefers TypeScript to Java"),  # "Prefers" is no name
    ("Deploys with Docker Compose", "Uses Docker Compose for deployments"),
    ("用 Go 写后端服务", "用Go写后端服务"),
    ("Lives in Berlin", "住在柏林"),  # a translation: a Latin name is compared only with Latin text
    ("I like coffee", "I really like coffee"),
    ("Hates broccoli", "讨厌西兰花"),
    ("Dislikes long email threads", "Does not like long email threads"),  # no negation word on one side:
]


@pytest.mark.parametrize(("old", "new", "shown", "same_fact"), CHANGED, ids=[row[1][:40] for row in CHANGED])
def test_texts_with_other_values_are_a_change(old: str, new: str, shown: str, same_fact: bool) -> None:
    change = value_change(new, old)
    assert change is not None
    assert change.describe() == shown
    assert change.same_fact is same_fact


@pytest.mark.parametrize(("old", "new"), SAME[:-1], ids=[row[1][:40] for row in SAME[:-1]])
def test_the_same_values_written_differently_are_no_change(old: str, new: str) -> None:
    assert value_change(new, old) is None


def test_a_negation_against_none_is_a_change_even_when_the_verb_says_it() -> None:
    """ "Dislikes" carries its negation in the verb; "does not like" in a word: the words differ, so the
    pair is not called the same by its values (the cosine and the judge decide, nothing is dropped)."""
    old, new = SAME[-1]
    change = value_change(new, old)
    assert change is not None and change.new == ("not",) and not change.same_fact


def test_a_bare_value_is_not_a_fact_of_its_own() -> None:
    change = value_change("Lan", "Lin")
    assert change is not None and not change.same_fact
