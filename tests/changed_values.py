"""Seed 000 §6.2 trap 1 ("a changed fact overwritten or lost"), extended by issue 48 item 1: the same fact
with one value changed, in English and Chinese. Each case is said as a person says it ("remember that …")
and stored as the pattern rewrites it; the write path must keep the new value: a profile fact replaces
the old one (with a history row), anything else is kept beside it. Never "a duplicate".
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Change:
    name: str
    category: str
    old_said: str
    new_said: str
    old: str  # the stored L0 of old_said
    new: str

    @property
    def replaces(self) -> bool:
        """A profile fact: the new value replaces the old one; elsewhere both are kept."""
        return self.category == "profile"


CHANGES = [
    Change(
        "passport-en",
        "profile",
        "remember that my passport number is ALICEHKPASS4417",
        "remember that my passport number is ALICEWSPASS4417",
        "User's passport number is ALICEHKPASS4417",
        "User's passport number is ALICEWSPASS4417",
    ),
    Change(
        "phone-en",
        "profile",
        "remember that my phone number is 415-555-0123",
        "remember that my phone number is 415-555-0187",
        "User's phone number is 415-555-0123",
        "User's phone number is 415-555-0187",
    ),
    Change(
        "card-en",
        "profile",
        "remember that my credit card ends in 4417",
        "remember that my credit card ends in 9012",
        "User's credit card ends in 4417",
        "User's credit card ends in 9012",
    ),
    Change(
        "no-longer-likes-en",
        "preference",
        "remember that I like oysters",
        "remember that I no longer like oysters",
        "User likes oysters",
        "User no longer likes oysters",
    ),
    Change(
        "3pm-4pm-en",
        "event",
        "remember that the weekly sync is at 3 pm",
        "remember that the weekly sync is at 4 pm",
        "The weekly sync is at 3 pm",
        "The weekly sync is at 4 pm",
    ),
    Change(
        "300-3000-yen-en",
        "event",
        "remember that the hotel costs ¥300 a night",
        "remember that the hotel costs ¥3000 a night",
        "The hotel costs ¥300 a night",
        "The hotel costs ¥3000 a night",
    ),
    Change(
        "lin-lan-en",
        "profile",
        "remember that my manager is Lin",
        "remember that my manager is Lan",
        "User's manager is Lin",
        "User's manager is Lan",
    ),
    Change(
        "passport-zh",
        "profile",
        "记住我的护照号码是E12345678",
        "记住我的护照号码是E87654321",
        "用户的护照号码是E12345678",
        "用户的护照号码是E87654321",
    ),
    Change(
        "phone-zh",
        "profile",
        "记住我的手机号是13800138000",
        "记住我的手机号是13900139000",
        "用户的手机号是13800138000",
        "用户的手机号是13900139000",
    ),
    Change(
        "card-zh",
        "profile",
        "记住我的银行卡尾号是4417",
        "记住我的银行卡尾号是9012",
        "用户的银行卡尾号是4417",
        "用户的银行卡尾号是9012",
    ),
    Change(
        "no-longer-likes-zh",
        "preference",
        "记住我喜欢吃生蚝",
        "记住我不再喜欢吃生蚝了",
        "用户喜欢吃生蚝",
        "用户不再喜欢吃生蚝了",
    ),
    Change("3pm-4pm-zh", "event", "记住周会在下午3点", "记住周会在下午4点", "周会在下午3点", "周会在下午4点"),
    Change(
        "300-3000-yuan-zh",
        "event",
        "记住酒店每晚300元",
        "记住酒店每晚3000元",
        "酒店每晚300元",
        "酒店每晚3000元",
    ),
    Change(
        "lin-lan-zh",
        "profile",
        "记住我的经理是林先生",
        "记住我的经理是兰先生",
        "用户的经理是林先生",
        "用户的经理是兰先生",
    ),
]
IDS = [change.name for change in CHANGES]


def expected_live(change: Change) -> list[str]:
    """The L0s the person's memories hold afterwards."""
    return [change.new] if change.replaces else sorted([change.old, change.new])
