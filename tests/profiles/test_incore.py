"""The in-core reading of compiled code (docs/models.md §3.5): block counts, innermost loops, cycles a work-item."""

from pathlib import Path

import pytest

from perfcast.profiles.incore import (
    Block,
    Loop,
    group_items,
    innermost_loops,
    kernel_incore,
    pocl_llvm_cpu,
    read_blocks,
    unroll_factor,
    with_lines,
)
from perfcast.profiles.profile import ProfileError

BLOCKS = """\
hash\thash\tentry\t256\t5\t157,158
hash\thash\tfor.cond\t4352\t2\t160
hash\thash\tfor.body\t4096\t7\t160,161,162
hash\thash\tfor.cond.cleanup\t256\t3\t166
hash\thash\tfor.body\t4096\t7\t160,161,162
"""


def test_block_counts_are_read_and_a_kernel_launched_twice_summed():
    blocks = read_blocks(BLOCKS)["hash"]
    body = next(b for b in blocks if b.name == "for.body")
    assert body == Block("hash", "for.body", 8192, frozenset({160, 161, 162}), 7)
    assert group_items("hash", blocks) == 256
    assert group_items("other", blocks) is None
    with pytest.raises(ProfileError, match="line 1"):
        read_blocks("hash\tentry\t256\n")
    with pytest.raises(ProfileError, match="line 1"):
        read_blocks("hash\thash\tentry\t256\tmany\t157\n")


def _listing(rows):
    """(address, instruction, line) rows from (address, instruction) and a line table."""
    return with_lines([(a, t) for a, t, _ in rows], sorted({(a, line) for a, _, line in rows}))


def test_innermost_loops_leave_out_outer_loops_and_padding_and_keep_overlapping_ranges():
    code = _listing([
        (0x10, "mov    %edi,%eax", 157),
        (0x14, "shr    $0x10,%eax", 161),   # inner loop: 0x14..0x20, its body unrolled twice (161, 162 recur)
        (0x17, "xor    %ebx,%eax", 162),
        (0x1a, "shr    $0x10,%eax", 161),
        (0x1c, "nop", 161),
        (0x1d, "xor    %ebx,%eax", 162),
        (0x20, "jne    14", 160),
        (0x22, "add    $0x1,%rcx", 158),
        (0x26, "jne    10", 158),           # the outer loop around it
        (0x30, "add    $0x1,%rax", 170),
        (0x34, "jne    30", 170),
        (0x40, "add    $0x2,%rax", 171),    # 0x38..0x44 and 0x40..0x48 overlap without nesting: both kept
        (0x44, "jne    38", 171),
        (0x48, "jne    40", 171),
    ])
    loops = innermost_loops(code)
    assert [(loop.start, loop.end) for loop in loops] == [(0x14, 0x20), (0x30, 0x34), (0x38, 0x44), (0x40, 0x48)]
    inner = loops[0]
    assert inner.body == ("shr    $0x10,%eax", "xor    %ebx,%eax", "shr    $0x10,%eax", "xor    %ebx,%eax")
    assert inner.lines == frozenset({160, 161, 162}) and inner.sequence == (161, 162, 161, 162)
    assert unroll_factor(inner.sequence, {161, 162}) == 2
    assert unroll_factor(loops[1].sequence, {170}) == 1


def test_a_loop_closed_in_two_places_is_one_loop_to_its_last_jump():
    # An if/else inside the loop: each arm jumps back to the head; the loop runs to the second jump.
    code = _listing([
        (0x10, "cmp    %eax,%ebx", 12),
        (0x12, "jle    20", 12),
        (0x14, "add    $0x1,%eax", 13),
        (0x18, "jmp    10", 12),
        (0x20, "sub    $0x1,%eax", 14),
        (0x24, "jne    10", 12),
    ])
    (loop,) = innermost_loops(code)
    assert (loop.start, loop.end) == (0x10, 0x24) and loop.lines == frozenset({12, 13, 14})


def test_unroll_is_the_median_of_the_block_s_lines_runs():
    # A header line at the top and the bottom, two interleaved statements: not an unrolled body.
    assert unroll_factor((60, 61, 62, 61, 62, 60), {61, 62, 63}) == 2
    assert unroll_factor((60, 61, 62, 63, 60), {60, 61, 62, 63}) == 1
    assert unroll_factor((77, 78) * 16, {77, 78}) == 16
    assert unroll_factor((), {77}) == 1


