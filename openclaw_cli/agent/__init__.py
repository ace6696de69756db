"""The agent loop: one turn from an inbound message to a stored, streamed reply."""
