"""The search stages that read a memory's context after fusion: who a memory is about and where it was
said (about.py), the memories said next to it in a conversation (dialogue.py), and what kind of answer a
question asks for and whether a memory could be it (answer_type.py). stages.py runs them in order.

May import (in memory/search/): candidate.
"""
