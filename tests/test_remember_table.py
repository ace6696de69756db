"""Issue 48 item 0: "remember that …" keeps the whole fact, in English and Chinese.

Every row is a real-world message and what it must store: abbreviations ("Dr.", "a.m.", "e.g.", "U.S."),
decimals, times, versions, URLs, e-mail addresses and the Chinese comma never end a fact; a compound
statement is cut only into whole first-person statements; the words are rewritten to the third person
completely or kept as said ("I quit …": present or past is unknown; "we/our": a group); the category comes
from the content ("remember to buy milk" is a task, an event, not a profile fact).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_cli.memory.extraction.patterns import find_memories
from tests.conftest import run_cli
from tests.extract_support import World, settings_for

# (message, [(category, stored L0), …])
TABLE: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "remember that my dentist is Dr. Wu on Elm Street",
        [("profile", "User's dentist is Dr. Wu on Elm Street")],
    ),
    (
        "remember that my flight leaves at 7 a.m. on Monday",
        [("event", "User's flight leaves at 7 a.m. on Monday")],
    ),
    ("remember that the meeting moved to 3.30pm", [("event", "The meeting moved to 3.30pm")]),
    (
        "remember that my locker code is 4417 and my doctor is Dr Alvarez",
        [("profile", "User's locker code is 4417"), ("profile", "User's doctor is Dr Alvarez")],
    ),
    (
        "remember that I prefer oat milk in my coffee",
        [("preference", "User prefers oat milk in their coffee")],
    ),
    ("Remember that my sister lives in the U.S. now.", [("profile", "User's sister lives in the U.S. now")]),
    (
        "Please remember that I take vitamin D, e.g. in winter.",
        [("profile", "User takes vitamin D, e.g. in winter")],
    ),
    ("remember that my email is wu@example.com", [("profile", "User's email is wu@example.com")]),
    (
        "remember that our staging URL is https://staging.example.com/v2.3/api",
        [("event", "Our staging URL is https://staging.example.com/v2.3/api")],
    ),
    ("remember that I use Python 3.12 at work", [("profile", "User uses Python 3.12 at work")]),
    ("remember that my address is 12 St. James St.", [("profile", "User's address is 12 St. James St.")]),
    ("Remember: my blood type is O negative.", [("profile", "User's blood type is O negative")]),
    ("remember that Mrs. Lee is my landlady", [("profile", "Mrs. Lee is the user's landlady")]),
    (
        "remember that my son's teacher is Mr. J. K. Brown",
        [("profile", "User's son's teacher is Mr. J. K. Brown")],
    ),
    ("remember that the rent is $1,250.50 a month", [("event", "The rent is $1,250.50 a month")]),
    (
        "remember that my train leaves at 6:45 p.m. on Fridays",
        [("event", "User's train leaves at 6:45 p.m. on Fridays")],
    ),
    ("remember that my weight is 72.5 kg", [("profile", "User's weight is 72.5 kg")]),
    ("remember that I was born in the U.K. in 1990", [("profile", "User was born in the U.K. in 1990")]),
    ("remember that my wife and I like hiking", [("preference", "User's wife and the user like hiking")]),
    ("remember that I don't eat pork", [("profile", "User does not eat pork")]),
    ("remember that I can't drink milk", [("profile", "User cannot drink milk")]),
    ("remember that I quit smoking last year", [("event", "I quit smoking last year")]),
    ("remember to buy milk", [("event", "User needs to buy milk")]),
    ("note the build is broken", [("event", "The build is broken")]),
    (
        "note that the printer on floor 3 is out of toner",
        [("event", "The printer on floor 3 is out of toner")],
    ),
    (
        "Don't forget that my passport expires on 2027-03-14.",
        [("profile", "User's passport expires on 2027-03-14")],
    ),
    ("remember that my favourite band is Sigur Rós", [("preference", "User's favourite band is Sigur Rós")]),
    (
        "remember that my phone number is +1 (415) 555-0123",
        [("profile", "User's phone number is +1 (415) 555-0123")],
    ),
    ("remember that I work at Acme Corp. as a nurse", [("profile", "User works at Acme Corp. as a nurse")]),
    ("remember that my Wi-Fi password is Tr0ub4dor&3", [("profile", "User's Wi-Fi password is Tr0ub4dor&3")]),
    (
        "remember that my manager's name is Lin and my mentor is Lan",
        [("profile", "User's manager's name is Lin"), ("profile", "User's mentor is Lan")],
    ),
    (
        "remember that I live in Berlin, and I work in Potsdam",
        [("profile", "User lives in Berlin"), ("profile", "User works in Potsdam")],
    ),
    ("remember that I like tea and coffee", [("preference", "User likes tea and coffee")]),
    (
        "remember that I hate cilantro, but I love basil",
        [("preference", "User hates cilantro"), ("preference", "User loves basil")],
    ),
    ("remember this: my car is a 2015 Honda Civic", [("profile", "User's car is a 2015 Honda Civic")]),
    ("remember that my daughter's birthday is Jan. 5", [("profile", "User's daughter's birthday is Jan. 5")]),
    ("remember that my flat is No. 4, Apt. 12", [("profile", "User's flat is No. 4, Apt. 12")]),
    ("remember that I always sit in seat 14C", [("profile", "User always sits in seat 14C")]),
    ("Remember that I'm allergic to penicillin.", [("profile", "User is allergic to penicillin")]),
    ("remember that I've been vegetarian since 2010", [("profile", "User has been vegetarian since 2010")]),
    ("remember that I'll be in Tokyo next week", [("event", "User will be in Tokyo next week")]),
    ("remember that my kids call me Papa Bear", [("profile", "User's kids call the user Papa Bear")]),
    (
        "remember that my doctor told me to walk 10,000 steps a day",
        [("profile", "User's doctor told the user to walk 10,000 steps a day")],
    ),
    (
        "remember that the Wi-Fi at the office is slow; my desk is B-12",
        [("profile", "The Wi-Fi at the office is slow; User's desk is B-12")],
    ),
    (
        "I like jazz. My name is Lin Wei.",
        [("preference", "User likes jazz"), ("profile", "User's name is Lin Wei")],
    ),
    (
        "I prefer window seats. Remember that my frequent flyer number is UA123456789.",
        [
            ("preference", "User prefers window seats"),
            ("profile", "User's frequent flyer number is UA123456789"),
        ],
    ),
    ("记住我的牙医是吴医生，在榆树街", [("profile", "用户的牙医是吴医生，在榆树街")]),
    ("记住我的生日是5月3日。", [("profile", "用户的生日是5月3日")]),
    ("记住，我对花生过敏", [("profile", "用户对花生过敏")]),
    ("记住我的航班是周一早上7点", [("event", "用户的航班是周一早上7点")]),
    ("记住我的车牌号是沪A·12345", [("profile", "用户的车牌号是沪A·12345")]),
    ("记住我每个月房租是3000元，押一付三", [("profile", "用户每个月房租是3000元，押一付三")]),
    ("记住我们周五开会", [("event", "我们周五开会")]),
    ("记住要买牛奶", [("event", "用户要买牛奶")]),
    ("请记住：我在杭州工作，我住在西湖区", [("profile", "用户在杭州工作"), ("profile", "用户住在西湖区")]),
    ("记住我喜欢喝咖啡，不加糖", [("preference", "用户喜欢喝咖啡，不加糖")]),
    ("记住我的护照号码是E12345678。", [("profile", "用户的护照号码是E12345678")]),
    ("记住我不再喝酒了", [("profile", "用户不再喝酒了")]),
    ("记住我的经理是林先生", [("profile", "用户的经理是林先生")]),
    ("记住会议改到下午3点半", [("event", "会议改到下午3点半")]),
    ("记住我的邮箱是wu@example.com", [("profile", "用户的邮箱是wu@example.com")]),
    ("记住我用的是Python 3.12", [("profile", "用户用的是Python 3.12")]),
    ("我喜欢喝咖啡，我讨厌西兰花。", [("preference", "用户喜欢喝咖啡"), ("preference", "用户讨厌西兰花")]),
    ("我叫林伟。我是前端工程师", [("profile", "用户叫林伟"), ("profile", "用户是前端工程师")]),
    ("记住我女儿叫朵朵，今年5岁", [("profile", "用户女儿叫朵朵，今年5岁")]),
    ("记住我的体重是72.5公斤", [("profile", "用户的体重是72.5公斤")]),
    ("记住我的医生是Dr. Wu", [("profile", "用户的医生是Dr. Wu")]),
]


def test_the_table_is_large_and_in_both_languages() -> None:
    chinese = [text for text, _ in TABLE if any("\u4e00" <= ch <= "\u9fff" for ch in text)]
    assert len(TABLE) >= 60 and len(chinese) >= 15 and len(TABLE) - len(chinese) >= 40


@pytest.mark.parametrize(("text", "expected"), TABLE, ids=[text[:40] for text, _ in TABLE])
def test_each_remembered_sentence_keeps_its_whole_fact(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(m.category, m.l0) for m in find_memories(text)] == expected


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Every row said in a real session and written at once by remember_now (real SQLite, the local
    embedder), each by a person of its own so that no row is deduplicated against another."""
    world = World(tmp_path_factory.mktemp("remember") / "home", settings_for(None))
    try:
        out: dict[str, list[str]] = {}
        for number, (text, _) in enumerate(TABLE):
            person = f"p{number}"
            message = world.say(text, sender=person)
            outcomes = world.extraction.remember_now(world.session_id, message, person)
            assert all(o.action == "added" for o in outcomes), [(o.action, o.reason) for o in outcomes]
            out[text] = sorted(r.l0 for r in world.memory.list_records() if r.user_id == person)
        return out
    finally:
        world.close()


