"""Write fixtures/importance/conversations.jsonl: whole conversations for the importance-pruning eval.

Each conversation (English or Chinese) opens with a greeting, states four facts about the user early
(a name, a date, a place, a number, an instruction or a decision) among small talk, then goes on with
long task talk (recipes, code, trips, with tool calls and their own numbers, "don'ts" and names), and
ends with questions about the facts. The eval (tests/importance_eval.py) asks each question at the end
of the conversation and looks for the fact's needle in what each pruning strategy keeps.

The phrases are written by hand in fixtures/importance/src/phrases.json; this script only draws from
them, with a fixed seed per conversation (the output is deterministic). Half the conversations are for
tuning the rules, half for the report; each fact has three phrasings and the third is used only in the
report half, so the report also measures phrasings the rules were not tuned on.

    python tools/gen_importance_conversations.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "importance"
PHRASES = FIXTURES / "src" / "phrases.json"
OUT = FIXTURES / "conversations.jsonl"
PER_LANGUAGE = 24  # 48 conversations: 24 tuning, 24 report
FACTS_PER_CONVERSATION = 4
TOOL_CALL_SHARE = 0.35  # of task requests answered after a web_search call


def _some(rng: random.Random, sentences: list[str], count: int) -> list[str]:
    """`count` of the sentences, in their order (an answer reads in order)."""
    return [sentences[i] for i in sorted(rng.sample(range(len(sentences)), count))]


class _Writer:
    """One conversation being written: its messages and the numbering of its tool calls."""

    def __init__(self, rng: random.Random, phrases: dict[str, Any], lang: str) -> None:
        self.rng, self.phrases, self.lang = rng, phrases, lang
        self.joiner = " " if lang == "en" else ""
        self.messages: list[dict[str, Any]] = []
        self.calls = 0

    def say(self, role: str, content: str, **extra: Any) -> None:
        self.messages.append({"role": role, "content": content, **extra})

    def small_talk(self) -> None:
        self.say("user", self.rng.choice(self.phrases["smallTalk"]))
        self.say("assistant", self.rng.choice(self.phrases["smallReplies"]))

    def task(self) -> None:
        rng = self.rng
        task = rng.choice(self.phrases["tasks"])
        request, sentences = task["request"], task["sentences"]
        self.say("user", request)
        if rng.random() < TOOL_CALL_SHARE:
            self.calls += 1
            call_id = f"call-{self.calls}"
            arguments = json.dumps({"query": request}, ensure_ascii=False)
            function = {"name": "web_search", "arguments": arguments}
            self.say("assistant", "", toolCalls=[{"id": call_id, "type": "function", "function": function}])
            self.say("tool", self.phrases["searchResults"].format(q=request), toolCallId=call_id)
        self.say("assistant", self.joiner.join(_some(rng, sentences, rng.randint(4, len(sentences)))))
        if rng.random() < 0.5:
            self.say("user", rng.choice(self.phrases["followUps"]))
            self.say("assistant", self.joiner.join(_some(rng, sentences, 2)))

    def filler(self, small_talk_share: float) -> None:
        if self.rng.random() < small_talk_share:
            self.small_talk()
        else:
            self.task()


def conversation(phrases: dict[str, Any], number: int, lang: str, split: str) -> dict[str, Any]:
    rng = random.Random(f"importance-{lang}-{number}")
    values = {slot: rng.choice(options) for slot, options in phrases["slots"].items()}
    writer = _Writer(rng, phrases, lang)
    writer.say("user", phrases["opening"])
    writer.say("assistant", rng.choice(phrases["smallReplies"]))
    probes = []
    phrasings = 3 if split == "report" else 2  # the third phrasing is held out of tuning
    for kind in rng.sample(sorted(phrases["facts"]), FACTS_PER_CONVERSATION):
        for _ in range(rng.randint(0, 2)):
            writer.filler(0.6)
        fact = phrases["facts"][kind]
        writer.say("user", fact["phrasings"][rng.randrange(phrasings)].format(**values))
        needle = fact["needle"].format(**values) if "{" in fact["needle"] else values[fact["needle"]]
        writer.say("assistant", f"{fact['ack']} ({needle})" if rng.random() < 0.3 else fact["ack"])
        probes.append({"kind": kind, "question": fact["question"].format(**values), "needle": needle})
    for _ in range(rng.randint(9, 14)):  # the conversation goes on long after the facts
        writer.filler(0.4)
    return {"id": f"{lang}-{number:02d}", "lang": lang, "split": split, "messages": writer.messages,
            "probes": probes}  # fmt: skip


def build() -> list[dict[str, Any]]:
    phrases = json.loads(PHRASES.read_text(encoding="utf-8"))
    return [
        conversation(phrases[lang], number, lang, "tune" if number % 2 == 0 else "report")
        for lang in ("en", "zh")
        for number in range(PER_LANGUAGE)
    ]


def main() -> None:
    lines = [json.dumps(item, ensure_ascii=False) for item in build()]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} conversations to {OUT}")


if __name__ == "__main__":
    main()
