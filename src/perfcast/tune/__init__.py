"""Auto-tuning: search spaces, strategies (hierarchical, exhaustive, random), the results store, partial models."""
