"""Reflection (seed 000 §7): insights distilled from the memories not yet reflected on. plan.py reads the
groups of unreflected memories and asks the model (prompt.py) for insights; apply.py writes them through
the write path and re-weights and marks their sources in one transaction; run.py says when it is due.

May import (in memory/): text, store, search, writing, agent_memory, service.
Exports: run (run_reflection, ReflectReport, REFLECTABLE, unreflected_count, reflection_due).
"""
