"""The cache hierarchy of a catalog device: figures from the file, the rest assumed and named."""

from __future__ import annotations

import pytest

from perfcast.devices.cache_view import cache_hierarchy
from perfcast.devices.catalog import catalog, get_device, parse_device_text
from perfcast.errors import InputError


def test_an_nvidia_gpu_has_sector_lines_write_through_l1_and_hashed_sets():
    h = cache_hierarchy(get_device("a100-pcie-40gb"))
    l1, l2 = h.levels
    assert (l1.name, l1.size, l1.line, l1.instances, l1.write, l1.allocate) == ("L1", 192 * 1024, 32, 108, "through",
                                                                                  False)
    assert (l2.name, l2.size, l2.line, l2.instances, l2.write, l2.allocate) == ("L2", 40 * 2**20, 32, 1, "back",
                                                                                  False)
    assert h.lanes == 32 and h.coalesce and h.hashed_sets and not h.local_in_cache and h.cores == 108
    assert "line 32 B" in l1.assumed and "write-through" in l1.assumed


def test_an_amd_gpu_has_wavefronts_of_64_and_longer_lines_beyond_l1():
    h = cache_hierarchy(get_device("mi250x-gcd"))
    assert h.lanes == 64
    assert [level.line for level in h.levels] == [64, 128]


def test_a_cpu_allocates_on_writes_and_shares_its_last_level():
    h = cache_hierarchy(get_device("core-i7-930"))
    assert [(lv.name, lv.size, lv.instances, lv.write, lv.allocate) for lv in h.levels] == [
        ("L1", 32 * 1024, 4, "back", True), ("L2", 256 * 1024, 4, "back", True), ("L3", 8 * 2**20, 1, "back", True)]
    assert h.lanes == 4 and not h.interleave_warps and h.local_in_cache and not h.hashed_sets  # 128-bit SSE


def test_figures_in_the_device_file_replace_the_assumptions():
    text = get_device_text("core-i7-930").replace(
        "- {level: L1, size: 32 KiB, scope: per_core}",
        "- {level: L1, size: 48 KiB, scope: per_core, line: 64, ways: 12, write: back, write_allocate: true}")
    h = cache_hierarchy(parse_device_text(text))
    assert (h.levels[0].size, h.levels[0].ways, h.levels[0].assumed) == (48 * 1024, 12, ())


def test_a_size_that_does_not_split_into_wanted_ways_gets_ways_that_do():
    text = get_device_text("core-i7-930").replace("size: 256 KiB", "size: 1280 KiB")  # 20 x 64 KiB
    level = cache_hierarchy(parse_device_text(text)).levels[1]
    assert level.size % (level.line * level.ways) == 0 and f"{level.ways} ways" in level.assumed


def test_a_device_without_cache_sizes_is_refused():
    text = get_device_text("core-i7-930")
    for size in ("size: 32 KiB, ", "size: 256 KiB, ", "size: 8 MiB, "):
        text = text.replace(size, "")
    with pytest.raises(InputError, match="no cache sizes"):
        cache_hierarchy(parse_device_text(text))


@pytest.mark.parametrize("name", sorted(catalog()))
def test_every_catalog_device_with_caches_gives_a_hierarchy(name):
    device = catalog()[name]
    if not any(m.level in ("L1", "L2", "L3") and m.size is not None for m in device.memory):
        pytest.skip(f"{name} lists no cache sizes")
    h = cache_hierarchy(device)
    assert h.cores == device.compute_units or h.cores == 1


def get_device_text(name: str) -> str:
    from pathlib import Path

    import perfcast.devices

    return (Path(perfcast.devices.__file__).parent / "catalog" / f"{name}.yaml").read_text()
