"""Skills (seed 003 §5.3): folders holding a SKILL.md, an instruction set for a recurring task.

Three tiers, first wins by name: the agent's workspace `skills/`, the home's `skills/` (shared by every
agent), and the folders plugins ship. The system prompt lists the available skills (names and
descriptions, within `skills.maxPromptChars`); the model reads a body with the `skill_read` tool, and
`/skill NAME` puts one into a turn. Modules: model (the records), parse (one SKILL.md), catalog (finding
them, cached on file stats), resolve (precedence, gating, an agent's list), prompt (the block within its
budget), usage (last uses, for what a full budget drops), service (what a turn asks), report (what
the `openclaw skills` commands ask).

May import (in openclaw_cli/): core, config, identity, memory.
"""