@pytest.mark.parametrize(("text", "expected"), TABLE, ids=[text[:40] for text, _ in TABLE])
def test_remember_now_stores_the_whole_fact(
    stored: dict[str, list[str]], text: str, expected: list[tuple[str, str]]
) -> None:
    asked = [m.l0 for m in find_memories(text) if m.explicit]
    assert stored[text] == sorted(asked)
    assert set(asked) <= {l0 for _, l0 in expected}


def test_the_issue_reproduction_through_chat_stores_whole_facts(tmp_path: Path) -> None:
    """The exact session of the issue, with no model configured: `openclaw chat --local`, then
    `openclaw memory list`."""
    home = tmp_path / "home"
    lines = (
        "remember that my dentist is Dr. Wu on Elm Street\n"
        "remember that my flight leaves at 7 a.m. on Monday\n"
        "remember that the meeting moved to 3.30pm\n"
        "记住我的牙医是吴医生，在榆树街\n"
    )
    chat = run_cli(home, "chat", "--local", input=lines)
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.count("Saved to memory") + chat.stderr.count("Saved to memory") == 4
    listed = run_cli(home, "memory", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert sorted(r["l0"] for r in listed.json()) == sorted(
        [
            "User's dentist is Dr. Wu on Elm Street",
            "User's flight leaves at 7 a.m. on Monday",
            "The meeting moved to 3.30pm",
            "用户的牙医是吴医生，在榆树街",
        ]
    )
