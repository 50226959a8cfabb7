"""The in-core reading of compiled code (docs/models.md §3.5): block counts, innermost loops, cycles a work-item."""

import pytest

from perfcast.profiles.incore import (
    Block,
    Loop,
    group_items,
    innermost_loops,
    kernel_incore,
    pocl_llvm_cpu,
    read_blocks,
    with_lines,
)
from perfcast.profiles.profile import ProfileError

BLOCKS = """\
hash\thash\tentry\t256\t157,158
hash\thash\tfor.cond\t4352\t160
hash\thash\tfor.body\t4096\t160,161,162
hash\thash\tfor.cond.cleanup\t256\t166
hash\thash\tfor.body\t4096\t160,161,162
"""


def test_block_counts_are_read_and_a_kernel_launched_twice_summed():
    blocks = read_blocks(BLOCKS)["hash"]
    body = next(b for b in blocks if b.name == "for.body")
    assert body == Block("hash", "for.body", 8192, frozenset({160, 161, 162}))
    assert group_items("hash", blocks) == 256
    assert group_items("other", blocks) is None
    with pytest.raises(ProfileError, match="line 1"):
        read_blocks("hash\tentry\t256\n")


def _listing(rows):
    """(address, instruction, line) rows from (address, instruction) and a line table."""
    return with_lines([(a, t) for a, t, _ in rows], sorted({(a, line) for a, _, line in rows}))


def test_innermost_loops_leave_out_outer_loops_padding_and_overlapping_ranges():
    code = _listing([
        (0x10, "mov    %edi,%eax", 157),
        (0x14, "shr    $0x10,%eax", 161),   # inner loop: 0x14..0x20, unrolled twice (161, 162 recur)
        (0x17, "xor    %ebx,%eax", 162),
        (0x1a, "shr    $0x10,%eax", 161),
        (0x1c, "nop", 161),
        (0x1d, "xor    %ebx,%eax", 162),
        (0x20, "jne    14", 160),
        (0x22, "add    $0x1,%rcx", 158),
        (0x26, "jne    10", 158),           # the outer loop around it
        (0x30, "add    $0x1,%rax", 170),
        (0x34, "jne    30", 170),
        (0x40, "add    $0x2,%rax", 171),    # 0x38..0x44 and 0x40..0x48 overlap without nesting: a jump table
        (0x44, "jne    38", 171),
        (0x48, "jne    40", 171),
    ])
    loops = innermost_loops(code)
    assert [(loop.start, loop.end) for loop in loops] == [(0x14, 0x20), (0x30, 0x34)]
    inner = loops[0]
    assert inner.body == ("shr    $0x10,%eax", "xor    %ebx,%eax", "shr    $0x10,%eax", "xor    %ebx,%eax")
    assert inner.lines == frozenset({160, 161, 162}) and inner.unroll == 2
    assert loops[1].unroll == 1


def test_cycles_a_work_item_by_hand():
    # 256 work-items; the inner loop's block runs 16 times a work-item; the compiled loop runs it unrolled 2x in
    # 2 copies (the work-item loop unrolled by two) at 10 cycles an iteration: 16 / 2 x 10 / 2 = 40 cycles.
    blocks = [b if b.name != "for.body" else Block(b.function, b.name, 4096, b.lines)  # one launch's count
              for b in read_blocks(BLOCKS)["hash"]]
    inner = Loop(0x14, 0x20, ("a",) * 4, frozenset({160, 161, 162}), 2)
    copy = Loop(0x60, 0x6c, ("a",) * 4, frozenset({160, 161, 162}), 2)
    items_loop = Loop(0x30, 0x34, ("b",), frozenset({157, 158}), 1)  # runs the entry block: a work-item loop
    costs = {(0x14, 0x20): (10.0, 2.5), (0x60, 0x6c): (10.0, 2.5), (0x30, 0x34): (3.0, 1.0)}
    estimate = kernel_incore("skylake-avx512", blocks, [inner, copy, items_loop], 256, costs)
    assert estimate.cycles_per_item == pytest.approx(16 / 2 * 10 / 2)
    first, second = estimate.loops
    assert (first.copies, first.unroll, first.executions_per_item, first.inner) == (2, 2, 16.0, True)
    assert (second.executions_per_item, second.inner, second.cycles_per_item) == (1.0, False, 0.0)
    assert estimate.as_record()["loops"][0]["lines"] == [160, 161, 162]
    with pytest.raises(ValueError, match="0 work-items"):
        kernel_incore("skylake-avx512", blocks, [inner], 0, costs)


def test_a_loop_no_block_fits_costs_nothing():
    loop = Loop(0x14, 0x20, ("a",), frozenset({300}), 1)
    estimate = kernel_incore("znver4", read_blocks(BLOCKS)["hash"], [loop], 256, {(0x14, 0x20): (5.0, 1.0)})
    assert estimate.cycles_per_item == 0.0 and estimate.loops[0].executions_per_item is None


def test_the_cpu_pocl_compiles_for_is_read_off_its_device_name():
    known = {"skylake", "skylake-avx512", "x86-64", "x86-64-v3", "znver4"}
    assert pocl_llvm_cpu("pthread-skylake-avx512-Intel(R) Xeon(R) Processor", known) == "skylake-avx512"
    assert pocl_llvm_cpu("cpu-x86-64-v3-AMD EPYC 9R14", known) == "x86-64-v3"
    assert pocl_llvm_cpu("pthread-znver4", known) == "znver4"
    assert pocl_llvm_cpu("pthread-haswell-Intel", known) is None  # a CPU llvm-mca does not know
    assert pocl_llvm_cpu("NVIDIA H100", known) is None
