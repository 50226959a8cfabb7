"""The in-core reading of C kernels gcc compiled (docs/models.md §3.5, C kernels): gcov's counts, vector loops, nests."""

import json

import pytest

from perfcast.profiles.incore import innermost_loops, with_lines
from perfcast.profiles.incore_gcc import (
    FLAT_LIMIT,
    c_kernel_incore,
    read_gcov_lines,
    repeated_copies,
    source_iterations,
    vector_factor,
)
from perfcast.profiles.profile import ProfileError


def _listing(rows):
    """(address, instruction, line) rows from (address, instruction, line) given by hand."""
    return with_lines([(a, t) for a, t, _ in rows], sorted({(a, line) for a, _, line in rows}))


def _price(body):
    """A body costs one cycle an instruction (the ports half that): the tests count instructions."""
    return float(len(body)), len(body) / 2.0


def test_the_vector_factor_is_the_widest_packed_arithmetic_gcc_says_it_vectorised_with():
    assert vector_factor(["vfmadd231ps %zmm3,%zmm3,%zmm4"], 64) == 16
    assert vector_factor(["vaddpd %ymm1,%ymm2,%ymm3"], 64) == 4
    assert vector_factor(["vpaddd %zmm1,%zmm2,%zmm3", "vpmullq %zmm1,%zmm2,%zmm3"], 64) == 16
    assert vector_factor(["vcvtps2pd %ymm1,%zmm2"], 64) == 8  # eight doubles out
    # Moves, broadcasts and shuffles say nothing of the iterations; scalar arithmetic is one element.
    assert vector_factor(["vmovups (%rdx),%zmm1", "vbroadcastss %xmm0,%zmm1", "vaddss %xmm1,%xmm2,%xmm3"], 64) == 1
    # No vectorised loop in gcc's report: a float4's own 128-bit arithmetic is not lanes of iterations.
    assert vector_factor(["vsubps %xmm1,%xmm2,%xmm3"], 0) == 1
    assert vector_factor(["vsubps %xmm1,%xmm2,%xmm3"], 16) == 4
    assert vector_factor(["vsubps %zmm1,%zmm2,%zmm3", "vsubps %xmm1,%xmm2,%xmm3"], 16) == 4  # wider than reported
    # The destination's width in its element type: a conversion narrows, a gather fills a ymm, a compare a mask.
    assert vector_factor(["vcvtpd2ps %zmm1,%ymm2"], 64) == 8
    assert vector_factor(["vgatherqps (%rax,%zmm1,4),%ymm2{%k1}"], 64) == 8
    assert vector_factor(["vpcmpd $1,%zmm1,%zmm2,%k1"], 64) == 16  # dwords, though it ends in "pd"
    assert vector_factor(["vfmadd231ps (%rax){1to16},%zmm2,%zmm3{%k1}{z}"], 64) == 16
    assert vector_factor(["vscatterdps %zmm1,(%rax,%zmm2,4){%k1}"], 64) == 16
    assert vector_factor(["mulps %xmm1,%xmm2"], 16) == 4  # SSE, no AVX
    # Logic ops and packs: gcc's fabs of a scalar float is vandps, a zeroed sum vxorps.
    assert vector_factor(["vandps %xmm1,%xmm2,%xmm3", "vxorps %xmm0,%xmm0,%xmm0", "vpand %zmm1,%zmm2,%zmm3",
                          "vpackusdw %zmm1,%zmm2,%zmm3"], 64) == 1


def test_gcov_s_json_gives_each_line_s_count_of_the_named_source_only():
    text = json.dumps({"files": [
        {"file": "/src/suite.c", "lines": [{"line_number": 3, "count": 7}, {"line_number": 4, "count": 0}]},
        {"file": "/usr/include/other.h", "lines": [{"line_number": 3, "count": 99}]},
    ]})
    assert read_gcov_lines(text, "suite.c") == {3: 7, 4: 0}
    with pytest.raises(ProfileError, match="no lines of missing.c"):
        read_gcov_lines(text, "missing.c")
    with pytest.raises(ProfileError, match="could not be read"):
        read_gcov_lines("{not json", "suite.c")


N = 1024  # bodies: work-items, and the inner loop's trips a work-item

