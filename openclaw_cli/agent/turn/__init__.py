"""One agent turn, step by step (issue 10): loop.py runs the steps over state.py's TurnContext
(requests.py: TurnRequest, TurnResult and the event sink), replies.py makes one model call and streams
it, history.py reads the session history once, memory_steps.py writes "remember this" at once and
schedules extraction, plugin_hooks.py calls the plugins' event hooks and tools, steering.py holds the
messages steered into a running turn, commands.py the slash commands, stages.py where the turn's time
goes, private_notes.py whether the owner's workspace notes may be used.

May import (in agent/): compaction, context, services, summarise, tools.
"""
