"""SHOC md's compute_lj_force on PoCL: what its data-dependent branch costs when the cutoff splits the neighbours.

    python scripts/md_branch_probe.py SHOC_MD_CL [--atoms 12288] [--neighbours 128] [--launches 30]

The kernel loops over 128 neighbours of each atom and computes a force only where the neighbour lies within the
cutoff: a branch whose direction the data decide. SHOC's md run takes a median 6.4 ms a launch on the developers'
VM, where perfcast's issue floor (every counted instruction at the measured scalar rate) says 2.43 ms. This runs
SHOC's own kernel (md.cl, single precision) on random positions and random neighbour lists, with the cutoff set so
that a fraction p of the pairs falls inside it: p = 0 and 1 take the branch one way every time, p = 0.5 half the
time, in an order no predictor can learn. md's own data put nearly every pair inside: Oclgrind counts 1,570,334
divisions (the force's) for 1,572,864 compares in one launch, p = 0.998. With no cost for the branch itself, the
time at p would lie on the line between those at 0 and 1 (a fraction p of the pairs does the force's work). It
prints the median time per p, alternating p launch by launch, and the excess over that line per pair.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import numpy as np


def main() -> None:
    """Time compute_lj_force at several fractions of pairs inside the cutoff."""
    import pyopencl as cl

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="SHOC's src/opencl/level1/md/md.cl")
    parser.add_argument("--atoms", type=int, default=12288)
    parser.add_argument("--neighbours", type=int, default=128)
    parser.add_argument("--launches", type=int, default=30)
    args = parser.parse_args()
    if not args.source.is_file():
        parser.error(f"{args.source}: no such file (SHOC's src/opencl/level1/md/md.cl)")
    if args.launches < 2 or args.atoms < 2 or args.neighbours < 1:
        parser.error("--launches and --atoms must be at least 2 and --neighbours at least 1")
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    program = cl.Program(context, args.source.read_text()).build(options=["-DSINGLE_PRECISION"])
    kernel = cl.Kernel(program, "compute_lj_force")
    rng = np.random.default_rng(0)
    n, k = args.atoms, args.neighbours
    position = rng.random((n, 4), dtype=np.float32) * 10.0
    neighbours = rng.integers(0, n, (k, n), dtype=np.int32)  # neighList[j * inum + idx], as SHOC lays it out
    delta = position[neighbours, :3] - position[np.arange(n)][None, :, :3]
    r2 = (delta ** 2).sum(axis=2).ravel()
    fractions = (0.0, 0.15, 0.5, 1.0)
    cuts = {p: np.float32(0.0 if p == 0 else np.inf if p == 1 else np.quantile(r2, p)) for p in fractions}
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    force = cl.Buffer(context, cl.mem_flags.READ_WRITE, position.nbytes)
    pos = cl.Buffer(context, flags, hostbuf=position)
    neigh = cl.Buffer(context, flags, hostbuf=neighbours)
    times: dict[float, list[float]] = {p: [] for p in fractions}
    for launch in range(args.launches + 1):
        for p in fractions:
            kernel.set_args(force, pos, np.int32(k), neigh, cuts[p], np.float32(1.5), np.float32(2.0), np.int32(n))
            event = cl.enqueue_nd_range_kernel(queue, kernel, (n,), None)
            event.wait()
            if launch:
                times[p].append((event.profile.end - event.profile.start) * 1e-6)
    device = context.devices[0]
    print(f"{device.name.strip()}, {device.max_compute_units} compute units; {n} atoms x {k} neighbours, "
          f"{args.launches} launches per p, alternating")
    print("| p inside the cutoff | median | quartiles |")
    print("|---:|---:|---|")
    medians = {}
    for p, found in times.items():
        q1, q2, q3 = statistics.quantiles(found, n=4)
        medians[p] = q2
        print(f"| {p:g} | {q2:.2f} ms | {q1:.2f}–{q3:.2f} ms |")
    for p in fractions[1:-1]:
        line = (1 - p) * medians[0.0] + p * medians[1.0]
        print(f"p = {p:g} against the line from p = 0 to 1: {medians[p]:.2f} ms against {line:.2f} ms, "
              f"{(medians[p] - line) * 1e6 / (n * k):.2f} ns more a pair "
              f"({(medians[p] - line) * 1e6 / (n * k) * device.max_compute_units:.2f} ns a pair on one core)")


if __name__ == "__main__":
    main()