# An n-body kernel as gcc vectorises it: a 16-lane loop over the bodies (0x110..0x129), its scalar remainder
# closing on the same line (0x130..0x143), both in the loop over the work-items (0x100..0x15b).
NBODY = [
    (0x100, "vxorps %xmm4,%xmm4,%xmm4", 157),
    (0x110, "vmovups (%rdx),%zmm1", 159),
    (0x116, "vsubps %zmm1,%zmm2,%zmm3", 160),
    (0x11c, "vfmadd231ps %zmm3,%zmm3,%zmm4", 161),
    (0x122, "add    $0x40,%rdx", 159),
    (0x126, "cmp    %rsi,%rdx", 158),
    (0x129, "jne    110", 158),
    (0x130, "vmovss (%rdx),%xmm1", 159),
    (0x134, "vsubss %xmm1,%xmm2,%xmm3", 160),
    (0x138, "vfmadd231ss %xmm3,%xmm3,%xmm4", 161),
    (0x13c, "add    $0x4,%rdx", 159),
    (0x140, "cmp    %rsi,%rdx", 158),
    (0x143, "jne    130", 158),
    (0x150, "vmovss %xmm4,(%rdi)", 168),
    (0x154, "add    $0x1,%rcx", 155),
    (0x158, "cmp    %rcx,%r8", 155),
    (0x15b, "jne    100", 155),
]


def _nbody_counts(n):
    return {155: n + 1, 157: n, 158: n * n + n, 159: n * n, 160: n * n, 161: n * n, 168: n}


def test_a_vector_loop_runs_its_lanes_an_iteration_and_its_remainder_is_not_priced_again():
    code = _listing(NBODY)
    loops = {(loop.start, loop.end): loop for loop in innermost_loops(code)}
    lines = {a: line for a, _, line in code}
    # The head (line 159) and the closing jump (158): the smaller count; line 159 sits in two runs, 160 and 161
    # in one: unrolled once.
    assert source_iterations(loops[(0x110, 0x129)], lines, _nbody_counts(N)) == (N * N, 1)
    # 64 passes of 5 instructions a work-item: laid 64 times into the loop around (within FLAT_LIMIT), that
    # loop's own 10 instructions (the remainder's among them) once.
    found = c_kernel_incore("cpu", [code], _nbody_counts(N), N, _price, 64)
    priced = [loop for loop in found.loops if loop.inner]
    assert len(priced) == 1 and priced[0].flattened == N // 16 and priced[0].lanes == 1
    assert found.cycles_per_item == pytest.approx(10 + 64 * 5)
    # Too many trips to lay out: the loop's own steady state, N/16 passes a work-item.
    big = 1 << 16
    assert 4096 * 5 > FLAT_LIMIT
    found = c_kernel_incore("cpu", [code], _nbody_counts(big), big, _price, 64)
    priced = [loop for loop in found.loops if loop.inner]
    assert len(priced) == 1 and priced[0].flattened == 0 and priced[0].lanes == 16
    assert priced[0].executions_per_item == big and found.cycles_per_item == pytest.approx(big / 16 * 5)
    # gcc's report says nothing was vectorised: one element an iteration, so 16 times the cycles.
    scalar = c_kernel_incore("cpu", [code], _nbody_counts(big), big, _price, 0)
    assert scalar.cycles_per_item == pytest.approx(big * 5)


# A hash: 16 dependent rounds (0x210..0x220) in the loop over the work-items (0x200..0x230).
HASH = [
    (0x200, "mov    (%r10,%rdi,4),%esi", 191),
    (0x204, "xor    %ecx,%ecx", 191),
    (0x210, "shr    $0x10,%edx", 193),
    (0x213, "imul   $0x7feb352d,%edx,%edx", 194),
    (0x219, "add    $0x1,%ecx", 192),
    (0x21c, "cmp    %ecx,%r8d", 192),
    (0x220, "jne    210", 192),
    (0x222, "mov    %esi,(%r11,%rdi,4)", 198),
    (0x226, "add    $0x1,%rdi", 190),
    (0x22a, "cmp    %rdi,%r9", 190),
    (0x230, "jne    200", 190),
]


def test_a_short_inner_loop_is_laid_into_the_work_item_loop_and_a_loop_without_counts_is_left_out():
    items = 4096
    counts = {190: items + 1, 191: items, 192: 17 * items, 193: 16 * items, 194: 16 * items, 198: items}
    found = c_kernel_incore("cpu", [_listing(HASH)], counts, items, _price, 0)
    (rounds,) = [loop for loop in found.loops if loop.inner]
    # 16 copies of the 4-instruction body, and the work-item loop's own 5 (its closing jump left out).
    assert rounds.flattened == 16 and rounds.executions_per_item == 1.0
    assert found.cycles_per_item == pytest.approx(16 * 4 + 5)
    assert rounds.cycles >= rounds.ports > 0
    # gcov counted nothing on the closing jump's line (code OpenMP added, say): no such loop of the source.
    uncounted = {line: count for line, count in counts.items() if line != 192}
    assert c_kernel_incore("cpu", [_listing(HASH)], uncounted, items, _price, 0).cycles_per_item == 0.0
    with pytest.raises(ProfileError, match="0 work-items"):
        c_kernel_incore("cpu", [_listing(HASH)], counts, 0, _price, 0)


