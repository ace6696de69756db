"""Turn the hand-written dialogues in fixtures/eval/src/conversations.txt into the eval set's JSONL files.

    python tools/build_conversations.py            # (re)write conversations.jsonl and conversation_queries.jsonl
    python tools/build_conversations.py --out DIR  # write both files into DIR instead

The dialogues and questions are written by hand; this script only numbers the turns, stamps them, and
resolves the questions' [#tag] references to turn ids. Output is deterministic.
"""

from __future__ import annotations

import argparse
import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EVAL_DIR = ROOT / "fixtures" / "eval"
SOURCE = EVAL_DIR / "src" / "conversations.txt"
TURN_GAP = timedelta(seconds=45)

CJK = re.compile(r"[\u4e00-\u9fff]")
KANA = re.compile(r"[\u3040-\u30ff]")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
TAG = re.compile(r"\s*\[#([\w-]+)\]\s*$")
# "=> a|b c (aspect)": two pieces of evidence, the first stated by turn a or (just as directly) by turn b.
QUESTION = re.compile(r"^Q: (?P<query>.+?) => (?P<tags>[\w\-| ]+?) \((?P<aspect>[\w ]+)\)$")


def script_of(text: str) -> str:
    if KANA.search(text):
        return "ja"
    if not CJK.search(text):
        return "en"
    return "mixed" if LATIN_WORD.search(text) else "zh"


def parse(source: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    turns: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    tags: dict[str, str] = {}
    conv = ""
    users: dict[str, str] = {}
    session = ""
    start = datetime.min
    turn_no = 0
    pending: list[tuple[str, str, str, int]] = []  # questions resolved after all tags are known
    for number, raw in enumerate(source.splitlines(), start=1):
        line = raw.rstrip()
        if line.startswith("# conv "):
            parts = line.split()  # "# conv NN USER" (dialogue) or "# conv NN ..." (its questions)
            conv = parts[2]
            if len(parts) == 4 and parts[3].startswith("u-"):
                users[conv] = parts[3]
        elif line.startswith("## s"):
            label, stamp = line[3:].split()
            session = f"{conv}-{label}"
            start = datetime.fromisoformat(stamp)
            turn_no = 0
        elif line.startswith(("U: ", "A: ")):
            turn_no += 1
            text = line[3:]
            match = TAG.search(text)
            if match:
                text = text[: match.start()]
                assert match.group(1) not in tags, f"line {number}: tag {match.group(1)} used twice"
            speaker = "user" if line[0] == "U" else "assistant"
            turn_id = f"c-{conv}-{session.rsplit('-', 1)[1][1:]}-{turn_no:02d}"
            if match:
                tags[match.group(1)] = turn_id
            name = "User" if speaker == "user" else "Assistant"
            turns.append(
                {
                    "id": turn_id,
                    "userId": users[conv],
                    "scope": "user",
                    "category": "event",
                    "l0": f"{name}: {text}",
                    "l1": "",
                    "session": f"s-{session}",
                    "turn": turn_no,
                    "speaker": speaker,
                    "ts": (start + TURN_GAP * (turn_no - 1)).isoformat(),
                }
            )
        elif line.startswith("Q: "):
            match = QUESTION.match(line)
            assert match, f"line {number}: malformed question"
            pending.append((match["query"], match["tags"], match["aspect"], number))
            questions.append({"conv": conv})
    resolved = []
    for (query, tag_text, aspect, number), meta in zip(pending, questions, strict=True):
        evidence: list[list[str]] = []
        for piece in tag_text.split():
            for tag in piece.split("|"):
                assert tag in tags, f"line {number}: unknown tag {tag}"
            evidence.append([tags[tag] for tag in piece.split("|")])
        expected = [turn for piece in evidence for turn in piece]
        owner = next(t["userId"] for t in turns if t["id"] == expected[0])
        assert meta["conv"] == expected[0].split("-")[1], (
            f"line {number}: question under the wrong conversation"
        )
        resolved.append(
            {
                "query": query,
                "expected": expected,
                "evidence": evidence,
                "userId": owner,
                "kind": "conversation",
                "language": script_of(query),
                "aspect": aspect.split(),
            }
        )
    return turns, resolved


def render(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=EVAL_DIR)
    args = parser.parse_args()
    turns, questions = parse(SOURCE.read_text(encoding="utf-8"))
    (args.out / "conversations.jsonl").write_text(render(turns), encoding="utf-8")
    (args.out / "conversation_queries.jsonl").write_text(render(questions), encoding="utf-8")


if __name__ == "__main__":
    main()
