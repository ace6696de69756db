"""Lanes (seed 003 §6): one queue per session with one run at a time in it, and the queue modes
(queues.py), and the global cap on concurrent runs across every lane with the exclusive hold an
upkeep job takes (run_limiter.py).

May import (in gateway/): nothing.
"""
