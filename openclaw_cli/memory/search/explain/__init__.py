"""`memory search --explain`: what it says about a query and each result, as data (data.py: the words as
typed and as searched, each leg's share), and as the text every reader shows (lines.py: a relevance
formula that adds up, each stage's effect), in the CLI and the Control UI alike.

May import (in memory/search/): candidate, legs, profiles.
"""
