"""Memory traces and the cache simulation: the trace format, hand-counted traffic, sampling, a real Oclgrind run."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from perfcast.errors import ToolError
from perfcast.models.caches import CacheHierarchy, CacheLevel
from perfcast.profiles.profile import KernelProfile, ProfileSet, ProfileSource
from perfcast.profiles.traffic import (
    FLAG_ATOMIC,
    FLAG_INDIRECT,
    FLAG_STORE,
    INDIRECT_METRIC,
    RECORD,
    SPACE_GLOBAL,
    SPACE_LOCAL,
    TRACE_MAGIC,
    LaunchTrace,
    TraceError,
    apply_traffic,
    indirect_share,
    read_trace,
    scattered_loads,
    set_walk_loads,
    simulate_launch,
    simulate_trace,
    traffic_metrics,
)

LINE = 64


def _cpu(cores: int = 1, l1: int = 4096, l2: int = 65536) -> CacheHierarchy:
    """A small CPU: private L1, shared L2, 64 B lines, write-back with allocation, 4 lanes."""
    return CacheHierarchy("cpu", (CacheLevel("L1", l1, LINE, 4, cores), CacheLevel("L2", l2, LINE, 8, 1)),
                          lanes=4, interleave_warps=False, local_in_cache=True)


def _gpu(cores: int = 2) -> CacheHierarchy:
    """A small GPU: 32 B sectors, write-through L1 per SM, write-back L2 without allocation, warps of 8, hashed."""
    return CacheHierarchy("gpu", (CacheLevel("L1", 4096, 32, 4, cores, "through", False),
                                  CacheLevel("L2", 65536, 32, 8, 1, "back", False)),
                          lanes=8, interleave_warps=True, local_in_cache=False, coalesce=True, hashed_sets=True)


def _records(addresses, lanes=None, ordinals=None, size=4, flags=0, space=SPACE_GLOBAL, regions=None) -> np.ndarray:
    n = len(addresses)
    records = np.zeros(n, dtype=RECORD)
    records["address"] = addresses
    records["size"] = size
    records["lane"] = np.arange(n) if lanes is None else lanes
    records["ordinal"] = 0 if ordinals is None else ordinals
    records["region"] = 0 if regions is None else regions
    records["space"] = space
    records["flags"] = flags
    return records


def write_trace(path: Path, launches, cut: int = 0) -> Path:
    """Write a trace file: launches = [(name, global, local, {group index: records}, groups run[, pages])].

    pages: (stored first, loaded first), the chunk before the launch's end; left out, none is written.
    """
    data = bytearray(TRACE_MAGIC)
    for name, global_size, local_size, groups, run, *pages in launches:
        encoded = name.encode()
        data += struct.pack("<II", 1, len(encoded)) + struct.pack("<9Q", *global_size, *local_size, 0, 0, 0) + encoded
        for index, records in groups.items():
            data += struct.pack("<II", 2, 0) + struct.pack("<QQ", index, len(records)) + records.tobytes()
        if pages:
            data += struct.pack("<II", 5, 0) + struct.pack("<QQ", *pages[0])
        data += struct.pack("<II", 3, 0) + struct.pack("<3Q", run, len(groups), 0)
    path.write_bytes(bytes(data[:len(data) - cut]))
    return path


def _launch(tmp_path, groups, run=None, name="k", local=(16, 1, 1)):
    total = run or len(groups)
    path = write_trace(tmp_path / "t.trace", [(name, (local[0] * total, 1, 1), local, groups, total)])
    return next(read_trace(path))


def test_a_stream_of_loads_moves_its_bytes_once(tmp_path):
    # 4096 B read once, 4 B per access: every level sees the lines once; DRAM the same bytes.
    n = 1024
    launch = _launch(tmp_path, {0: _records(np.arange(n) * 4, lanes=np.arange(n) % 16, ordinals=np.arange(n) // 16)})
    traffic = simulate_launch(launch, _cpu())
    assert traffic.level("L1").load_bytes == 4 * n
    assert traffic.level("L2").load_bytes == 4 * n  # 64 lines of 64 B
    assert traffic.dram_read_bytes == 4 * n and traffic.dram_write_bytes == 0
    assert traffic.level("L1").hit_bytes == 4 * n * 15 / 16  # one miss per 16 accesses of a line


def test_scattered_loads_by_hand():
    # Lines in issue order: a stream (0, 1, 2, 3) broken by gathers (100, 200) and a return next to one (101).
    lines = np.array([0, 1, 2, 100, 3, 200, 101, 7])
    loads = np.array([True] * 7 + [False])  # the last is a store: never a scattered load
    assert scattered_loads(lines, loads).tolist() == [True, False, False, True, False, True, False, False]
    # The same line again, or one more than the window back, decides alone.
    assert scattered_loads(np.array([5, 9, 5]), np.ones(3, bool), window=1).tolist() == [True, True, True]
    assert scattered_loads(np.array([5, 9, 5]), np.ones(3, bool), window=2).tolist() == [True, True, False]
    # The window counts lines: 16 lanes of a vector reading three arrays touch three lines, not 48 accesses, so
    # the next vector's lines follow the last ones even with a window of 3.
    one_vector = np.repeat([100, 200, 300], 16)
    lines = np.concatenate([one_vector, one_vector + 1])
    found = scattered_loads(lines, np.ones(len(lines), bool), window=3)
    assert found.sum() == 3 and found[[0, 16, 32]].all()


def test_a_column_walk_is_scattered_and_a_stream_is_not(tmp_path):
    # One work-item walks 256 rows of a 4 KiB-wide matrix: each load a new line, 64 lines from the last, all in
    # one L1 set and two L2 sets: every load is scattered and served by DRAM.
    column = _launch(tmp_path, {0: _records(np.arange(256) * 4096, lanes=np.zeros(256), ordinals=np.arange(256))})
    walked = simulate_launch(column, _cpu(), lanes=1)
    assert walked.scattered_loads == {"L1": 0.0, "L2": 0.0, "DRAM": 256.0}
    assert traffic_metrics([walked])["scattered_dram"] == 256.0
    # 64 KiB read by 16 work-items, in vectors of 4: each vector streams through all the lines, so only each
    # vector's first load has no stream before it (the first from DRAM, the three restarts from L2).
    n = 16384
    stream = _launch(tmp_path, {0: _records(np.arange(n) * 4, lanes=np.arange(n) % 16, ordinals=np.arange(n) // 16)})
    streamed = simulate_launch(stream, _cpu())
    assert streamed.scattered_loads == {"L1": 0.0, "L2": 3.0, "DRAM": 1.0}
    # A GPU has no such count: its warps hide latency another way.
    assert simulate_launch(stream, _gpu(1)).scattered_loads == {}


def test_set_walk_loads_by_hand():
    # Scattered loads (True) in L1 sets 3, 3, 3, 5, 3, 3, 3 with a stream's load between: a load counts where the
    # two scattered loads before it share its set (the third, and the last); a load not scattered never counts.
    scattered = np.array([True, False, True, True, True, True, True, True, False])
    sets = np.array([3, 3, 3, 3, 5, 3, 3, 3, 3])
    assert set_walk_loads(scattered, sets).tolist() == [False, False, False, True, False, False, False, True, False]
    # With a run of one, every load in the set of the one before counts.
    assert set_walk_loads(scattered, sets, run=1).tolist() == [False, False, True, True, False, False, True, True,
                                                               False]
    assert not set_walk_loads(np.array([True, True]), np.array([1, 1])).any()


def test_loads_that_walk_one_l1_set_are_shared_out_with_the_scattered_loads():
    from perfcast.profiles.traffic import set_walks_shared_out

    metrics = {"scattered_l2": 100.0, "scattered_l3": 300.0, "scattered_dram": 0.0, "set_walk_l2": 0.0,
               "set_walk_l3": 200.0, "set_walk_dram": 0.0}
    # Half of the scattered loads walk one set; 100 of L3's move to DRAM: each level keeps that half.
    moved = set_walks_shared_out(metrics, {"L2": 100.0, "L3": 200.0, "DRAM": 100.0})
    assert moved == {"set_walk_l2": 50.0, "set_walk_l3": 100.0, "set_walk_dram": 50.0}
    assert set_walks_shared_out({"scattered_l2": 5.0}, {"L2": 5.0}) == {}  # no set-walk counts: nothing to share


def test_a_column_walk_one_l1_set_span_apart_is_a_set_walk_and_one_line_more_is_not(tmp_path):
    # The small CPU's L1: 4 KiB of 4 ways, 16 sets, a set span of 1 KiB. Rows 4 KiB apart all fall in L1 set 0:
    # every load after the first shares the set of the one before. Rows 4 KiB + 64 B apart step through the sets.
    column = _launch(tmp_path, {0: _records(np.arange(256) * 4096, lanes=np.zeros(256), ordinals=np.arange(256))})
    walked = simulate_launch(column, _cpu(), lanes=1)
    assert walked.set_walk_loads == {"L1": 0.0, "L2": 0.0, "DRAM": 254.0}  # all but the first two
    metrics = traffic_metrics([walked])
    assert metrics["set_walk_dram"] == 254.0 and "set_walk_l1" not in metrics  # none there, no metric
    # A profile simulated again keeps no set walks of the simulation before where this one found none.
    profile = ProfileSet(ProfileSource("oclgrind"), (KernelProfile("k", 1, {"set_walk_l2": 9.0, "int": 1.0}),))
    again = apply_traffic(profile, [walked], "every work-group").kernels[0].metrics
    assert "set_walk_l2" not in again and again["set_walk_dram"] == 254.0 and again["int"] == 1.0
    skewed = _launch(tmp_path, {0: _records(np.arange(256) * (4096 + LINE), lanes=np.zeros(256),
                                            ordinals=np.arange(256))})
    spread = simulate_launch(skewed, _cpu(), lanes=1)
    assert sum(spread.scattered_loads.values()) == 256 and sum(spread.set_walk_loads.values()) == 0
    # Random gathers land in the set of the two scattered loads before them about once in 16 x 16 here.
    gathered = simulate_launch(_gather_launch(), _cpu(cores=2, l2=2**20), total_groups=64, lanes=1)
    share = sum(gathered.set_walk_loads.values()) / sum(gathered.scattered_loads.values())
    assert share < 0.015


def _gather_launch() -> LaunchTrace:
    """64 work-groups of 16 gathering 512 floats each from a 256 KiB vector; 8 groups traced."""
    rng = np.random.default_rng(0)
    base = 1 << 20
    groups = {g: _records(base + rng.integers(0, 65536, 512) * 4, lanes=np.arange(512) % 16,
                          ordinals=np.arange(512) // 16) for g in range(8)}
    return LaunchTrace("gather", (1024, 1, 1), (16, 1, 1), (0, 0, 0), groups, groups_run=64, complete=True,
                       buffers={base: 262144})


def test_a_samples_first_fetches_of_a_gathered_buffer_that_fits_are_not_scaled_from_dram():
    # 64 work-groups gather from a 256 KiB vector (4096 lines; it fits in a 1 MiB L2): 8 traced, 2 of them
    # warm-up. Scaled by 64/6, the counted groups' first fetches would bring the vector from DRAM four times.
    launch = _gather_launch()
    cpu = _cpu(cores=2, l2=2**20)
    traffic = simulate_launch(launch, cpu, total_groups=64, lanes=1)
    assert traffic.scattered_loads["DRAM"] == pytest.approx(4096)  # each of its lines once
    assert traffic.scattered_loads["L2"] > 0  # the rest found in L2
    # Nearly every gather is scattered (a few land next to a line just touched, as a stream would).
    assert sum(traffic.scattered_loads.values()) == pytest.approx(512 * 64, rel=0.05)
    assert any("first fetches from DRAM" in note for note in traffic.notes)
    # A buffer larger than the last cache keeps its DRAM fetches: they recur.
    small = simulate_launch(launch, _cpu(cores=2, l2=131072), total_groups=64, lanes=1)
    assert small.scattered_loads["DRAM"] > 4096



def test_a_gather_s_recent_span_is_its_buffer_s_pages_and_a_walk_s_the_pages_it_returns_to():
    from perfcast.profiles.traffic import SPAN_WINDOW, recent_spans

    rng = np.random.default_rng(3)
    for pages in (64, 512, 4096):  # a random gather over P pages reads P back (the bench's own loads)
        found = recent_spans(rng.integers(0, pages, 8 * SPAN_WINDOW).astype(np.uint64))
        assert np.median(found) == pytest.approx(pages, rel=0.05)
    # By hand: 4 loads on 2 pages, D = 2 = P (1 - e^(-4/P)): P = 2 gives 1.73 and P = 3 gives 2.21, so the root
    # lies between them; checked against the equation itself.
    (span,) = set(recent_spans(np.array([7, 9, 7, 9], dtype=np.uint64)).tolist())
    assert 2 < span < 3 and span * (1 - np.exp(-4 / span)) == pytest.approx(2)
    # SHOC's reduction: 16 work-items in turn walk the same 256 pages, 32 pages apart, of a 32 MiB input.
    walk = np.tile(np.arange(256, dtype=np.uint64) * 32, 16)
    assert recent_spans(walk) == pytest.approx(np.full(len(walk), 256.0), rel=1e-4)
    # Every page new: the loads say only that the span is wide; the buffer's size decides.
    assert np.isinf(recent_spans(np.arange(100, dtype=np.uint64))).all()
    assert recent_spans(np.zeros(0, dtype=np.uint64)).size == 0


def test_scattered_loads_say_the_size_of_the_buffer_they_gather_from():
    from perfcast.profiles.traffic import gather_spans_by_level

    # Every gather lies in the one 256 KiB vector: the geometric mean size is 256 KiB at each level serving them.
    traffic = simulate_launch(_gather_launch(), _cpu(cores=2, l2=2**20), total_groups=64, lanes=1)
    # (The counts are the simulated ones; the first fetches capped later move loads, not the sizes' mean.)
    assert sum(loads for loads, _ in traffic.gather_spans.values()) == pytest.approx(
        sum(traffic.scattered_loads.values()))
    for loads, total in traffic.gather_spans.values():
        assert total == pytest.approx(18 * loads)
    spans = gather_spans_by_level(traffic_metrics([traffic]))
    assert {"L2", "DRAM"} <= set(spans) and all(size == pytest.approx(262144) for size in spans.values())
    # A launch whose buffers are not known (an older trace) says nothing of them.
    unknown = _gather_launch()
    unknown.buffers.clear()
    assert simulate_launch(unknown, _cpu(cores=2, l2=2**20), total_groups=64, lanes=1).gather_spans == {}


def _paged(hierarchy: CacheHierarchy, page: int = 4096) -> CacheHierarchy:
    from dataclasses import replace

    return replace(hierarchy, page_bytes=page)


def test_pages_at_scattered_frames_keep_their_offsets_and_part_a_power_of_two_stride():
    from perfcast.profiles.traffic import _frames

    pages = np.arange(1 << 16, dtype=np.uint64)
    frames = _frames(pages, 51)  # 4 KiB pages below 2**63, as `_placed` takes them
    assert np.array_equal(frames, _frames(pages, 51))  # the same placement on every run
    assert len(np.unique(frames)) == len(pages)  # a bijection: no two pages share a frame
    small = _frames(np.arange(1 << 10, dtype=np.uint64), 10)  # the whole of a 10-bit space maps onto itself
    assert sorted(small.tolist()) == list(range(1 << 10))
    # A walk one page of 4 KiB at a time keeps every frame's low five bits apart from the page's: the set-index
    # bits above the page offset of a 2048-set cache are spread over all 32 values, not one.
    assert len(np.unique(frames[::32] & np.uint64(31))) == 32
    with pytest.raises(ValueError, match="power of two"):
        _paged(_cpu(), 3000)
    with pytest.raises(ValueError, match="at least a line"):
        _paged(_cpu(), 32)


def test_a_power_of_two_stride_finds_the_whole_cache_once_pages_are_placed(tmp_path):
    # 16 work-items left scalar, each walking 64 lines 32 KiB apart (SHOC's reduction walks its input this way:
    # a grid-sized stride): by virtual address all 64 lines fall into 4 of the 2048 sets of the 1 MiB L2, room
    # for 32, and thrash, so each work-item brings them from DRAM again; at physical frames they spread over the
    # 32 sets the bits above the page offset choose, and the next work-items find them in L2.
    rows, items, stride = 64, 16, 32768
    lane = np.repeat(np.arange(items), rows)
    ordinal = np.tile(np.arange(rows), items)
    launch = _launch(tmp_path, {0: _records((1 << 24) + ordinal * stride + lane * 4, lanes=lane, ordinals=ordinal)})
    virtual = simulate_launch(launch, _cpu(l2=2**20), lanes=1)
    placed = simulate_launch(launch, _paged(_cpu(l2=2**20)), lanes=1)
    assert virtual.dram_read_bytes == items * rows * LINE
    assert virtual.scattered_loads["DRAM"] == items * rows
    assert rows * LINE <= placed.dram_read_bytes <= 1.25 * rows * LINE  # about once each (a few sets overflow)
    assert placed.scattered_loads["L2"] >= 0.75 * (items - 1) * rows
    # L1's sets lie inside a page: its conflicts are the same either way.
    assert placed.level("L1").hit_bytes == virtual.level("L1").hit_bytes


def test_a_stream_that_crosses_pages_stays_a_stream_once_pages_are_placed(tmp_path):
    # 64 KiB read in order by 16 work-items in vectors of 4 (as in the column-walk test above): 16 pages, each
    # at a frame of its own. The prefetcher's view is the program's, by virtual lines: the same four loads are
    # scattered (each vector's first), not one more per page crossed. (Which level serves them may change: the
    # 64 KiB fill the L2 exactly, and placed pages leave some of its sets fuller than others.)
    n = 16384
    stream = _launch(tmp_path, {0: _records(np.arange(n) * 4, lanes=np.arange(n) % 16, ordinals=np.arange(n) // 16)})
    placed = simulate_launch(stream, _paged(_cpu())).scattered_loads
    assert sum(placed.values()) == sum(simulate_launch(stream, _cpu()).scattered_loads.values()) == 4


def test_first_fetches_are_named_by_their_buffers_through_placed_pages():
    # The gather above, its pages placed: the first fetches are named by the vector's (virtual) lines again.
    traffic = simulate_launch(_gather_launch(), _paged(_cpu(cores=2, l2=2**20)), total_groups=64, lanes=1)
    assert traffic.scattered_loads["DRAM"] == pytest.approx(4096)  # each of the vector's lines once, as unpaged


def test_a_kernel_left_scalar_walks_its_columns_one_work_item_at_a_time(tmp_path):
    # 16 work-items, each walking its own column (adjacent columns share a line) down 256 rows 4 KiB apart.
    rows, items = 256, 16
    lane = np.repeat(np.arange(items), rows)
    ordinal = np.tile(np.arange(rows), items)
    launch = _launch(tmp_path, {0: _records(ordinal * 4096 + lane * 4, lanes=lane, ordinals=ordinal)})
    vector = simulate_launch(launch, _cpu(), lanes=16)  # the 16 lanes' k-th loads are one line
    scalar = simulate_launch(launch, _cpu(), lanes=1)  # each work-item walks all rows before the next starts
    assert vector.lanes == 16 and scalar.lanes == 1
    assert vector.dram_read_bytes == rows * LINE
    # Left scalar, each work-item finds the lines the one before it read evicted: 16 walks through DRAM.
    assert scalar.dram_read_bytes == items * rows * LINE
    assert scalar.scattered_loads["DRAM"] == items * rows


def test_a_cpu_store_reads_its_lines_first_and_a_gpu_store_does_not(tmp_path):
    n = 1024
    stores = _records(np.arange(n) * 4, lanes=np.arange(n) % 16, ordinals=np.arange(n) // 16, flags=FLAG_STORE)
    cpu = simulate_launch(_launch(tmp_path, {0: stores}), _cpu())
    assert cpu.dram_write_bytes == 4 * n
    assert cpu.dram_read_bytes == 4 * n  # the write-allocate read
    assert cpu.level("L1").store_bytes == 4 * n and cpu.level("L1").load_bytes == 0
    gpu = simulate_launch(_launch(tmp_path, {0: stores}), _gpu(1))
    assert gpu.dram_write_bytes == 4 * n and gpu.dram_read_bytes == 0


def test_dram_metrics_count_write_allocate_fills_and_say_them_apart(tmp_path):
    # A CPU store stream: the fills are DRAM reads that move (perfcast bench counts them in its bandwidths too).
    n = 1024
    stores = _records(np.arange(n) * 4, lanes=np.arange(n) % 16, ordinals=np.arange(n) // 16, flags=FLAG_STORE)
    traffic = simulate_launch(_launch(tmp_path, {0: stores}), _cpu())
    assert traffic.write_allocate_bytes == 4 * n
    metrics = traffic_metrics([traffic])
    assert metrics["dram_read"] * 32 == 4 * n and metrics["dram_write"] * 32 == 4 * n
    assert metrics["dram_bytes"] == 8 * n and metrics["dram_write_allocate_bytes"] == 4 * n
    # A load of a line before its store is no fill.
    both = np.concatenate([_records(np.arange(n) * 4, lanes=np.arange(n) % 16, ordinals=np.arange(n) // 16),
                           _records(np.arange(n) * 4, lanes=np.arange(n) % 16, ordinals=np.arange(n) // 16 + 64,
                                    flags=FLAG_STORE)])
    traffic = simulate_launch(_launch(tmp_path, {0: both}), _cpu())
    assert traffic.write_allocate_bytes == 0 and traffic.dram_read_bytes == 4 * n


def test_a_sample_of_a_launch_whose_data_fits_is_capped_at_its_buffers(tmp_path):
    # Every work-group reads its own slice of a 64 KiB buffer; a sample of 8 groups stands for 1024 groups,
    # which in the whole launch read the same 64 KiB again (it fits in L2): DRAM moves it once, not 128 times.
    def group(index):
        offsets = (index % 16) * 4096 + np.arange(1024) * 4
        return _records(4096 + offsets, lanes=np.arange(1024) % 16, ordinals=np.arange(1024) // 16)

    data = bytearray(TRACE_MAGIC)
    data += struct.pack("<II", 4, 0) + struct.pack("<QQ", 4096, 65536)
    encoded = b"k"
    data += struct.pack("<II", 1, 1) + struct.pack("<9Q", 16 * 8, 1, 1, 16, 1, 1, 0, 0, 0) + encoded
    for index in range(8):
        records = group(index)
        data += struct.pack("<II", 2, 0) + struct.pack("<QQ", index, len(records)) + records.tobytes()
    data += struct.pack("<II", 3, 0) + struct.pack("<3Q", 8, 8, 0)
    path = tmp_path / "t.trace"
    path.write_bytes(bytes(data))
    (launch,) = list(read_trace(path))
    assert launch.buffers == {4096: 65536}
    traffic = simulate_launch(launch, _cpu(cores=2, l2=131072), total_groups=1024)
    assert traffic.dram_read_bytes == 65536
    assert any("first touches" in note for note in traffic.notes)
    # The same sample on a cache too small for the buffer is scaled as it is.
    small = simulate_launch(launch, _cpu(cores=2, l2=32768), total_groups=1024)
    assert small.dram_read_bytes > 100 * 4096


def test_a_repeated_launch_whose_data_fits_finds_it_cached(tmp_path):
    # A triad-like launch over 3 x 4 KiB, timed again and again: in a 64 KiB L2 it stays there between launches.
    n = 1024
    loads = np.concatenate([_records(4096 + np.arange(n) * 4, lanes=np.arange(n) % 16, ordinals=np.arange(n) // 16),
                            _records(12288 + np.arange(n) * 4, lanes=np.arange(n) % 16, ordinals=np.arange(n) // 16,
                                     flags=FLAG_STORE)])
    data = bytearray(TRACE_MAGIC)
    for base in (4096, 12288):
        data += struct.pack("<II", 4, 0) + struct.pack("<QQ", base, 4096)
    data += struct.pack("<II", 1, 1) + struct.pack("<9Q", 16, 1, 1, 16, 1, 1, 0, 0, 0) + b"k"
    data += struct.pack("<II", 2, 0) + struct.pack("<QQ", 0, len(loads)) + loads.tobytes()
    data += struct.pack("<II", 3, 0) + struct.pack("<3Q", 1, 1, 0)
    path = tmp_path / "t.trace"
    path.write_bytes(bytes(data))
    (launch,) = list(read_trace(path))
    once = simulate_launch(launch, _cpu())
    assert once.dram_read_bytes == 8192 and once.dram_write_bytes == 4096  # cold: reads, the fill, the write-back
    again = simulate_launch(launch, _cpu(), repeated=True)
    assert again.dram_read_bytes == 0 and again.dram_write_bytes == 0
    assert any("stay there between repeated launches" in note for note in again.notes)
    # L1 (4 KiB) cannot hold both buffers: L2 still serves them, as often as the launch alone needs
    assert again.level("L2").load_bytes == once.level("L2").load_bytes >= 8192


def test_a_gpu_warp_reading_columns_moves_a_sector_per_lane(tmp_path):
    # Eight lanes, each reading its own row of 32 floats (stride 128 B), ordinal = column: by rows.
    rows, cols = 8, 32
    lane = np.tile(np.arange(rows), cols)
    ordinal = np.repeat(np.arange(cols), rows)
    by_rows = _records(lane * cols * 4 + ordinal * 4, lanes=lane, ordinals=ordinal)
    by_cols = _records(ordinal * rows * 4 + lane * 4, lanes=lane, ordinals=ordinal)
    hierarchy = _gpu(1)
    rows_traffic = simulate_launch(_launch(tmp_path, {0: by_rows}, local=(8, 1, 1)), hierarchy)
    cols_traffic = simulate_launch(_launch(tmp_path, {0: by_cols}, local=(8, 1, 1)), hierarchy)
    # by columns a warp instruction reads 32 contiguous bytes: one sector; by rows, eight sectors.
    assert cols_traffic.level("L1").load_bytes == rows * cols * 4
    assert rows_traffic.level("L1").load_bytes == 8 * rows * cols * 4
    # The bytes from DRAM are the footprint either way: the sectors stay in L1 between instructions.
    assert rows_traffic.dram_read_bytes == cols_traffic.dram_read_bytes == rows * cols * 4


def test_gpu_local_memory_is_counted_apart_and_cpu_local_memory_goes_through_l1(tmp_path):
    local = _records(np.arange(64) * 4, lanes=np.arange(64) % 16, ordinals=np.arange(64) // 16, space=SPACE_LOCAL,
                     flags=FLAG_STORE)
    gpu = simulate_launch(_launch(tmp_path, {0: local}), _gpu(1))
    assert gpu.local_store_bytes == 256 and gpu.level("L1").bytes == 0 and gpu.dram_write_bytes == 0
    cpu = simulate_launch(_launch(tmp_path, {0: local}), _cpu())
    assert cpu.local_store_bytes == 0 and cpu.level("L1").store_bytes == 256


def test_gpu_atomics_go_to_l2(tmp_path):
    atomics = _records(np.zeros(16, dtype=np.uint64), lanes=np.arange(16), flags=FLAG_ATOMIC | FLAG_STORE)
    gpu = simulate_launch(_launch(tmp_path, {0: atomics}), _gpu(1))
    assert gpu.level("L1").bytes == 0
    assert gpu.level("L2").load_bytes == 16 * 4 and gpu.level("L2").store_bytes == 16 * 4


def test_private_caches_per_core_and_a_shared_l2(tmp_path):
    # Two work-groups read the same 2 KiB: on two cores each L1 misses it, L2 holds it once.
    same = _records(np.arange(512) * 4, lanes=np.arange(512) % 16, ordinals=np.arange(512) // 16)
    traffic = simulate_launch(_launch(tmp_path, {0: same, 1: same}), _cpu(cores=2))
    assert traffic.level("L2").load_bytes == 2 * 2048
    assert traffic.dram_read_bytes == 2048
    one_core = simulate_launch(_launch(tmp_path, {0: same, 1: same}), _cpu(cores=1))
    assert one_core.level("L2").load_bytes == 2048


def test_sampled_windows_are_scaled_to_the_launch(tmp_path):
    # 64 groups, each streaming its own 1 KiB; every group recorded, or windows of 4 every 16 groups.
    def group(index):
        return _records(index * 1024 + np.arange(256) * 4, lanes=np.arange(256) % 16, ordinals=np.arange(256) // 16)

    full = simulate_launch(_launch(tmp_path, {i: group(i) for i in range(64)}), _cpu(cores=2))
    sampled_groups = {i: group(i) for i in range(64) if i % 16 < 4}
    sampled = simulate_launch(_launch(tmp_path, sampled_groups, run=64), _cpu(cores=2))
    assert full.dram_read_bytes == 64 * 1024
    assert sampled.groups == 64 and sampled.groups_counted == 8  # each window's first wave (2 groups) warms
    assert sampled.dram_read_bytes == pytest.approx(full.dram_read_bytes, rel=0.05)
    assert "scaled by 8" in sampled.notes[0]


def test_a_sample_shorter_than_a_wave_warms_with_its_first_half_and_counts_the_rest(tmp_path):
    # The size cap left 6 of 64 groups on a GPU of 8 units: less than one wave. Before, nothing was counted and
    # the launch's bytes came out as 0 (sgemm and nbody on the H200's caches, 2026-11-26).
    def group(index):
        return _records(index * 1024 + np.arange(256) * 4, lanes=np.arange(256) % 16, ordinals=np.arange(256) // 16)

    sampled = simulate_launch(_launch(tmp_path, {i: group(i) for i in range(6)}, run=64), _gpu(cores=8))
    assert sampled.groups_counted == 3  # groups 0-2 warm, 3-5 are counted
    assert sampled.dram_read_bytes == pytest.approx(64 * 1024, rel=0.05)


def test_a_launch_with_no_group_recorded_is_an_error_not_zero_bytes(tmp_path):
    from perfcast.profiles.traffic import TraceError

    with pytest.raises(TraceError, match="unknown, not zero"):
        simulate_launch(_launch(tmp_path, {}, run=64), _gpu(cores=8))


def test_traffic_metrics_sum_launches_into_profile_metrics(tmp_path):
    launch = simulate_launch(_launch(tmp_path, {0: _records(np.arange(256) * 4, lanes=np.arange(256) % 16,
                                                            ordinals=np.arange(256) // 16)}), _cpu())
    metrics = traffic_metrics([launch, launch])
    assert metrics["l1_bytes"] == 2 * 1024 and metrics["dram_bytes"] == 2 * 1024
    assert metrics["dram_read"] == 2 * 1024 / 32 and metrics["dram_write"] == 0
    profile = ProfileSet(ProfileSource("oclgrind"), (KernelProfile("k", 2, {"global_load_bytes": 2048.0}),
                                                      KernelProfile("other", 1, {})))
    applied = apply_traffic(profile, [launch, launch], "every work-group")
    k, other = applied.kernels
    assert k.bytes_from == "simulated for cpu" and k.metrics["dram_bytes"] == 2048
    assert k.metrics["global_load_bytes"] == 2048  # the footprint stays beside
    assert other.bytes_from is None and "no memory trace" in other.notes[-1]
    again = ProfileSet.from_mapping(applied.to_mapping())
    assert again.kernels[0].bytes_from == "simulated for cpu"


def test_first_touched_pages_come_from_the_trace_and_scale_with_a_reduced_launch(tmp_path):
    records = _records(np.arange(16) * 4)
    path = write_trace(tmp_path / "t.trace", [("a", (16, 1, 1), (16, 1, 1), {0: records}, 1, (3, 1)),
                                              ("b", (16, 1, 1), (16, 1, 1), {0: records}, 1)])
    a, b = list(read_trace(path))
    assert (a.first_store_pages, a.first_load_pages) == (3, 1)
    assert b.first_store_pages is None  # a trace written before the count: unknown, not zero
    traffic = simulate_launch(a, _cpu())
    assert (traffic.first_store_pages, traffic.first_load_pages) == (3, 1)
    # The launch traced stands for one of 4 work-groups: its buffers, and so its fresh pages, are 4 times as many.
    assert simulate_launch(a, _cpu(), total_groups=4).first_store_pages == 12
    metrics = traffic_metrics([traffic, traffic])
    assert metrics["first_store_pages"] == 6 and metrics["first_load_pages"] == 2
    assert "first_store_pages" not in traffic_metrics([simulate_launch(b, _cpu())])
    orphan = bytearray(TRACE_MAGIC) + struct.pack("<II", 5, 0) + struct.pack("<QQ", 1, 0)
    (tmp_path / "orphan.trace").write_bytes(bytes(orphan))
    with pytest.raises(TraceError, match="before any launch"):
        list(read_trace(tmp_path / "orphan.trace"))


def test_trace_files_are_checked(tmp_path):
    bad = tmp_path / "bad.trace"
    bad.write_bytes(b"NOTATRACE")
    with pytest.raises(TraceError, match="not a perfcast memory trace"):
        list(read_trace(bad))
    records = _records(np.arange(16) * 4)
    cut = write_trace(tmp_path / "cut.trace", [("k", (16, 1, 1), (16, 1, 1), {0: records}, 1)], cut=30)
    with pytest.raises(TraceError, match="cut short"):
        list(read_trace(cut))
    with pytest.raises(TraceError, match="cannot read"):
        list(read_trace(tmp_path / "missing.trace"))


def test_a_launch_without_its_end_is_marked_incomplete(tmp_path):
    records = _records(np.arange(16) * 4)
    path = write_trace(tmp_path / "t.trace", [("k", (16, 1, 1), (16, 1, 1), {0: records}, 1)], cut=32)
    (launch,) = list(read_trace(path))
    assert not launch.complete
    traffic = simulate_launch(launch, _cpu())
    assert any("stops early" in note for note in traffic.notes)


def test_cache_levels_are_checked():
    with pytest.raises(ValueError, match="power of two"):
        CacheLevel("L1", 4096, 48, 4)
    with pytest.raises(ValueError, match="whole number of sets"):
        CacheLevel("L1", 4000, 64, 4)
    with pytest.raises(ValueError, match="write-through"):
        CacheLevel("L1", 4096, 64, 4, write="through", allocate=True)
    with pytest.raises(ValueError, match="lines may only grow"):
        CacheHierarchy("x", (CacheLevel("L1", 4096, 64, 4), CacheLevel("L2", 65536, 32, 8)), 4, False, True)
    with pytest.raises(ValueError, match="share"):
        CacheHierarchy("x", (CacheLevel("L1", 4096, 64, 4, 3), CacheLevel("L2", 65536, 64, 8, 2)), 4, False, True)
    assert CacheLevel("L1", 49152, 64, 12).sets == 64


# A real Oclgrind run: three kernels of our own, traced by the plugin and simulated.
ROW_COLUMN_PROGRAM = Path(__file__).parent.parent / "data" / "opencl" / "row_column.py"


def _plugin_or_skip() -> Path:
    if shutil.which("oclgrind") is None:
        pytest.skip("oclgrind not installed (apt-get install oclgrind)")
    from perfcast.profiles.trace_plugin import build_trace_plugin

    try:
        return build_trace_plugin()
    except ToolError as error:
        pytest.skip(str(error))


def test_oclgrind_plugin_traces_a_real_program(tmp_path):
    _plugin_or_skip()
    from perfcast.devices.cache_view import cache_hierarchy
    from perfcast.devices.catalog import get_device
    from perfcast.profiles.capture import TrafficRequest, capture

    n = 256
    heard: list[str] = []
    request = TrafficRequest(cache_hierarchy(get_device("a100-pcie-40gb")), keep_trace=True, progress=heard.append)
    result = capture("oclgrind", [sys.executable, str(ROW_COLUMN_PROGRAM), str(n)], tmp_path / "p.yaml",
                     traffic=request)
    kernels = {k.name: k for k in result.profile.kernels}
    assert set(kernels) == {"by_rows", "by_cols", "tiled"} and len(heard) == 3
    matrix = 4 * n * n
    rows, cols, tiled = kernels["by_rows"].metrics, kernels["by_cols"].metrics, kernels["tiled"].metrics
    # The same footprint, eight times the L1 sectors when each lane walks its own row.
    assert rows["dram_read"] * 32 == cols["dram_read"] * 32 == matrix
    assert cols["l1_bytes"] == pytest.approx(matrix + 4 * n)
    assert rows["l1_bytes"] == pytest.approx(8 * matrix + 4 * n)
    assert tiled["dram_bytes"] == 2 * matrix
    assert kernels["tiled"].bytes_from == "simulated for a100-pcie-40gb"
    said = " ".join(result.profile.notes)
    assert "caches simulated for a100-pcie-40gb: L1 196608 B x 108" in said and "assumed: line 32 B" in said
    trace = tmp_path / "p.oclgrind.trace"
    assert trace in result.extra
    launches = simulate_trace(trace, request.hierarchy)
    assert [launch.kernel for launch in launches] == ["by_rows", "by_cols", "tiled"]
    assert launches[2].local_load_bytes == launches[2].local_store_bytes == matrix


FIRST_TOUCH_PROGRAM = Path(__file__).parent.parent / "data" / "opencl" / "first_touch.py"


def test_oclgrind_plugin_counts_the_pages_each_launch_touches_first(tmp_path):
    """Five launches of tests/data/opencl/first_touch.py, 8 pages a buffer: the pages the program's own docstring says."""
    plugin = _plugin_or_skip()
    from perfcast.profiles.trace_plugin import TraceSampling, trace_environment

    trace = tmp_path / "t.trace"
    # Only the first work-group of each launch recorded: the pages are counted over every work-group anyway.
    env = {**os.environ, **trace_environment(trace, TraceSampling(window=1, stride=1 << 20))}
    subprocess.run(["oclgrind", "--plugins", str(plugin), sys.executable, str(FIRST_TOUCH_PROGRAM), "8"], env=env,
                   check=True, capture_output=True)
    found = [(launch.kernel, launch.first_store_pages, launch.first_load_pages, len(launch.groups))
             for launch in read_trace(trace)]
    assert found == [("fill", 8, 0, 1), ("fill", 0, 0, 1), ("fill", 7, 0, 1), ("copy", 8, 0, 1), ("total", 0, 8, 1)]


