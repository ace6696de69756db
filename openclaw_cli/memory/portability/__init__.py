"""portability."""
