"""The DRAM copy probe runs for real, on small arrays."""

import pytest

from perfcast.bench.memory_probe import measure_copy_bandwidth


def test_probe_measures_a_plausible_bandwidth():
    sample = measure_copy_bandwidth(8 * 2**20, threads=2, repetitions=3)
    assert sample.repetitions == 3 and sample.threads == 2
    assert sample.array_bytes == 8 * 2**20
    assert 1e8 < sample.median < 1e13  # between 0.1 GB/s and 10 TB/s
    assert sample.spread >= 0


def test_probe_rejects_bad_sizes():
    with pytest.raises(ValueError):
        measure_copy_bandwidth(1024)
    with pytest.raises(ValueError):
        measure_copy_bandwidth(2**20, repetitions=0)