def test_a_loop_over_the_work_items_has_no_inner_cycles_and_is_the_whole_code():
    items = 4096
    code = _listing([(0x300, "vmovupd (%r10,%r8,1),%zmm1", 208), (0x306, "vfmadd132pd %zmm1,%zmm2,%zmm0", 209),
                     (0x30c, "add    $0x40,%r8", 210), (0x310, "jne    300", 210)])
    # Horner's 16 steps unrolled into the vectorised loop over the work-items: the head runs once a work-item.
    found = c_kernel_incore("cpu", [code], {208: items, 209: 17 * items, 210: items}, items, _price, 64)
    assert found.cycles_per_item == 0.0 and not any(loop.inner for loop in found.loops)
    # That loop is the kernel's whole code: its 3 cycles a pass over the 8 work-items a pass runs (zmm of doubles).
    assert found.item_cycles == pytest.approx(3 / 8)


# reduce_sum as gcc 12 compiles `s += x[i]` on Zen 3: eight copies of one line's add, the pointer moved once.
REDUCTION = [(0x1bf0, "vaddss (%rax),%xmm0,%xmm0", 134), (0x1bf4, "add    $0x20,%rax", 134)] + [
    (0x1bf8 + 5 * i, f"vaddss -{hex(0x1c - 4 * i)}(%rax),%xmm0,%xmm0", 134) for i in range(7)] + [
    (0x1c1b, "cmp    %rdx,%rax", 134), (0x1c1e, "jne    1bf0", 134)]


def test_copies_of_a_one_line_statement_are_read_from_the_body():
    body = [text for _, text, _ in REDUCTION[:-1]]
    assert repeated_copies(body) == 8
    # Different statements, or one statement into different registers, are one copy each.
    assert repeated_copies(["vmovss (%rax),%xmm0", "vmulss (%rdx),%xmm0,%xmm0", "vmovss %xmm0,(%rcx)",
                            "add    $0x4,%rax"]) == 1
    assert repeated_copies(["vfmadd231ps (%rax),%ymm1,%ymm0", "vfmadd231ps 0x20(%rax),%ymm1,%ymm2"]) == 1
    assert repeated_copies(["add    $0x4,%rax", "cmp    %rdx,%rax"]) == 1  # control alone
    # Three neighbours added into one register, a step of one element: one statement, not three copies.
    assert repeated_copies(["vaddss -0x4(%rax),%xmm0,%xmm0", "vaddss (%rax),%xmm0,%xmm0",
                            "vaddss 0x4(%rax),%xmm0,%xmm0", "add    $0x4,%rax", "cmp    %rdx,%rax"]) == 1
    # Through an index register moved by a constant: no step on the base to check, two copies.
    assert repeated_copies(["vaddsd (%rcx,%rax,8),%xmm0,%xmm0", "vaddsd 0x8(%rcx,%rax,8),%xmm0,%xmm0",
                            "add    $0x2,%rax"]) == 2
    items = 1 << 20  # elements, each a work-item of the loop
    found = c_kernel_incore("cpu", [_listing(REDUCTION)], {134: items}, items, _price, 0)
    (loop,) = found.loops
    assert loop.unroll == 8 and found.item_cycles == pytest.approx(10 / 8)


# The same reduction over groups of 256 elements, one partial sum a group: the loop over the groups around it.
GROUPED = ([(0x400, "vxorps %xmm0,%xmm0,%xmm0", 133), (0x404, "mov    %rcx,%rax", 134)]
           + [(a + 0x410 - 0x1bf0, text, line) for a, text, line in REDUCTION[:-1]]
           + [(0x43e, "jne    410", 134), (0x440, "vmovss %xmm0,(%r11)", 135), (0x445, "add    $0x400,%rcx", 135),
              (0x44c, "add    $0x4,%r11", 135), (0x450, "cmp    %ebx,%edi", 131), (0x452, "jne    400", 131)])


def test_a_block_of_work_items_in_a_loop_over_the_blocks_is_laid_into_it():
    groups = 1024
    items = 256 * groups
    # gcov: the group loop's lines once a group (its own line once more, to leave), the element line once an element
    # and once more a group (its entries).
    counts = {131: groups + 1, 133: groups, 134: items + groups, 135: groups}
    found = c_kernel_incore("cpu", [_listing(GROUPED)], counts, items, _price, 0)
    # 257 source iterations an entry, 8 a pass: 32 passes laid into the group loop's other 6 instructions, a group
    # of 256 work-items a pass (the core's window overlaps one group's chain with the next one's).
    assert found.item_cycles == pytest.approx((6 + 32 * 10) / 256)


