"""openclaw: a local-first memory runtime for a personal AI assistant."""

__version__ = "0.1.0"
