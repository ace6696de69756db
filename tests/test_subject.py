"""Whose memory is it (subject.py), and the cast of names a store learns as it is written (people.py).

The text rules are checked directly; the table is checked through real stores: written by every writer
(add, import, merge), filled by the migration from older databases, and emptied by purge."""

from __future__ import annotations

import pytest

from openclaw_cli.memory.text import subject
from openclaw_cli.memory.text.subject import Subject

NAMES = frozenset({"Bob", "Lin Xiao", "高峰", "老周"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Lin's neighbour Wang Hao has a grey cat named Mochi.", Subject("neighbour", "Wang Hao")),
        ("His climbing buddy Daniel tends to over-engineer.", Subject("friend", "Daniel")),
        ("The user's teammate Song Jia likes Catppuccin.", Subject("colleague", "Song Jia")),
        ("User's friend from university Nina lives in Qingdao.", Subject("friend", "Nina")),
        ("My sister is getting married", Subject("sibling", None)),
        ("林伟的同事老周每天早上一杯气泡水。", Subject("colleague", "老周")),
        ("组里的同事宋佳所有软件都用深色模式。", Subject("colleague", "宋佳")),
        ("大学同学邓超这周值班，有事找他。", Subject("classmate", "邓超")),
        ("妻子陈静是中学英语老师。", Subject("spouse", "陈静")),
        # After the relation, grammar is not a name: 女儿叫朵朵 names 朵朵, 父母住在 names nobody.
        ("女儿叫朵朵，今年六岁。", Subject("child", None)),
        ("父母住在宁波，逢年过节开车回去。", Subject("parent", None)),
        # A niece in either of the two words Chinese has for her is somebody else, not the user.
        ("用户的侄女今年读初中二年级。", Subject("relative", None)),
        ("外甥女下个月来家里住。", Subject("relative", None)),
        ("User: My mum suggested 8,800 yuan.", Subject("parent", None)),
    ],
)
def test_a_relation_at_the_head_names_who_the_memory_is_about(text: str, expected: Subject) -> None:
    assert subject.subject_of(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Has a ginger cat named Niangao (年糕).",
        "Lin's birthday is March 14.",
        "对青霉素过敏，看病时要提醒医生。",
        "Prefers dark themes in every editor and terminal.",
        "Report the bug to the friend channel",  # a relation word that is not at the head after an owner
        "周末带丈母娘去吃了一家湘菜。",
        "高峰期的地铁太挤",  # 高峰 is in the cast, but not in a store that never introduced it
    ],
)
def test_the_users_own_memories_are_about_the_user(text: str) -> None:
    assert subject.subject_of(text).is_user


def test_a_known_name_makes_a_memory_about_that_person() -> None:
    cast = subject.cast_pattern(NAMES)
    assert subject.subject_of("高峰每天早上一杯冷萃。", cast) == Subject(None, "高峰")
    assert subject.subject_of("Remind Lin a week before Bob's birthday.", cast) == Subject(None, "Bob")
    # A Chinese name counts only at the head: without word boundaries a name-like word (a wrong cast
    # entry such as 小组 from 同事小组讨论了…) would otherwise mark every sentence containing it.
    assert subject.subject_of("周三和高峰一起吃饭", cast).is_user
    assert subject.subject_of("周三的小组会议改到下午", subject.cast_pattern(frozenset({"小组"}))).is_user
    # A Latin name is a whole word: Bobby is not Bob, and Lin is not Lin Xiao.
    assert subject.subject_of("Bobby tables again", cast).is_user
    assert subject.subject_of("Lin's birthday is March 14.", cast).is_user


def test_the_query_names_relations_in_either_language_and_known_people() -> None:
    asked = subject.query_subject("what does Lin's wife do", NAMES)
    assert asked.relations == {"spouse"} and not asked.names
    assert subject.query_subject("林伟的妻子做什么工作", NAMES).relations == {"spouse"}
    assert subject.query_subject("where does bob live", NAMES).names == {"Bob"}
    assert subject.query_subject("老周喝什么", NAMES).names == {"老周"}
    assert subject.query_subject("what is he allergic to", NAMES).is_user


def test_a_query_about_a_partner_also_asks_about_the_spouse() -> None:
    # "my partner" is as often a wife or husband as a girlfriend: a memory about the user's husband must
    # not count as somebody else's (x0.3) when the question says partner.
    asked = subject.query_subject("where did my partner grow up")
    assert asked.relations == {"partner", "spouse"}
    assert not subject.mismatch(asked, subject.subject_of("User's husband grew up in Porto."))
    assert subject.mismatch(asked, subject.subject_of("User's sister grew up in Porto."))
    # The cover goes one way: a question about the wife does not take in a boyfriend.
    wife = subject.query_subject("where did my wife grow up")
    assert wife.relations == {"spouse"}
    assert subject.mismatch(wife, subject.subject_of("User's boyfriend grew up in Porto."))


