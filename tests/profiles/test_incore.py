"""The in-core reading of compiled code (docs/models.md §3.5): block counts, innermost loops, cycles a work-item."""

from pathlib import Path

import pytest

from perfcast.profiles.incore import (
    Block,
    Loop,
    code_precision,
    compiled_fp_lanes,
    fp_arithmetic_lanes,
    group_items,
    innermost_loops,
    kernel_incore,
    modelled_core,
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


@pytest.mark.parametrize(("instruction", "lanes"), [
    ("vfmadd231ps %ymm1,%ymm2,%ymm3", 8),  # 8 floats in 256 bits
    ("vfmadd213pd 0x20(%rax),%zmm1,%zmm2", 8),  # 8 doubles in 512 bits, a memory operand first
    ("vmulps (%rdx),%ymm4,%ymm5{%k1}", 8),
    ("addps  %xmm1,%xmm0", 4),  # SSE: 4 floats in 128 bits
    ("vsqrtpd %ymm0,%ymm1", 4),
    ("vmulss %xmm0,%xmm1,%xmm1", 1),  # scalar, though in a vector register
    ("vfnmadd231sd %xmm3,%xmm2,%xmm1", 1),
    ("divsd  %xmm1,%xmm0", 1),
    ("vpaddd %ymm1,%ymm2,%ymm3", None),  # integer
    ("vpmaxsd %ymm1,%ymm2,%ymm3", None),
    ("vmovups (%rax),%ymm0", None),  # a move, not arithmetic
    ("vaddsubps %ymm1,%ymm2,%ymm3", 8),
    ("vfmaddsub231pd %zmm1,%zmm2,%zmm3", 8),
    ("vrcp14ps %ymm1,%ymm2", 8),
    ("vrsqrtss %xmm1,%xmm2,%xmm3", 1),
    ("vhaddpd %xmm1,%xmm2,%xmm3", 2),
    ("vdpps  $0xff,%xmm1,%xmm2,%xmm3", 4),
    ("vmaxps (%rax){1to16},%zmm1,%zmm2{%k1}{z}", 16),  # an embedded broadcast, a mask
    ("vcvtpd2ps %ymm1,%xmm2", None),  # a conversion
    ("vandps %ymm1,%ymm2,%ymm3", None),  # logic (gcc's fabs)
    ("add    $0x1,%eax", None),
])
def test_the_elements_of_a_floating_point_instruction_are_read_off_its_mnemonic_and_register(instruction, lanes):
    assert fp_arithmetic_lanes(instruction) == lanes


def test_compiled_fp_lanes_weigh_each_instruction_by_how_often_it_runs():
    packed = Loop(0x10, 0x20, ("vfmadd231ps %ymm1,%ymm2,%ymm3", "vfmadd231ps %ymm4,%ymm5,%ymm6", "jne    10"),
                  frozenset({20}), (20, 20))
    scalar = Loop(0x30, 0x40, ("vmulss %xmm0,%xmm1,%xmm1", "vaddss %xmm1,%xmm2,%xmm2", "mov    %eax,(%rdx)"),
                  frozenset({30}), (30, 30))
    moves = Loop(0x50, 0x60, ("mov    (%rax),%ecx",), frozenset({40}), (40,))
    # 10 iterations of two 8-float FMAs against 1 of two scalar operations: (10 x 16 + 1 x 2) / (10 x 2 + 1 x 2).
    assert compiled_fp_lanes([(packed, 10.0), (scalar, 1.0), (moves, 5.0)]) == pytest.approx(162 / 22)
    assert compiled_fp_lanes([(scalar, 3.0)]) == 1.0
    assert compiled_fp_lanes([(moves, 5.0)]) is None and compiled_fp_lanes([]) is None
    assert compiled_fp_lanes([(packed, 0.0)]) is None


def test_a_block_s_iterations_run_in_its_most_packed_loop():
    # A vector body and its scalar remainder run one block: the body carries its iterations, the remainder none.
    blocks = [Block("k", "entry", 64, frozenset({10}), 3), Block("k", "for.body", 640, frozenset({20}), 6)]
    body = Loop(0x10, 0x20, ("vfmadd231ps %ymm1,%ymm2,%ymm3", "vaddps %ymm3,%ymm4,%ymm4", "jne    10"),
                frozenset({20}), (20, 20))
    remainder = Loop(0x40, 0x50, ("vfmadd231ss %xmm1,%xmm2,%xmm3", "jne    40"), frozenset({20}), (20,))
    costs = {(0x10, 0x20): (2.0, 1.0), (0x40, 0x50): (1.0, 1.0)}
    assert kernel_incore("skylake-avx512", blocks, [body, remainder], 64, costs).fp_lanes == 8.0


def test_a_kernel_s_reading_carries_its_compiled_fp_lanes():
    # SHOC's sgemmNN as PoCL compiled it: a region of 16 products a step packed into 8-float FMAs, run 16 times a
    # work-item in two copies, and an epilogue of scalar multiplies unrolled 16 times, run once.
    blocks = [Block("k", "entry", 64, frozenset({10}), 3), Block("k", "do.body", 1024, frozenset({20, 21}), 40),
              Block("k", "for.body", 1024, frozenset({30}), 6)]
    region = ("vfmadd231ps %ymm1,%ymm2,%ymm3", "vfmadd231ps %ymm4,%ymm5,%ymm6", "jne    10")
    loops = [Loop(0x10, 0x20, region, frozenset({20, 21}), (20, 21)),
             Loop(0x100, 0x120, region[:2] + ("jne    100",), frozenset({20, 21}), (20, 21)),
             Loop(0x200, 0x300, ("vmulss %xmm0,%xmm1,%xmm1",) * 16, frozenset({30}), (30, 31) * 16)]
    costs = {(loop.start, loop.end): (4.0, 2.0) for loop in loops}
    estimate = kernel_incore("skylake-avx512", blocks, loops, 64, costs)
    # Region: 16 executions / unroll 1 / 2 copies = 8 iterations each, 2 FMAs of 8; epilogue 16 / 16 = 1 of 16.
    assert estimate.fp_lanes == pytest.approx((2 * 8 * 2 * 8 + 1 * 16) / (2 * 8 * 2 + 16))
    assert estimate.as_record()["fp_lanes"] == estimate.fp_lanes


def test_a_kernel_s_own_double4_in_wide_registers_among_scalar_arithmetic_is_priced():
    # SHOC md's neighbour loop in double precision: one packed subtraction of the double4 positions, the rest scalar.
    blocks = [Block("k", "entry", 256, frozenset({10}), 3), Block("k", "while.body", 2560, frozenset({20, 21}), 20)]
    body = ("vmovapd (%rsi,%rdx,1),%ymm4", "vsubpd (%rsi,%rdx,1),%ymm4,%ymm7", "vmulsd %xmm7,%xmm7,%xmm1",
            "vfmadd231sd %xmm6,%xmm6,%xmm1", "vfmadd231sd %xmm5,%xmm5,%xmm1", "vdivsd %xmm1,%xmm0,%xmm2", "jne    10")
    own = Loop(0x10, 0x40, body, frozenset({20, 21}), (20, 21))
    assert kernel_incore("skylake-avx512", blocks, [own], 256, {(0x10, 0x40): (15.0, 5.0)}).cycles_per_item == 150.0
    # Its arithmetic mostly packed, the same registers are a vectorised work-item loop's: not priced.
    packed = Loop(0x10, 0x40, ("vsubpd %ymm1,%ymm2,%ymm3", "vmulpd %ymm3,%ymm3,%ymm4", "vaddsd %xmm0,%xmm1,%xmm1"),
                  frozenset({20, 21}), (20, 21))
    assert kernel_incore("skylake-avx512", blocks, [packed], 256, {(0x10, 0x40): (15.0, 5.0)}).loops == ()
    # Wide moves without arithmetic (an integer or copy loop over vectors of work-items): not priced either.
    moves = Loop(0x10, 0x40, ("vmovups (%rax),%ymm0", "vpaddd %ymm0,%ymm1,%ymm1"), frozenset({20, 21}), (20, 21))
    assert kernel_incore("skylake-avx512", blocks, [moves], 256, {(0x10, 0x40): (15.0, 5.0)}).loops == ()


def test_the_precision_of_compiled_code_is_that_of_most_of_its_arithmetic():
    assert code_precision(["vsubpd %ymm1,%ymm2,%ymm3", "vmulsd %xmm0,%xmm1,%xmm1", "vmulss %xmm0,%xmm1,%xmm1"]) == "fp64"
    assert code_precision(["vfmadd231ps %ymm1,%ymm2,%ymm3", "vmulss %xmm0,%xmm1,%xmm1", "vmulsd %xmm0,%xmm1,%xmm2"]) == (
        "fp32")
    assert code_precision(["add    $0x1,%eax", "vmovupd (%rax),%ymm0"]) is None


def _two_builds(tmp_path, monkeypatch, code: dict[str, list[str]]) -> dict[str, list[Block]]:  # type: ignore[no-untyped-def]
    """Two PoCL cache entries of kernel k, builds AA and BB, whose code is `code`'s (read when analysed); its blocks."""
    from perfcast.profiles import incore

    for build in ("AA", "BB"):
        (tmp_path / build / "k" / "64-1-1").mkdir(parents=True)
        (tmp_path / build / "k" / "64-1-1" / "k.so").write_bytes(b"")

    def function(path, name):  # type: ignore[no-untyped-def]
        body = code[path.parts[-4]]
        return [(0x10 + 4 * i, text) for i, text in enumerate(body)] + [(0x10 + 4 * len(body), "jne    10")]

    monkeypatch.setattr(incore, "mca_tool", lambda: "llvm-mca")
    monkeypatch.setattr(incore, "objdump_function", function)
    monkeypatch.setattr(incore, "debug_lines", lambda path: [(0x10, 20)])
    return {"k": [Block("k", "entry", 64, frozenset({10}), 3), Block("k", "for.body", 640, frozenset({20}), 6)]}


def test_a_kernel_built_in_two_precisions_keeps_a_reading_of_each(tmp_path, monkeypatch):
    # SHOC's md: one name, a float build and a double build (two PoCL cache entries), 10 and 20 cycles an
    # iteration: they disagree as a whole, and each precision's one build is its own reading.
    from perfcast.profiles import incore

    blocks = _two_builds(tmp_path, monkeypatch, {
        "AA": ["vmulss %xmm0,%xmm1,%xmm1", "vaddss %xmm1,%xmm2,%xmm2"],
        "BB": ["vmulsd %xmm0,%xmm1,%xmm1", "vsubpd %ymm3,%ymm4,%ymm5", "vaddsd %xmm1,%xmm2,%xmm2"]})
    monkeypatch.setattr(incore, "mca_cycles",
                        lambda body, cpu, tool, iterations=500: (20.0 if "vmulsd" in body[0] else 10.0, 2.0))
    reading = incore.analyse_pocl_kernels(tmp_path, blocks, "skylake-avx512")
    assert reading.kernels == {}  # 100 and 200 cycles a work-item: no one reading
    split = reading.precisions["k"]
    assert (split["fp32"].cycles_per_item, split["fp64"].cycles_per_item) == (100.0, 200.0)
    assert split["fp32"].fp_lanes == 1.0 and split["fp64"].fp_lanes == pytest.approx(6 / 3)
    # Builds that agree are one reading, with the narrowest build's lanes, and each precision's too.
    monkeypatch.setattr(incore, "mca_cycles", lambda body, cpu, tool, iterations=500: (10.0, 2.0))
    reading = incore.analyse_pocl_kernels(tmp_path, blocks, "skylake-avx512")
    assert reading.kernels["k"].cycles_per_item == 100.0 and reading.kernels["k"].fp_lanes == 1.0
    assert set(reading.precisions["k"]) == {"fp32", "fp64"}


def test_the_reading_counts_the_integer_divides_of_a_kernel_s_code(tmp_path, monkeypatch):
    # Rodinia's backprop divides by a loop's powers of two; PoCL unrolls the loop and each divide becomes a mask.
    from perfcast.profiles import incore
    from perfcast.profiles.incore import integer_divides

    assert integer_divides(["idivl  %ecx", "divq   %rsi", "div    %r8d", "idivw  (%rax)", "cltd"]) == 4
    # Floating-point divides are not the integer divider's.
    assert integer_divides(["vdivps %ymm1,%ymm2,%ymm3", "divss  %xmm1,%xmm0", "vdivsd %xmm1,%xmm2,%xmm3",
                            "divpd  %xmm1,%xmm0", "call   divide"]) == 0
    code = {"AA": ["vmulss %xmm0,%xmm1,%xmm1", "and    $0x3,%eax"], "BB": ["vmulss %xmm0,%xmm1,%xmm1", "idivl  %ecx"]}
    blocks = _two_builds(tmp_path, monkeypatch, code)
    monkeypatch.setattr(incore, "mca_cycles", lambda body, cpu, tool, iterations=500: (10.0, 2.0))
    # Two builds that agree: the one reading divides where either build does (another local size may keep a divide).
    reading = incore.analyse_pocl_kernels(tmp_path, blocks, "znver3").kernels["k"]
    assert reading.divides == 1 and reading.as_record()["divides"] == 1
    code["BB"] = ["vmulss %xmm0,%xmm1,%xmm1", "shr    $0x2,%eax"]
    assert incore.analyse_pocl_kernels(tmp_path, blocks, "znver3").kernels["k"].divides == 0
    assert kernel_incore("znver3", blocks["k"], [], 64, {}).divides is None  # not read: unknown, not none


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


def test_the_host_core_is_modelled_where_llvm_has_a_model_of_it():
    """A Zen 3 runs the code a distribution's PoCL built for Haswell: its latencies are the Zen 3's."""
    known = {"haswell", "skylake-avx512", "x86-64", "x86-64-v3", "znver3", "generic"}
    assert modelled_core("znver3", "haswell", known) == "znver3"
    assert modelled_core("skylake-avx512", "skylake-avx512", known) == "skylake-avx512"
    # No model of the host's core (a name LLVM lacks, or a generic level): PoCL's target, where LLVM knows it.
    assert modelled_core("znver5", "haswell", known) == "haswell"
    assert modelled_core("x86-64-v3", "skylake-avx512", known) == "skylake-avx512"
    assert modelled_core("generic", None, known) is None


def test_the_cpu_pocl_compiles_for_is_read_off_its_device_name():
    known = {"skylake", "skylake-avx512", "x86-64", "x86-64-v3", "znver4"}
    assert pocl_llvm_cpu("pthread-skylake-avx512-Intel(R) Xeon(R) Processor", known) == "skylake-avx512"
    assert pocl_llvm_cpu("cpu-x86-64-v3-AMD EPYC 9R14", known) == "x86-64-v3"
    assert pocl_llvm_cpu("pthread-znver4", known) == "znver4"
    assert pocl_llvm_cpu("pthread-haswell-Intel", known) is None  # a CPU llvm-mca does not know
    assert pocl_llvm_cpu("NVIDIA H100", known) is None
    assert pocl_llvm_cpu("cpu-minimal-znver4-AMD", known) == "znver4"
    assert pocl_llvm_cpu("cpu-tbb-skylake-avx512-Intel", known) == "skylake-avx512"


def test_a_kernel_s_reading_says_whether_it_masks_its_loads_and_stores():
    # The suite's triad as PoCL compiled it on an AVX2 host: its guard became masked moves in the work-item loop.
    from perfcast.profiles.incore import masked_memory

    guarded = ("vpcmpgtd %ymm11,%ymm1,%ymm11", "vmaskmovps (%rcx,%rdi,4),%ymm11,%ymm12",
               "vfmadd213ps %ymm12,%ymm2,%ymm13", "vmaskmovps %ymm13,%ymm11,(%rax,%rdi,4)", "jne    1160")
    assert masked_memory(guarded) and masked_memory(["vpmaskmovd %ymm1,%ymm2,(%rax)"])
    # Plain vector moves, and AVX-512's masked move in its mask register, are not the costly kind.
    assert not masked_memory(["vmovups (%rcx),%ymm1", "vmovups %zmm0,(%rax){%k1}", "kmovw %eax,%k1"])
    blocks = [Block("k", "entry", 64, frozenset({10}), 3), Block("k", "for.body", 64, frozenset({20}), 6)]
    loop = Loop(0x10, 0x20, guarded, frozenset({20}), (20,) * 5)
    plain = Loop(0x10, 0x20, ("vmovups (%rcx),%ymm1", "vfmadd213ps %ymm1,%ymm2,%ymm3", "jne    10"),
                 frozenset({20}), (20,) * 3)
    costs = {(0x10, 0x20): (24.0, 12.0)}
    assert kernel_incore("znver3", blocks, [loop], 64, costs).masked
    assert not kernel_incore("znver3", blocks, [plain], 64, costs).masked
    assert kernel_incore("znver3", blocks, [loop], 64, costs).as_record()["masked"] is True


# The suite's horner_fp64 as PoCL 3.1 compiled it for a Zen 3 (pthread-haswell, -g): the work-item loop unrolled
# twice around two copies of the 16-step Horner loop (three instructions an iteration, one FMA chain).
HORNER = [
    (0x1000, "push   %rbp", 173), (0x1008, "shl    $0x8,%r8", 173), (0x100c, "xor    %eax,%eax", 173),
    (0x101e, "jmp    102c", 173),
    (0x1020, "add    $0x2,%rax", 173), (0x1024, "cmp    $0x100,%rax", 173), (0x102a, "je     1091", 173),
    (0x102c, "lea    (%rax,%r8,1),%rcx", 173), (0x1030, "cmp    %edx,%ecx", 175), (0x1032, "jge    105f", 175),
    (0x1034, "movslq %ecx,%r9", 176), (0x1037, "vmovsd (%rsi,%r9,8),%xmm2", 176), (0x103d, "mov    $0x10,%ecx", 0),
    (0x1042, "vmovapd %xmm0,%xmm3", 0), (0x1046, "cs nopw 0x0(%rax,%rax,1)", 0),
    (0x1050, "vfmadd213sd %xmm1,%xmm2,%xmm3", 178), (0x1055, "dec    %ecx", 177), (0x1057, "jne    1050", 177),
    (0x1059, "vmovsd %xmm3,(%rdi,%r9,8)", 179),
    (0x105f, "mov    %rax,%rcx", 0), (0x1062, "or     $0x1,%rcx", 0), (0x1066, "add    %r8,%rcx", 0),
    (0x1069, "cmp    %edx,%ecx", 175), (0x106b, "jge    1020", 175),
    (0x106d, "movslq %ecx,%r9", 176), (0x1070, "vmovsd (%rsi,%r9,8),%xmm2", 176), (0x1076, "mov    $0x10,%ecx", 0),
    (0x107b, "vmovapd %xmm0,%xmm3", 0), (0x107f, "nop", 0),
    (0x1080, "vfmadd213sd %xmm1,%xmm2,%xmm3", 178), (0x1085, "dec    %ecx", 177), (0x1087, "jne    1080", 177),
    (0x1089, "vmovsd %xmm3,(%rdi,%r9,8)", 179), (0x108f, "jmp    1020", 179),
    (0x1091, "pop    %rbp", 0), (0x1095, "ret", 0)]


def _horner_blocks(steps: int, items: int = 256) -> list[Block]:
    """Oclgrind's blocks of horner_fp64 over `items` work-items of `steps` Horner steps each."""
    return [Block("horner_fp64", "entry", items, frozenset({174, 175}), 4),
            Block("horner_fp64", "if.end", items, frozenset({176, 177}), 3),
            Block("horner_fp64", "for.cond", items * (steps + 1), frozenset({177}), 2),
            Block("horner_fp64", "for.body", items * steps, frozenset({177, 178}), 3),
            Block("horner_fp64", "for.cond.cleanup", items, frozenset({179, 180}), 2)]


def test_a_work_item_s_code_is_laid_out_with_each_copy_of_its_inner_loop_at_its_iterations():
    from perfcast.profiles.incore import work_item_loop, work_item_trace

    first, second = innermost_loops(HORNER)
    around = work_item_loop(HORNER, first, _horner_blocks(16), 256)
    assert around is not None
    assert (around.start, around.end, around.iterations) == (0x1020, 0x108f, 16)
    assert around.copies == ((0x1050, 0x1057), (0x1080, 0x1087))  # the work-item loop unrolled twice
    trace = work_item_trace(HORNER, around)
    # The work-item loop's own 22 instructions (padding left out), and 2 copies x 16 iterations x 3 instructions.
    assert len(trace) == 22 + 2 * 16 * 3 and len(work_item_trace(HORNER, around, 5)) == 22 + 2 * 5 * 3
    assert trace.count("vfmadd213sd %xmm1,%xmm2,%xmm3") == 32 and trace.count("jne    1050") == 16
    assert trace[:3] == ("add    $0x2,%rax", "cmp    $0x100,%rax", "je     1091") and trace[-1] == "jmp    1020"
    assert "nop" not in trace and not any(text.startswith("cs nop") for text in trace)
    assert work_item_loop(HORNER, second, _horner_blocks(16), 256) == around  # either copy finds the same loop


def test_a_work_item_s_code_is_not_laid_out_where_it_cannot_be_read_as_one():
    from perfcast.profiles.incore import work_item_loop

    loop = innermost_loops(HORNER)[0]
    # The loop around it runs code more than once a work-item: a source loop, not the work-items'.
    blocks = [*_horner_blocks(16)[:4], Block("horner_fp64", "for.cond.cleanup", 256 * 4, frozenset({179, 180}), 2)]
    assert work_item_loop(HORNER, loop, blocks, 256) is None
    # No loop around it, or a loop of another shape beside its copies.
    alone = [row for row in HORNER if 0x1050 <= row[0] <= 0x1057]
    assert work_item_loop(alone, loop, _horner_blocks(16), 256) is None
    other = [row if row[0] != 0x1085 else (0x1085, "sub    $0x1,%ecx", 177) for row in HORNER]
    assert work_item_loop(other, loop, _horner_blocks(16), 256) is None
    # A loop that runs once a work-item is no inner loop.
    assert work_item_loop(HORNER, loop, _horner_blocks(1), 256) is None


def test_a_long_work_item_is_carried_on_along_the_line_through_two_shorter_layouts():
    from perfcast.profiles.incore import TRACE_LIMIT, laid_out_cycles, work_item_loop

    loop = innermost_loops(HORNER)[0]
    # A made-up core: 30 cycles for the work-item loop's own code, 4 an FMA, and 20 back from the window's overlap.
    def cycles(trace: tuple[str, ...]) -> float:
        return 30.0 + 4.0 * trace.count("vfmadd213sd %xmm1,%xmm2,%xmm3") - 20.0

    short = work_item_loop(HORNER, loop, _horner_blocks(16), 256)
    assert short is not None and laid_out_cycles(HORNER, short, cycles, 4.0) == pytest.approx((10 + 4 * 32) / 2)
    steps = 5000  # 30,022 instructions laid out: over the limit
    long = work_item_loop(HORNER, loop, _horner_blocks(steps), 256)
    assert long is not None and 22 + 6 * steps > TRACE_LIMIT
    calls: list[int] = []
    assert laid_out_cycles(HORNER, long, lambda trace: calls.append(len(trace)) or cycles(trace), 4.0) == (
        pytest.approx((10 + 4 * 2 * steps) / 2))
    assert len(calls) == 2 and max(calls) <= TRACE_LIMIT


def _one_copy(own: int, steps: int, items: int = 64) -> tuple[list[tuple[int, str, int]], list[Block]]:
    """A work-item loop of `own` instructions of its own around one Horner loop of `steps` steps, and its blocks."""
    listing = [(0, "add    $0x1,%rax", 10)] + [(4 * (i + 1), "add    $0x1,%r10", 11) for i in range(own)]
    head = 4 * (own + 1)
    listing += [(head, "vfmadd213sd %xmm1,%xmm2,%xmm3", 20), (head + 4, "dec    %ecx", 21),
                (head + 8, f"jne    {head:x}", 21), (head + 12, "jmp    0", 12)]
    blocks = [Block("k", "entry", items, frozenset({10, 11, 12}), own + 2),
              Block("k", "for.body", items * steps, frozenset({20, 21}), 3)]
    return listing, blocks


def test_a_long_work_item_s_line_rises_at_least_by_its_chain():
    """Long own code hides the chain behind its issue in the shorter layouts; the full one's chain does not hide."""
    from perfcast.profiles.incore import laid_out_cycles, work_item_loop

    def core(trace: tuple[str, ...]) -> float:  # 6 instructions a cycle, or the FMA chain, whichever is longer
        return max(len(trace) / 6, 4.0 * trace.count("vfmadd213sd %xmm1,%xmm2,%xmm3"))

    for own, steps in ((1900, 2000), (100, 2000), (10, 3000)):
        listing, blocks = _one_copy(own, steps)
        loop = innermost_loops(listing)[0]
        around = work_item_loop(listing, loop, blocks, 64)
        assert around is not None and around.iterations == steps and len(around.copies) == 1
        full = core(tuple(text for _, text, _ in listing[:-4]) + (listing[-4][1], listing[-3][1],
                                                                  listing[-2][1]) * steps + (listing[-1][1],))
        assert laid_out_cycles(listing, around, core, 4.0) == pytest.approx(full, rel=0.05)
    # Own code that leaves fewer than two iterations room: not laid out.
    listing, blocks = _one_copy(2044, 2000)  # 2,046 instructions of its own: room for one iteration
    around = work_item_loop(listing, innermost_loops(listing)[0], blocks, 64)
    assert around is not None and laid_out_cycles(listing, around, core, 4.0) is None


def test_a_mean_of_iterations_between_whole_numbers_takes_the_cycles_between_theirs():
    from perfcast.profiles.incore import laid_out_cycles, work_item_loop

    listing, blocks = _one_copy(4, 16)
    uneven = [blocks[0], Block("k", "for.body", 64 * 16 + 16, frozenset({20, 21}), 3)]  # 16.25 a work-item
    around = work_item_loop(listing, innermost_loops(listing)[0], uneven, 64)
    assert around is not None and around.iterations == pytest.approx(16.25)
    seen: list[int] = []

    def core(trace: tuple[str, ...]) -> float:  # 10 cycles of own code, 4 a step
        steps = trace.count("vfmadd213sd %xmm1,%xmm2,%xmm3")
        seen.append(steps)
        return 10.0 + 4.0 * steps

    assert laid_out_cycles(listing, around, core, 4.0) == pytest.approx(10.0 + 4.0 * 16.25)
    assert sorted(seen) == [16, 17]


def test_a_work_item_loop_crossed_by_another_loop_or_matching_no_block_is_not_laid_out():
    from perfcast.profiles.incore import work_item_loop

    listing, blocks = _one_copy(4, 16)
    loop = innermost_loops(listing)[0]
    assert work_item_loop(listing, loop, blocks, 64) is not None
    # A jump back from beyond the work-item loop into its middle: a loop that crosses its bounds.
    crossed = [*listing, (listing[-1][0] + 4, "jne    8", 12)]
    assert work_item_loop(crossed, loop, blocks, 64) is None
    # The work-item loop's own lines match no block of the counts.
    assert work_item_loop(listing, loop, [blocks[1]], 64) is None


def test_the_reading_lays_out_a_work_item_s_code_and_keeps_the_loop_s_cycles_where_llvm_mca_fails(tmp_path,
                                                                                               monkeypatch):
    from perfcast.errors import ToolError
    from perfcast.profiles import incore

    (tmp_path / "AA" / "horner_fp64" / "256-1-1").mkdir(parents=True)
    (tmp_path / "AA" / "horner_fp64" / "256-1-1" / "horner_fp64.so").write_bytes(b"")
    monkeypatch.setattr(incore, "mca_tool", lambda: "llvm-mca")
    monkeypatch.setattr(incore, "objdump_function", lambda path, name: [(a, t) for a, t, _ in HORNER])
    monkeypatch.setattr(incore, "debug_lines", lambda path: [(a, line) for a, _, line in HORNER])
    runs: list[int] = []

    def mca(body, cpu, tool, iterations=500):  # type: ignore[no-untyped-def]
        runs.append(len(body))
        return (4.0, 1.0) if len(body) < 10 else (len(body) / 4, len(body) / 6)

    monkeypatch.setattr(incore, "mca_cycles", mca)
    blocks = {"horner_fp64": _horner_blocks(16)}
    reading = incore.analyse_pocl_kernels(tmp_path, blocks, "znver3")
    estimate = reading.kernels["horner_fp64"]
    # The two loops alone, then the work-item loop laid out once for both copies: 118 instructions / 4 / 2.
    assert runs == [2, 2, 118]
    assert estimate.cycles_per_item == pytest.approx(118 / 4 / 2) and estimate.loops[0].item_cycles is not None

    def failing(body, cpu, tool, iterations=500):  # type: ignore[no-untyped-def]
        if len(body) >= 10:
            raise ToolError("llvm-mca could not read a loop of 118 instructions")
        return (4.0, 1.0)

    monkeypatch.setattr(incore, "mca_cycles", failing)
    estimate = incore.analyse_pocl_kernels(tmp_path, blocks, "znver3").kernels["horner_fp64"]
    assert estimate.cycles_per_item == pytest.approx(16 * 4.0 / 2) and estimate.loops[0].item_cycles is None


def test_a_work_item_s_laid_out_cycles_stand_for_the_loop_s():
    blocks = _horner_blocks(16)
    first, second = innermost_loops(HORNER)
    costs = {(first.start, first.end): (4.0, 1.0), (second.start, second.end): (4.0, 1.0)}
    alone = kernel_incore("znver3", blocks, [first, second], 256, costs)
    assert alone.cycles_per_item == pytest.approx(16 * 4.0 / 2)  # the chain, two copies taken to overlap
    laid = kernel_incore("znver3", blocks, [first, second], 256, costs, {(first.start, first.end): 17.5,
                                                                          (second.start, second.end): 17.5})
    assert laid.cycles_per_item == pytest.approx(17.5) and laid.loops[0].item_cycles == 17.5
    assert laid.as_record()["loops"][0]["item_cycles"] == 17.5 and alone.as_record()["loops"][0]["item_cycles"] is None


def _has_llvm_mca() -> bool:
    """Return whether an llvm-mca perfcast would use is installed."""
    from perfcast.errors import ToolError
    from perfcast.profiles.incore import mca_tool

    try:
        mca_tool()
    except ToolError:
        return False
    return True


@pytest.mark.skipif(not _has_llvm_mca(), reason="llvm-mca is not installed")
def test_llvm_mca_overlaps_the_chains_of_consecutive_work_items_less_the_longer_they_are():
    """A short chain leaves room in the core's window for the next work-items' chains; a long one fills it."""
    from perfcast.profiles.incore import laid_out_cycles, mca_cycles, mca_tool, work_item_loop

    tool = mca_tool()
    loop = innermost_loops(HORNER)[0]
    chain, _ = mca_cycles(loop.body + ("jne    1050",), "znver3", tool)
    assert chain == pytest.approx(4.0, rel=0.05)  # an FMA's latency an iteration

    def share(steps: int) -> float:
        around = work_item_loop(HORNER, loop, _horner_blocks(steps), 256)
        assert around is not None
        cycles = laid_out_cycles(HORNER, around, lambda trace: mca_cycles(trace, "znver3", tool, 40)[0], chain)
        assert cycles is not None
        return cycles / (steps * chain)  # of the chain's own cycles a work-item

    shares = [share(steps) for steps in (16, 100, 300, 3000)]
    assert shares[0] < 0.6  # at least two work-items' chains in flight
    assert shares == sorted(shares) and shares[-1] > 0.95  # the longer the chain, the less the window hides
    assert 0.3 < shares[1] < 0.8 and 0.6 < shares[2] < 0.95  # llvm-mca 15 on znver3: 0.26, 0.53, 0.80, 0.98