def test_the_whole_code_is_read_only_where_one_loop_runs_every_work_item_and_calls_nothing():
    items = 4096
    # An inner loop runs (the hash's rounds): its cycles are the in-core floor's, and no whole reading.
    counts = {190: items + 1, 191: items, 192: 17 * items, 193: 16 * items, 194: 16 * items, 198: items}
    assert c_kernel_incore("cpu", [_listing(HASH)], counts, items, _price, 0).item_cycles is None
    loop = [(0x300, "vmovss (%r10,%r8,4),%xmm1", 208), (0x306, "vaddss %xmm1,%xmm2,%xmm0", 209),
            (0x30c, "add    $0x4,%r8", 210), (0x310, "jne    300", 210)]
    whole = c_kernel_incore("cpu", [_listing(loop)], {208: items, 209: items, 210: items}, items, _price, 0)
    assert whole.item_cycles == pytest.approx(3.0)
    # The loop runs a few of the work-items (a row loop under a nest the reading did not count): not the whole.
    few = {208: items // 50, 209: items // 50, 210: items // 50}
    assert c_kernel_incore("cpu", [_listing(loop)], few, items, _price, 0).item_cycles is None
    # A call in it: llvm-mca prices the call, not the routine.
    called = loop[:1] + [(0x306, "call   1030", 209)] + loop[2:]  # objdump's text, its <name> cut
    assert c_kernel_incore("cpu", [_listing(called)], {208: items, 209: items, 210: items}, items, _price,
                           0).item_cycles is None


def test_a_vector_loop_that_a_pass_is_too_short_for_leaves_its_iterations_to_its_remainder():
    n = 8  # bodies: fewer than the 16 lanes, so gcc's vector loop never runs and the scalar remainder runs all
    found = c_kernel_incore("cpu", [_listing(NBODY)], _nbody_counts(n), n, _price, 64)
    (priced,) = [loop for loop in found.loops if loop.inner]
    assert priced.lanes == 1
    # Laid 8 times (one body a trip) into the loop around, whose own code, the vector loop's 6 instructions
    # among it, is laid once a pass.
    assert priced.flattened == n
    vector_loop, remainder_body, own = 6, 5, 4  # own: 0x100, 0x150, 0x154, 0x158
    assert found.cycles_per_item == pytest.approx(own + vector_loop + n * remainder_body)


def test_copies_of_the_body_runs_of_the_closing_line_and_rounding_of_trips():
    items = 1000
    # The rounds unrolled twice: lines 193 and 194 in two runs each, so a pass runs 2 source iterations.
    unrolled = [
        (0x200, "mov    (%r10,%rdi,4),%esi", 191),
        (0x210, "shr    $0x10,%edx", 193),
        (0x213, "imul   $0x7feb352d,%edx,%edx", 194),
        (0x219, "shr    $0x10,%edx", 193),
        (0x21c, "imul   $0x7feb352d,%edx,%edx", 194),
        (0x222, "add    $0x2,%ecx", 192),
        (0x225, "jne    210", 192),
        (0x230, "add    $0x1,%rdi", 190),
        (0x234, "jne    200", 190),
    ]
    counts = {190: items + 1, 191: items, 192: 21 * items, 193: 20 * items, 194: 20 * items}
    found = c_kernel_incore("cpu", [_listing(unrolled)], counts, items, _price, 0)
    (rounds,) = [loop for loop in found.loops if loop.inner]
    # 20 rounds a work-item, 2 a pass: 10 trips of the 5-instruction body, and the 2 of the loop around it.
    assert rounds.flattened == 10 and found.cycles_per_item == pytest.approx(10 * 5 + 2)
    # 21 rounds: 10.5 passes a work-item, rounded half up to 11 (not to the even 10).
    odd = {**counts, 192: 22 * items, 193: 21 * items, 194: 21 * items}
    (rounds,) = [loop for loop in c_kernel_incore("cpu", [_listing(unrolled)], odd, items, _price, 0).loops
                 if loop.inner]
    assert rounds.flattened == 11
    # The closing jump's line counted fewer times than the head's (the head's line also runs outside the loop):
    # the smaller count is the loop's.
    loops = innermost_loops(_listing(unrolled))
    lines = {a: line for a, _, line in _listing(unrolled)}
    head_more = {**counts, 193: 50 * items, 192: 20 * items}
    assert source_iterations(loops[0], lines, head_more)[0] == 20 * items


def test_two_inner_loops_in_one_loop_are_each_priced_at_their_own_steady_state():
    items = 100
    code = _listing([
        (0x400, "mov    (%r10,%rdi,4),%esi", 10),
        (0x404, "add    $0x1,%ecx", 12),          # first inner loop: 0x404..0x40a
        (0x40a, "jne    404", 11),
        (0x410, "imul   %esi,%esi", 14),          # second inner loop: 0x410..0x416
        (0x416, "jne    410", 13),
        (0x420, "add    $0x1,%rdi", 9),
        (0x424, "jne    400", 9),
    ])
    counts = {9: items + 1, 10: items, 11: 5 * items, 12: 4 * items, 13: 7 * items, 14: 6 * items}
    found = c_kernel_incore("cpu", [code], counts, items, _price, 0)
    priced = sorted((loop for loop in found.loops if loop.inner), key=lambda loop: loop.lines)
    assert [loop.flattened for loop in priced] == [0, 0]
    assert found.cycles_per_item == pytest.approx(4 * 1 + 6 * 1)  # one-instruction bodies, 4 and 6 a work-item


# A tiled SGEMM as gcc 12 compiles it on AVX2: the column loop (16 iterations, line 94) unrolled away and its
# sixteen products packed into two 8-float FMAs by the SLP vectoriser; the k loop (lines 92-93) is the inner loop
# left, run once an iteration. gcc reports only "basic block part vectorized": no vectorised loop (widest 0).
TILED = [
    (0x400, "vmovaps (%r14),%ymm2", 94),
    (0x404, "lea    -0x40(%r13),%r12", 93),
    (0x410, "vbroadcastss (%r12),%ymm0", 93),
    (0x416, "add    $0x4,%r12", 92),
    (0x41a, "vfmadd231ps (%rsi),%ymm0,%ymm2", 94),
    (0x41f, "vfmadd231ps 0x20(%rsi),%ymm0,%ymm1", 94),
    (0x425, "add    %rbx,%rsi", 92),
    (0x428, "cmp    %r12,%r13", 92),
    (0x42b, "jne    410", 92),
    (0x430, "vmovaps %ymm2,(%r14)", 94),
    (0x434, "add    $0x40,%r14", 91),
    (0x438, "cmp    %r14,%r8", 91),
    (0x43b, "jne    400", 91),
]


def test_packed_statements_give_the_arithmetic_s_lanes_but_not_the_loop_s():
    items, k = 256, 64  # work-items (outputs) the nest covers, k trips an entry of the inner loop
    rows = items // 16  # the loop around runs once per row of 16 outputs
    counts = {91: rows, 92: rows * (k + 1), 93: rows * k, 94: rows * k * 16}  # a loop's test runs once more
    found = c_kernel_incore("cpu", [_listing(TILED)], counts, items, _price, 0)
    (priced,) = [loop for loop in found.loops if loop.inner]
    # The k loop runs one of its own iterations a pass, whatever its arithmetic packs: no lanes, so its cycles
    # stand: 64 passes of its 6 instructions laid into each row's 5 of its own (closing jumps left out), over the
    # row's 16 work-items. Lanes of 8 would have cut them 8 times.
    assert priced.lanes == 1 and priced.flattened == k
    assert found.cycles_per_item == pytest.approx((k * 6 + 5) / 16)
    # Its floating-point instructions each work on 8 floats: the elements a profiler counts one instruction of.
    assert found.fp_lanes == pytest.approx(8.0)
    assert found.divides == 0  # and no integer divide in its code
    divided = [(a, "idivl  %ecx" if t.startswith("vfmadd") else t, line) for a, t, line in TILED]
    assert c_kernel_incore("cpu", [_listing(divided)], counts, items, _price, 0).divides == sum(
        t.startswith("vfmadd") for _, t, _ in TILED) > 0
    # The same loop with scalar FMAs: one element an instruction.
    scalar = [(a, t.replace("ps (", "ss (").replace("ps 0x20", "ss 0x20").replace("ymm", "xmm"), line)
              for a, t, line in TILED]
    assert c_kernel_incore("cpu", [_listing(scalar)], counts, items, _price, 0).fp_lanes == pytest.approx(1.0)
    # Integer work alone: no floating-point lanes to give.
    assert c_kernel_incore("cpu", [_listing(HASH)], {190: 5, 191: 4, 192: 68, 193: 64, 194: 64, 198: 4}, 4,
                           _price, 0).fp_lanes is None
