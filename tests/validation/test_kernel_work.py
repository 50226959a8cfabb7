"""Work counts of the corpus kernels against hand-counted small cases."""

import numpy as np
import pytest

from perfcast.errors import NotFound
from perfcast.validation.kernel_work import WORK, kernel_work

CONV = ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "use_shmem")
SMALL_CONV = {"size": [32, 32], "filter": [3, 3], "element_bytes": 4}


def test_convolution_counts_one_fma_per_tap_and_the_staged_tiles() -> None:
    configs = np.array([[16, 4, 1, 2, 1]])
    work = kernel_work("convolution-milo", configs, CONV, SMALL_CONV)
    assert work.flop[0] == 2 * 9 * 32 * 32
    assert work.n_fma[0] == 9 * 32 * 32
    assert work.dram[0] == (34 * 34 + 32 * 32) * 4
    # 2 x 4 groups of 16 x 8 outputs, each staging (16 + 2) x (8 + 2) floats; plus the outputs written
    staged = 8 * 18 * 10 * 4
    assert work.l2[0] == staged + 32 * 32 * 4
    # block 4 >= filter 3: the tile's two rows of taps do not overlap: 6 x 3 words for 2 outputs
    assert work.shared[0] == staged + 32 * 32 * 9 * 4


def test_convolution_reuses_overlapping_taps_of_a_threads_tile() -> None:
    configs = np.array([[16, 2, 1, 2, 1]])  # block 2 < filter 3: rows 0..2 and 2..4 share row 2
    work = kernel_work("convolution-milo", configs, CONV, SMALL_CONV)
    staged = (2 * 8) * 18 * (4 + 2) * 4
    assert work.shared[0] == pytest.approx(staged + 32 * 32 * (5 * 3 / 2) * 4)


def test_convolution_without_shared_memory_moves_nothing_through_it() -> None:
    configs = np.array([[16, 4, 1, 2, 0], [16, 4, 1, 2, 1]])
    work = kernel_work("convolution-milo", configs, CONV, SMALL_CONV)
    assert work.shared[0] == 0 and work.shared[1] > 0
    assert work.l1[0] == work.l1[1]


def test_dedispersion_counts_compulsory_bytes_and_two_flop_per_channel() -> None:
    names = ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y")
    problem = {"samples": 100, "dms": 4, "channels": 2, "max_shift": 10}
    work = kernel_work("dedispersion-milo", np.array([[32, 4, 1, 1]]), names, problem)
    # the delays of 4 DMs over a 0.2 MHz band are below one sample: each channel reads its 100 samples
    assert work.dram[0] == 2 * 100 + 400 * 4 + 2 * 4
    assert work.flop[0] == 2 * 400 * 2
    assert work.n_add[0] == work.n_mul[0] == 800 and work.n_fma[0] == 0
    assert work.l2[0] >= work.dram[0] and work.l1[0] >= work.l2[0]


def test_dedispersion_hull_prices_a_conversion_and_the_index_of_each_application() -> None:
    names = ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y")
    problem = {"samples": 100, "dms": 4, "channels": 48, "max_shift": 10}
    hull = kernel_work("dedispersion-milo", np.array([[32, 4, 1, 1]]), names, problem).hull
    assert hull.f == 2 and hull.conversions == 1 and hull.element_bytes == 1
    assert hull.variables.m == 48 and hull.variables.w == 400
    assert hull.variables.o == 256  # 4m = 192, rounded to the nearest power of two as o always is
    wide = kernel_work("dedispersion-milo", np.array([[32, 4, 1, 1]]), names, {**problem, "channels": 40}).hull
    assert wide.variables.o == 128  # 4m = 160: log2 7.32 rounds down


def test_dedispersion_reads_each_channel_up_to_its_last_delay() -> None:
    names = ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y")
    problem = {"samples": 25000, "dms": 2048, "channels": 1536, "max_shift": 650}
    work = kernel_work("dedispersion-milo", np.array([[32, 8, 1, 1], [8, 8, 1, 1]]), names, problem)
    inputs = work.dram[0] - 2048 * 25000 * 4 - 1536 * 4
    assert 1536 * 25000 < inputs < 1536 * 25650  # more than the samples, less than the padded array
    # a warp of 32 x 1 threads shares one delay; of 8 x 4, four
    pairs = 2048 * 25000 * 1536
    assert work.l1[0] == pytest.approx(pairs * (1 + 4 / 32) + 2048 * 25000 * 4)
    assert work.l1[1] == pytest.approx(pairs * (1 + 16 / 32) + 2048 * 25000 * 4)


