"""Cache levels: the figures derived from a level's description."""

from perfcast.models.caches import CacheLevel


def test_a_levels_capacity_counts_every_instance_and_its_sets_one():
    private = CacheLevel("L2", 512 * 1024, 64, 8, instances=2)  # a 2-core VM's per-core L2
    assert private.capacity == 1024 * 1024
    assert private.sets == 1024  # 512 KiB / (64 B x 8 ways), one instance
    assert CacheLevel("L3", 32 * 1024 * 1024, 64, 16).capacity == 32 * 1024 * 1024
