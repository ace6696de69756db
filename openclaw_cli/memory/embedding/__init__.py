"""embedding."""