GATHER_PROGRAM = Path(__file__).parent.parent / "data" / "opencl" / "gather.py"


def test_oclgrind_plugin_flags_the_loads_whose_address_was_loaded(tmp_path):
    """tests/data/opencl/gather.py: a gather through an index array, one at computed addresses, a two-hop chase."""
    plugin = _plugin_or_skip()
    from perfcast.profiles.trace_plugin import TraceSampling, trace_environment

    trace = tmp_path / "t.trace"
    env = {**os.environ, **trace_environment(trace, TraceSampling())}
    subprocess.run(["oclgrind", "--plugins", str(plugin), sys.executable, str(GATHER_PROGRAM), "256"], env=env,
                   check=True, capture_output=True)
    launches = {launch.kernel: np.concatenate(list(launch.groups.values())) for launch in read_trace(trace)}
    assert set(launches) == {"indexed", "hashed", "chased", "vloaded"}

    def loads(records: np.ndarray, indirect: bool) -> int:
        plain = (records["flags"] & (FLAG_STORE | FLAG_ATOMIC)) == 0
        return int(np.count_nonzero(plain & (((records["flags"] & FLAG_INDIRECT) != 0) == indirect)))

    # indexed: 256 index loads at computed addresses, 256 loads of `a` through them.
    assert (loads(launches["indexed"], False), loads(launches["indexed"], True)) == (256, 256)
    assert (loads(launches["hashed"], False), loads(launches["hashed"], True)) == (256, 0)
    assert (loads(launches["chased"], False), loads(launches["chased"], True)) == (256, 256)
    # An index a builtin read (vload2: however Oclgrind splits its access) makes the load through it indirect.
    assert loads(launches["vloaded"], True) == 256 and loads(launches["vloaded"], False) >= 256