def test_a_zero_size_parameter_is_refused() -> None:
    from perfcast.errors import InputError

    with pytest.raises(InputError, match="zero or negative"):
        kernel_work("convolution-milo", np.array([[16, 4, 0, 2, 1]]), CONV, SMALL_CONV)


def test_a_problem_without_its_sizes_is_named() -> None:
    from perfcast.errors import InputError

    with pytest.raises(InputError, match="lacks 'filter'"):
        kernel_work("convolution-milo", np.array([[16, 4, 1, 2, 1]]), CONV, {"size": [32, 32]})


def test_gemm_counts_the_words_a_warp_reads_once() -> None:
    names = ("MWG", "NWG", "MDIMC", "NDIMC", "SA", "SB")
    problem = {"m": 64, "n": 64, "k": 64, "element_bytes": 4}
    # 8 x 8 threads: a warp spans 8 m-indices and 4 n-indices, so A's words are read 8 / 32, B's 4 / 32
    work = kernel_work("gemm", np.array([[32, 32, 8, 8, 0, 0]]), names, problem)
    mnk = 64**3
    loads = mnk / 4 * 4 * 8 / 32 + mnk / 4 * 4 * 4 / 32  # MWI = NWI = 4
    assert work.l1[0] == pytest.approx(loads + 2 * 64 * 64 * 4)


def test_dedispersion_groups_that_span_more_dms_fetch_more_sectors_each() -> None:
    names = ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y")
    problem = {"samples": 25000, "dms": 2048, "channels": 1536, "max_shift": 650}
    thin, tall = kernel_work("dedispersion-milo", np.array([[32, 32, 1, 1], [32, 32, 1, 8]]), names, problem).l2
    # the tall groups cover 8x the DMs: fewer groups, but each spans more samples per channel
    assert tall < thin


def test_gemm_panels_shrink_with_larger_tiles() -> None:
    names = ("MWG", "NWG", "MDIMC", "NDIMC", "SA", "SB")
    problem = {"m": 64, "n": 64, "k": 64, "element_bytes": 4}
    work = kernel_work("gemm", np.array([[32, 32, 8, 8, 1, 1], [64, 64, 8, 8, 1, 1]]), names, problem)
    assert work.flop[0] == 2 * 64**3
    assert work.dram[0] == 4 * 64 * 64 * 4
    assert work.l2[0] == (64**3 / 32 * 2) * 4 + 2 * 64 * 64 * 4
    assert work.l2[1] < work.l2[0]


def test_gemm_loads_from_global_memory_what_it_does_not_stage() -> None:
    names = ("MWG", "NWG", "MDIMC", "NDIMC", "SA", "SB")
    problem = {"m": 64, "n": 64, "k": 64, "element_bytes": 4}
    staged, direct = kernel_work("gemm", np.array([[32, 32, 8, 8, 1, 1], [32, 32, 8, 8, 0, 0]]), names, problem).l1
    assert direct > staged


def test_pnpoly_counts_only_unconditional_flop() -> None:
    names = ("between_method", "block_size_x", "tile_size", "use_method")
    work = kernel_work("pnpoly", np.array([[2, 32, 2, 0], [0, 32, 2, 0]]), names, {"points": 10, "vertices": 4})
    assert work.flop[0] == 40 * (3 + 1.5)
    assert work.flop[1] == 40 * 1.5
    assert work.dram[0] == 10 * 12


def test_every_corpus_kernel_has_a_work_count_with_caveats() -> None:
    from perfcast.validation.corpus import read_corpus

    for kernel in read_corpus().kernels.values():
        assert kernel.name in WORK
        work = kernel_work(kernel.name, kernel.configs[:5], kernel.parameters, kernel.problem)
        assert (work.flop > 0).all() and (work.dram > 0).all() and work.caveats
        assert (work.l2 >= work.dram).all() and (work.l1 >= work.dram).all()


def test_an_unknown_kernel_is_named() -> None:
    with pytest.raises(NotFound, match="cannot count"):
        kernel_work("fft", np.zeros((1, 1), dtype=np.int64), ("x",), {})
