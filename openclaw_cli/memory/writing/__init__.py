"""Every change to what memory holds, decided before it is written. The one write path (write_path.py) takes
candidates from extraction, reflection, "remember this" and import, decides each against what is stored
(exact dedup, semantic dedup in three zones with the model as judge in the grey zone, merge by category:
dedup.py, llm_judge.py, merge.py), then writes them in one transaction per database (plan.py). Reassigning
a person's memories to another (reassign.py) and forgetting for good (purge.py) are the other two changes.
Use cases reach the agent's stores through agent_memory.AgentMemory, never through the service.

May import (in memory/): text, embedding, store, search, agent_memory.
Exports: candidate (Candidate, WriteOutcome, Verdict, Judge), write_path.write_memories, llm_judge.LlmJudge,
dedup.exact_duplicate, reassign (reassign, ReassignRequest), purge (purge_user, purge_store, remove_rows).
"""
