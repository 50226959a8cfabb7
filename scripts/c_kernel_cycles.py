"""Time C suite kernels beside the core clock, alternating, and give each one's cycles a work-item at that clock.

    python scripts/c_kernel_cycles.py KERNEL [KERNEL ...] [--rounds 3] [--n N]

Each round measures the clock on every OpenMP thread (perfcast's probe: a chain of dependent one-cycle adds, the
one `perfcast bench` reads under load), then times each kernel (10 calls after a warm-up, the campaign's timer,
arrays on pages) at its campaign size or N. A kernel's cycles a work-item are its median time x threads x that
round's clock / its work-items: set beside llvm-mca's cycles of its compiled code (docs/models.md §3.5, "The
whole work-item"), they say whether a miss is the code's pricing or the clock. Run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from perfcast.bench.clock_probe import measure_clock
from perfcast.campaign.native import NativeTimer, openmp_threads
from perfcast.errors import PerfcastError
from perfcast.kernels.campaign import kernel_named


def main() -> None:
    """Alternate the clock probe and the named kernels' timings; print each round's cycles a work-item."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernels", nargs="+", help="suite kernels (perfcast campaign's names)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of clock probe and timings")
    parser.add_argument("--n", type=int, default=None, help="problem size (default: the kernel's campaign size)")
    args = parser.parse_args()
    try:
        kernels = [kernel_named(name) for name in args.kernels]
        timer = NativeTimer.open(None)
    except PerfcastError as error:  # an unknown kernel, or a suite that does not compile here: said, no traceback
        sys.exit(f"c_kernel_cycles: {error}")
    threads = openmp_threads()
    for round_ in range(args.rounds):
        clock = measure_clock(threads)
        print(f"round {round_}: clock {clock.median / 1e9:.3f} GHz on {threads} threads (spread {clock.spread:.2f})")
        for kernel in kernels:
            n = args.n or kernel.sizes[0]
            timed = timer.time(kernel, n, 10)
            seconds = statistics.median(timed["times_s"])
            cycles = seconds * threads * clock.median / timed["work_items"]
            print(f"  {kernel.name:16s} n = {n}: {seconds * 1e3:.2f} ms (median of 10), "
                  f"{cycles:.3g} cycles a work-item at that clock", flush=True)


if __name__ == "__main__":
    main()