def test_cycles_a_work_item_by_hand():
    # 256 work-items; the inner loop's block runs 16 times a work-item; the compiled loop runs it unrolled 2x in
    # 2 copies (the work-item loop unrolled by two) at 10 cycles an iteration: 16 / 2 x 10 / 2 = 40 cycles.
    blocks = [b if b.name != "for.body" else Block(b.function, b.name, 4096, b.lines, 7)  # one launch's count
              for b in read_blocks(BLOCKS)["hash"]]
    inner = Loop(0x14, 0x20, ("a",) * 4, frozenset({160, 161, 162}), (161, 162, 161, 162))
    copy = Loop(0x60, 0x6c, ("a",) * 4, frozenset({160, 161, 162}), (161, 162, 161, 162))
    items_loop = Loop(0x30, 0x34, ("b",), frozenset({157, 158}), (157,))  # runs the entry block: a work-item loop
    costs = {(0x14, 0x20): (10.0, 2.5), (0x60, 0x6c): (10.0, 2.5), (0x30, 0x34): (3.0, 1.0)}
    estimate = kernel_incore("skylake-avx512", blocks, [inner, copy, items_loop], 256, costs)
    assert estimate.cycles_per_item == pytest.approx(16 / 2 * 10 / 2)
    first, second = estimate.loops
    assert (first.copies, first.unroll, first.executions_per_item, first.inner) == (2, 2, 16.0, True)
    assert (second.executions_per_item, second.inner, second.cycles_per_item) == (1.0, False, 0.0)
    assert estimate.as_record()["loops"][0]["lines"] == [160, 161, 162]
    # Oclgrind's instructions a work-item: entry 5 + 17 conditions x 2 + 16 bodies x 7 + cleanup 3.
    assert estimate.instructions_per_item == pytest.approx(5 + 17 * 2 + 16 * 7 + 3)
    with pytest.raises(ProfileError, match="0 work-items"):
        kernel_incore("skylake-avx512", blocks, [inner], 0, costs)


def test_a_block_is_priced_by_its_smallest_loop_and_its_copies_by_their_instructions():
    # The real loop (two copies, their jump targets apart) and a longer chain into an unrolled remainder.
    blocks = [Block("k", "entry", 256, frozenset({10}), 3), Block("k", "for.body", 2560, frozenset({20, 21}), 4)]
    loop = Loop(0x10, 0x20, ("add    $0x1,%eax", "jne    30"), frozenset({20, 21}), (20, 21))
    copy = Loop(0x40, 0x50, ("add    $0x1,%eax", "jne    60"), frozenset({20, 21}), (20, 21))
    chain = Loop(0x70, 0xa0, ("add    $0x1,%eax",) * 8, frozenset({20, 21}), (20, 21) * 4)
    costs = {(0x10, 0x20): (4.0, 1.0), (0x40, 0x50): (4.0, 1.0), (0x70, 0xa0): (12.0, 8.0)}
    (cost,) = kernel_incore("znver4", blocks, [chain, loop, copy], 256, costs).loops
    assert (cost.cycles, cost.copies, cost.unroll) == (4.0, 2, 1) and cost.cycles_per_item == pytest.approx(20.0)


def test_a_loop_over_vectors_of_work_items_is_not_priced():
    # 256-bit registers or gathers: PoCL vectorised a region's work-item loop, whose iterations the counts lack.
    blocks = [Block("k", "entry", 256, frozenset({10}), 3), Block("k", "for.body", 2560, frozenset({20, 21}), 4)]
    vector = Loop(0x10, 0x20, ("vaddps %ymm1,%ymm2,%ymm3", "jne    10"), frozenset({20, 21}), (20, 21))
    gather = Loop(0x30, 0x40, ("vgatherdps (%rax,%xmm0,4),%xmm1{%k2}",), frozenset({20, 21}), (20, 21))
    costs = {(0x10, 0x20): (4.0, 1.0), (0x30, 0x40): (4.0, 1.0)}
    estimate = kernel_incore("znver4", blocks, [vector, gather], 256, costs)
    assert estimate.loops == () and estimate.cycles_per_item == 0.0
    # A kernel's own float4 arithmetic runs in 128-bit registers: priced.
    float4 = Loop(0x50, 0x60, ("vsubps %xmm10,%xmm6,%xmm6", "vdivss %xmm0,%xmm8,%xmm0"), frozenset({20, 21}), (20, 21))
    assert kernel_incore("znver4", blocks, [float4], 256, {(0x50, 0x60): (9.0, 6.0)}).cycles_per_item == 90.0


