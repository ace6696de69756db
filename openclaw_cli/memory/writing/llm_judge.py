"""The model's say in the grey zone of semantic dedup (seed 000 §6.2, trap 1).

It only ever sees pairs that hashing and cosine similarity could not settle. When the model cannot
answer, the verdict is "different": the candidate is kept as a new memory, and nothing is replaced on a
guess.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, model_validator

from openclaw_cli.llm import calls as llm
from openclaw_cli.memory.text.bounded import bounded

if TYPE_CHECKING:
    from openclaw_cli.config.loading import LlmSettings
    from openclaw_cli.memory.store.records import MemoryRecord
    from openclaw_cli.memory.writing.candidate import Candidate, Verdict


JUDGE_PROMPT = """Two memories about the same user. Decide how the new one relates to the existing one.
- "same": it says the same thing (a repetition, or a paraphrase);
- "update": it is about the same thing but changes or refines it (a new value, a correction);
- "different": it is about something else.
Answer with JSON only: {"verdict": "same" | "update" | "different"}"""


class JudgeReply(BaseModel):
    verdict: str

    @model_validator(mode="after")
    def _known(self) -> JudgeReply:
        self.verdict = self.verdict.strip().lower()
        if self.verdict not in ("same", "update", "different"):
            raise ValueError("verdict must be same, update or different")
        return self


def judge_messages(new_l0: str, new_l1: str | None, old_l0: str, old_l1: str | None) -> list[dict[str, str]]:
    def show(l0: str, l1: str | None) -> str:
        return l0 if not l1 else f"{l0}\n  ({bounded(l1, 600)})"

    body = f"Existing memory: {show(old_l0, old_l1)}\nNew memory: {show(new_l0, new_l1)}"
    return [{"role": "system", "content": JUDGE_PROMPT}, {"role": "user", "content": body}]


def extraction_model(settings: LlmSettings) -> str | None:
    """The model extraction and judging use: the cheaper `extractModel`, else `model`, else none."""
    return settings.extract_model or settings.model


class LlmJudge:
    """A `writing.Judge` asking the extraction model; counts its failures for the report."""

    def __init__(self, settings: LlmSettings, model: str) -> None:
        self.settings = settings
        self.model = model
        self.last_error: str | None = None
        self.failures = 0

    def __call__(self, candidate: Candidate, existing: MemoryRecord) -> Verdict:
        messages = judge_messages(candidate.l0, candidate.l1, existing.l0, existing.l1)
        try:
            reply = llm.complete_json(
                self.model,
                messages,
                JudgeReply,
                self.settings.api_base,
                api_key=self.settings.api_key,
                max_retries=self.settings.max_retries,
                timeout=self.settings.timeout_seconds,
                temperature=0,
            )
        except llm.ModelUnavailable as exc:
            self.last_error = exc.message
            self.failures += 1
            return "different"
        verdict: Verdict = reply.verdict  # type: ignore[assignment]  # checked by JudgeReply
        return verdict