def test_indirect_scattered_loads_are_counted_and_shared(tmp_path):
    # The gather launch with every other gathered load flagged indirect: about half the scattered loads are.
    launch = _gather_launch()
    flagged = {g: records.copy() for g, records in launch.groups.items()}
    for records in flagged.values():
        records["flags"][::2] |= FLAG_INDIRECT
    traffic = simulate_launch(replace(launch, groups=flagged), _cpu(cores=2, l2=2**20), total_groups=64, lanes=1)
    scattered = sum(traffic.scattered_loads.values())
    assert traffic.indirect_loads == pytest.approx(scattered / 2, rel=0.05)
    metrics = traffic_metrics([traffic])
    assert metrics[INDIRECT_METRIC] == pytest.approx(traffic.indirect_loads)
    assert indirect_share(metrics) == pytest.approx(0.5, rel=0.05)
    # Unflagged, none are; a profile that does not count them (an older trace) has no share.
    plain = simulate_launch(launch, _cpu(cores=2, l2=2**20), total_groups=64, lanes=1)
    assert plain.indirect_loads == 0 and indirect_share(traffic_metrics([plain])) == 0.0
    assert indirect_share({"scattered_l2": 5.0}) is None and indirect_share({INDIRECT_METRIC: 1.0}) is None


def test_oclgrind_plugin_samples_work_groups(tmp_path):
    _plugin_or_skip()
    from perfcast.devices.cache_view import cache_hierarchy
    from perfcast.devices.catalog import get_device
    from perfcast.profiles.capture import TrafficRequest, capture
    from perfcast.profiles.trace_plugin import TraceSampling

    hierarchy = cache_hierarchy(get_device("a100-pcie-40gb"))
    command = [sys.executable, str(ROW_COLUMN_PROGRAM), "256", "tiled"]
    full = capture("oclgrind", command, tmp_path / "full.yaml", traffic=TrafficRequest(hierarchy)).profile
    sampled = capture("oclgrind", command, tmp_path / "sampled.yaml",
                      traffic=TrafficRequest(hierarchy, TraceSampling(window=256, stride=1024))).profile
    a, b = full.kernels[0].metrics, sampled.kernels[0].metrics
    assert b["dram_bytes"] == pytest.approx(a["dram_bytes"], rel=0.05)
    assert any("work-groups counted" in note for note in sampled.kernels[0].notes)