def test_a_loop_no_block_fits_costs_nothing():
    loop = Loop(0x14, 0x20, ("a",), frozenset({300}), (300,))
    estimate = kernel_incore("znver4", read_blocks(BLOCKS)["hash"], [loop], 256, {(0x14, 0x20): (5.0, 1.0)})
    assert estimate.cycles_per_item == 0.0 and estimate.loops[0].executions_per_item is None


def test_a_block_with_a_line_hoisted_out_of_the_loop_still_matches():
    blocks = [Block("k", "entry", 256, frozenset({10})), Block("k", "for.body", 2560, frozenset({20, 21, 22}))]
    loop = Loop(0x14, 0x20, ("a",) * 3, frozenset({20, 21}), (20, 21, 21))  # line 22's work was hoisted
    estimate = kernel_incore("znver4", blocks, [loop], 256, {(0x14, 0x20): (4.0, 1.0)})
    assert estimate.loops[0].executions_per_item == 10.0 and estimate.cycles_per_item == pytest.approx(40.0)


def test_parsers_of_the_tools_output(monkeypatch):
    import perfcast.profiles.incore as incore

    listing = """
0000000000001000 <_pocl_kernel_k>:
    1000:	mov    %edi,%eax
    1004:	jne    1000 <_pocl_kernel_k+0x0>
0000000000001010 <_pocl_kernel_k_workgroup>:
    1010:	ret
"""
    table = """tempfile_x.cl:
File name                            Line number    Starting address    View    Stmt
tempfile_x.cl                                 5              0x1000               x
header.h                                     90              0x1002               x
tempfile_x.cl                                 6              0x1004               x
tempfile_x.cl                                 7              0x1004               x
"""
    monkeypatch.setattr(incore.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(incore, "_run", lambda command, what, stdin=None: table if "--dwarf=decodedline" in command
                        else listing)
    assert incore.objdump_function(Path("k.so"), "_pocl_kernel_k") == [(0x1000, "mov    %edi,%eax"),
                                                                        (0x1004, "jne    1000")]
    assert incore.objdump_function(Path("k.so"), "_pocl_kernel_other") == []
    assert incore.listed_functions(listing) == ["_pocl_kernel_k", "_pocl_kernel_k_workgroup"]
    assert incore.function_code(listing, "_pocl_kernel_k_workgroup") == [(0x1010, "ret")]
    assert incore.debug_lines(Path("k.so")) == [(0x1000, 5), (0x1004, 6), (0x1004, 7)]  # the header's row left out
    assert incore._assemblable("jne    1b20") == "jne    .Ltarget_1b20"
    assert incore._assemblable("call   10a0") == "call   .Ltarget_10a0"
    assert incore._assemblable("add    $0x10,%rax") == "add    $0x10,%rax"


def test_the_cpu_pocl_compiles_for_is_read_off_its_device_name():
    known = {"skylake", "skylake-avx512", "x86-64", "x86-64-v3", "znver4"}
    assert pocl_llvm_cpu("pthread-skylake-avx512-Intel(R) Xeon(R) Processor", known) == "skylake-avx512"
    assert pocl_llvm_cpu("cpu-x86-64-v3-AMD EPYC 9R14", known) == "x86-64-v3"
    assert pocl_llvm_cpu("pthread-znver4", known) == "znver4"
    assert pocl_llvm_cpu("pthread-haswell-Intel", known) is None  # a CPU llvm-mca does not know
    assert pocl_llvm_cpu("NVIDIA H100", known) is None
    assert pocl_llvm_cpu("cpu-minimal-znver4-AMD", known) == "znver4"
    assert pocl_llvm_cpu("cpu-tbb-skylake-avx512-Intel", known) == "skylake-avx512"
