"""Pure performance models: numbers in, dataclasses out (no I/O, no printing)."""
