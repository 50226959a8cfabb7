"""Calls the suite's C kernels once each from a library built from suite.c: run so that gcov counts their lines.

python -m perfcast.campaign.native_driver LIBRARY N_BY_KERNEL      e.g.  /tmp/x/suite.so triad=1048576,nbody=32768
The library is a `--coverage` build (`perfcast.campaign.incore_evidence.run_gcc_incore`); its counts are written
when this process exits. Each kernel gets the campaign's arrays at its size, as a timed call does.
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np

from perfcast.campaign.native import c_arguments
from perfcast.errors import PerfcastError
from perfcast.kernels.campaign import kernel_named


def main(argv: list[str]) -> int:
    """Call each named kernel once at its size; return the exit status (2, with the usage, for bad arguments)."""
    try:
        wanted = [(kernel_named(name), int(size)) for name, size in (item.split("=") for item in argv[1].split(","))]
        library = ctypes.CDLL(argv[0])
    except (IndexError, ValueError, OSError, PerfcastError) as error:
        print(f"usage: python -m perfcast.campaign.native_driver LIBRARY KERNEL=N[,KERNEL=N...] ({error})",
              file=sys.stderr)
        return 2
    for kernel, n in wanted:
        arrays = kernel.arrays(n, np.random.default_rng(0))
        function = getattr(library, kernel.name)
        function.restype = ctypes.c_double
        function(*c_arguments(kernel.ordered_arguments(n, arrays)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