def test_trace_sampling_is_checked():
    from perfcast.profiles.trace_plugin import TraceSampling

    assert TraceSampling().describe() == "every work-group"
    assert TraceSampling(4, 16).describe() == "windows of 4 work-groups every 16"
    for window, stride in ((4, 0), (0, 16), (32, 16), (-1, 4)):
        with pytest.raises(ToolError):
            TraceSampling(window, stride)


def test_simulated_traffic_needs_oclgrind(tmp_path):
    from perfcast.profiles.capture import TrafficRequest, capture

    with pytest.raises(ToolError, match="Oclgrind traces them"):
        capture("ncu", ["true"], tmp_path / "p.yaml", traffic=TrafficRequest(_cpu()))


@pytest.mark.parametrize(("arguments", "message"), [
    (["--traffic", "simulate", "--", "true"], "needs --device"),
    (["--traffic", "simulate", "--tool", "ncu", "--device", "a100-pcie-40gb", "--", "true"], "--tool oclgrind"),
    (["--traffic", "measure", "--", "true"], "choose footprint or simulate"),
    (["--device", "a100-pcie-40gb", "--", "true"], "go with --traffic simulate"),
])
def test_profile_command_refuses_traffic_options_that_do_not_fit(tmp_path, arguments, message):
    import re

    from typer.testing import CliRunner

    from perfcast.cli import app

    result = CliRunner().invoke(app, ["profile", "-o", str(tmp_path / "p.yaml"), *arguments])
    assert result.exit_code != 0 and message in re.sub(r"[\s│╭╮╰╯─]+", " ", result.output), result.output


