"""Micro-benchmarks that measure a device's real ceilings."""