def test_a_latin_name_or_relation_written_against_chinese_text_is_still_found() -> None:
    # Han characters are word characters to \b: "Bob住在哪里" read as no name at all, so Bob's own
    # memory counted as someone else's (x0.3) and fell below the floor.
    assert subject.query_subject("Bob住在哪里", NAMES).names == {"Bob"}
    assert subject.query_subject("Bob的生日是哪天", NAMES).names == {"Bob"}
    assert subject.query_subject("我的boss住在哪", NAMES).relations == {"colleague"}
    assert not subject.query_subject("Bobby住在哪里", NAMES).names
    cast = subject.cast_pattern(NAMES)
    assert subject.subject_of("Bob住在多伦多", cast) == Subject(None, "Bob")


def test_mismatch_spares_the_user_and_whoever_the_query_names() -> None:
    user = subject.query_subject("what coffee does he drink")
    wife = subject.query_subject("what does his wife do")
    bob = subject.query_subject("where does Bob live", NAMES)
    friend_bob = Subject("friend", "Bob")
    assert subject.mismatch(user, friend_bob)
    assert not subject.mismatch(user, subject.USER)
    assert not subject.mismatch(wife, Subject("spouse", "陈静"))
    assert subject.mismatch(wife, Subject("sibling", "Lin Xiao"))
    assert not subject.mismatch(bob, friend_bob)
    assert not subject.mismatch(wife, subject.USER)  # "the wedding is on Oct 11" may be the answer


def test_a_relation_of_someone_else_is_not_the_users_own() -> None:
    """何静的孩子 is a child, but 何静's: a question about his kid is not about it, one about 何静's is."""
    cast = subject.cast_pattern(frozenset({"何静", "Gao Feng", "老周"}))
    their_kid = subject.subject_of("何静的孩子4月21日开家长会。", cast)
    assert their_kid == Subject("child", None, "何静")
    assert subject.mismatch(subject.query_subject("他家孩子几岁了"), their_kid)
    assert not subject.mismatch(
        subject.query_subject("何静的孩子哪天开家长会", frozenset({"何静"})), their_kid
    )
    their_wife = subject.subject_of("Gao Feng's wife is a nurse.", cast)
    assert their_wife == Subject("spouse", None, "Gao Feng")
    assert subject.mismatch(subject.query_subject("what does his wife do"), their_wife)
    names = frozenset({"Gao Feng"})
    assert not subject.mismatch(subject.query_subject("what does Gao Feng's wife do", names), their_wife)
    # The user's own name owns relations too, and is not in the cast: 林伟的同事 is the user's colleague.
    assert subject.subject_of("林伟的同事老周每天早上一杯气泡水。", cast) == Subject("colleague", "老周")


def test_a_child_is_not_a_friend() -> None:
    """小朋友 (a child) holds 朋友 (a friend): the longer word is read first."""
    assert subject.query_subject("小朋友在学哪种水上运动").relations == {"child"}
    assert subject.query_subject("我朋友在学游泳").relations == {"friend"}


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("Assistant: Kevin is the groom?", True),
        ("Assistant: 需要准备什么吗？", True),
        ("她喜欢吃什么呢。", True),
        ("User: Yes, Kevin Zhang, he's an architect.", False),
        ("Opened PR #342?ref=main in the repo", False),
    ],
)
def test_a_memory_that_only_asks(text: str, question: bool) -> None:
    assert subject.is_question(text) is question


def test_what_the_assistant_said() -> None:
    assert subject.said_by_assistant("Assistant: Noted, they'll move in spring.")
    assert subject.said_by_assistant("助手：记下了。")
    assert not subject.said_by_assistant("User: Assistant: is a word I typed")
    assert not subject.said_by_assistant("The assistant should answer in Chinese.")


@pytest.mark.parametrize(
    ("text", "owner"),
    [
        ("Lin's neighbour Wang Hao has a grey cat.", "Lin"),
        ("Lin Wei's sister Lin Xiao lives in Shenzhen.", "Lin Wei"),
        ("林伟的同事老周每天早上一杯气泡水。", "林伟"),
        ("His friend Bob lives in Toronto.", None),  # a pronoun owns nothing nameable
        ("User's friend Bob lives in Toronto.", None),
        ("同事王浩的老婆是中学语文老师。", None),  # the relation comes first: 王浩 is the colleague
        ("Nina's wedding is on October 4.", None),  # no relation named
        ("组里的同事宋佳所有软件都用深色模式。", None),  # 组里 is not a name
    ],
)
def test_the_owner_of_a_relation(text: str, owner: str | None) -> None:
    assert subject.owner_of(text) == owner


@pytest.mark.parametrize(
    ("query", "refers"),
    [
        ("what car does Lin drive", True),  # the user's own name
        ("林伟对什么过敏", True),
        ("what is he allergic to", True),
        ("我用什么编辑器", True),
        ("where do you live", True),  # the assistant asking the user
        ("钢琴", False),  # a topic: anybody's memory may answer it
        ("dark mode", False),
        ("其他的编辑器", False),  # 其他 is "other", not 他
        ("Linus Torvalds wrote git", False),  # whole words only
    ],
)
def test_a_query_refers_to_the_user_by_pronoun_or_own_name(query: str, refers: bool) -> None:
    assert subject.refers_to_user(query, frozenset({"Lin", "林伟"})) is refers