def test_profile_command_simulates_traffic(tmp_path):
    _plugin_or_skip()
    from typer.testing import CliRunner

    from perfcast.cli import app

    result = CliRunner().invoke(app, ["profile", "--traffic", "simulate", "--device", "a100-pcie-40gb", "-o",
                                      str(tmp_path / "p.yaml"), "--", sys.executable, str(ROW_COLUMN_PROGRAM),
                                      "128", "by_rows"], terminal_width=250)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "simulated through a100-pcie-40gb's caches" in said and "simulating by_rows" in said
    saved = ProfileSet.from_mapping(__import__("yaml").safe_load((tmp_path / "p.yaml").read_text()))
    assert saved.kernels[0].bytes_from == "simulated for a100-pcie-40gb"


def test_a_failing_program_leaves_no_trace(tmp_path):
    _plugin_or_skip()
    from perfcast.profiles.capture import TrafficRequest, capture

    with pytest.raises(ToolError, match="exited with status"):
        capture("oclgrind", [sys.executable, str(ROW_COLUMN_PROGRAM), "not-a-number"], tmp_path / "p.yaml",
                traffic=TrafficRequest(_cpu()))
    assert not (tmp_path / "p.oclgrind.trace").exists()
    assert (tmp_path / "p.oclgrind.txt").exists()  # Oclgrind's own output is kept, as without a trace


def test_a_launch_counts_the_distinct_lines_it_touches(tmp_path):
    # Two groups read the same 16 lines, one of them also stores to 4 more, and a 4-byte access straddles lines
    # 20 and 21; local memory is left out. 22 distinct lines of 64 B.
    shared = _records(np.arange(16) * LINE, lanes=np.arange(16))
    stores = _records(np.arange(16, 20) * LINE, lanes=np.arange(4), flags=FLAG_STORE)
    straddle = _records([21 * LINE - 2], lanes=[5])
    local = _records(np.arange(8) * LINE, lanes=np.arange(8), space=SPACE_LOCAL)
    launch = _launch(tmp_path, {0: shared, 1: np.concatenate([shared, stores, straddle, local])})
    traffic = simulate_launch(launch, _cpu(cores=2))
    assert traffic.touched_bytes == 22 * LINE
    assert traffic_metrics([traffic, traffic])["touched_bytes"] == 2 * 22 * LINE  # summed over launches
