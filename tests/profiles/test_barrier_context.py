"""The values a kernel keeps live across its barriers, read from its LLVM IR (docs/models.md §3.9)."""

import zipfile
from pathlib import Path

import pytest

from perfcast.profiles.barrier_context import barrier_context_values
from perfcast.profiles.oclgrind import _functions, read_oclgrind

ROOT = Path(__file__).parents[2]

# A kernel as clang -O2 writes it: before the barrier it computes `idx` from the local id (variant), `base` from
# the group id and an argument (uniform) and `scaled` from both (variant); after it, it uses all three and the id.
STRAIGHT = """define spir_kernel void @k(float addrspace(1)* %out, i32 %n, float addrspace(3)* %lm) {
entry:
  %lid = tail call i64 @_Z12get_local_idj(i32 0) #2, !dbg !10
  %grp = tail call i64 @_Z12get_group_idj(i32 0)
  %idx = trunc i64 %lid to i32
  %base = mul i32 %n, 4
  %gi = trunc i64 %grp to i32
  %off = add i32 %base, %gi
  %scaled = shl i32 %idx, 2
  tail call void @_Z7barrierj(i32 1) #3, !dbg !11
  %sum = add i32 %off, %scaled
  %p = getelementptr inbounds float, float addrspace(3)* %lm, i64 %lid
  %v = load float, float addrspace(3)* %p, align 4
  %q = getelementptr inbounds float, float addrspace(1)* %out, i32 %sum
  %w = sitofp i32 %idx to float
  %r = fadd float %v, %w
  store float %r, float addrspace(1)* %q, align 4
  ret void
}
"""

# A loop with a barrier in it: `acc` is carried by a phi from the latch, `lid`-derived `i` is live throughout,
# the loop counter `t` is uniform.
LOOP = """define spir_kernel void @loop(float addrspace(3)* %lm, i32 %steps) {
entry:
  %lid = tail call i64 @_Z12get_local_idj(i32 0)
  %i = trunc i64 %lid to i32
  %init = sitofp i32 %i to float
  br label %body

body:                                             ; preds = %body, %entry
  %t = phi i32 [ 0, %entry ], [ %t.next, %body ]
  %acc = phi float [ %init, %entry ], [ %acc.next, %body ]
  tail call void @_Z18work_group_barrierj(i32 1)
  %p = getelementptr inbounds float, float addrspace(3)* %lm, i32 %i
  %x = load float, float addrspace(3)* %p, align 4
  %acc.next = fadd float %acc, %x
  %t.next = add nuw nsw i32 %t, 1
  %done = icmp eq i32 %t.next, %steps
  br i1 %done, label %exit, label %body, !llvm.loop !5

exit:                                             ; preds = %body
  store float %acc.next, float addrspace(3)* %p, align 4
  ret void
}
"""


def test_a_barrier_keeps_the_variant_values_used_after_it_and_not_the_ids_or_the_uniform_ones():
    # idx and scaled (variant) are live across; off is uniform, lid is an id: recomputed.
    assert barrier_context_values(_functions([STRAIGHT]), ["k"]) == {"k": 2.0}


def test_a_loop_carries_its_variant_phi_and_its_index_across_the_barrier():
    # acc (a phi of variant values) and i are live across the barrier in the loop; t is uniform; p, x are after it.
    assert barrier_context_values(_functions([LOOP]), ["loop"]) == {"loop": 2.0}


def test_a_kernel_without_a_barrier_or_without_ir_has_no_figure():
    functions = _functions([STRAIGHT.replace("  tail call void @_Z7barrierj(i32 1) #3, !dbg !11\n", "")])
    assert barrier_context_values(functions, ["k", "absent"]) == {}


def test_the_reader_gives_each_launch_its_crossings_times_the_values():
    histogram = ("Instructions executed for kernel 'k':\n             64 - call _Z7barrierj()\n"
                 "             64 - ret\n")
    kernel = read_oclgrind(histogram, ir=[STRAIGHT]).kernel("k")
    assert kernel.metrics["barriers"] == 64 and kernel.metrics["barrier_values"] == pytest.approx(128)
    assert "barrier_values" not in read_oclgrind(histogram).kernel("k").metrics  # no IR: not counted


def test_real_kernels_of_rodinia_keep_what_their_sources_show():
    # pathfinder's dynproc_kernel: a barrier before its loop (7 values live) and two in it (11: the work-item's
    # column, its neighbours' flags, the addresses of its local rows); backprop's bpnn_adjust_weights_ocl: one
    # at the end, across which its ty, its index into delta (tx + 1, widened) and that element's address stay live.
    # (Data dependence only: pathfinder's `computed` flag, a phi of constants chosen by a branch on the id, is
    # counted as shared; docs/models.md §3.9 says so.)
    found = {}
    for program in ("pathfinder", "backprop"):
        archive = ROOT / "docs" / "validation" / "programs" / "zen3-avx2-launches" / program / f"{program}.zip"
        with zipfile.ZipFile(archive) as read:
            functions = _functions([read.read(n).decode() for n in read.namelist() if n.endswith(".ll")])
        found.update(barrier_context_values(functions, functions.keys()))
    assert found["dynproc_kernel"] == pytest.approx((7 + 11 + 11) / 3)
    assert found["bpnn_adjust_weights_ocl"] == 3.0 and found["bpnn_layerforward_ocl"] == pytest.approx(5.2)


def test_a_switch_over_several_lines_and_a_linear_id_are_read():
    # A value live into a switch's case block (the cases one a line, as LLVM prints them), from the linear id.
    switch = """define spir_kernel void @s(i32 addrspace(1)* %out, i32 %mode) {
entry:
  %lid = tail call i64 @_Z20get_global_linear_idv()
  %v = trunc i64 %lid to i32
  tail call void @_Z7barrierj(i32 1)
  switch i32 %mode, label %done [
    i32 0, label %zero
    i32 1, label %done
  ]

zero:
  store i32 %v, i32 addrspace(1)* %out, align 4
  br label %done

done:
  ret void
}
"""
    assert barrier_context_values(_functions([switch]), ["s"]) == {"s": 1.0}


def test_two_builds_of_one_kernel_are_read_apart_and_pooled():
    # SHOC builds each kernel twice (single and double precision): the reader joins both definitions under one name.
    double = LOOP.replace("float", "double")
    functions = _functions([LOOP, double])
    assert sum(line.startswith("entry:") for line in functions["loop"]) == 2  # both bodies, one after the other
    assert barrier_context_values(functions, ["loop"]) == {"loop": 2.0}
    # One build with a third value live across its barrier: the two builds' barrier calls pooled, 2 and 3.
    three = double.replace("%acc.next = fadd double %acc, %x", "%acc.next = fadd double %acc, %x\n  %y = fadd double %x, %init")
    three = three.replace("store double %acc.next,", "%z = fadd double %acc.next, %y\n  store double %z,")
    assert barrier_context_values(_functions([LOOP, three]), ["loop"]) == {"loop": 2.5}
