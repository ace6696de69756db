"""Long-term memory: records, embeddings, hybrid search."""
