"""Launches campaign kernels once each at a reduced NDRange; run under Oclgrind to count their instructions.

python -m perfcast.campaign.oclgrind_driver GROUPS N_BY_KERNEL [REPEATS]   e.g.  2 triad=1048576,nbody=8192@16
Each kernel is built and launched with GROUPS work-groups of its profile launch (or the number after its @;
@full: its whole launch), REPEATS times (1), on the first OpenCL device (Oclgrind's simulator when run under
`oclgrind`). With @full and REPEATS it is also the suite as an ordinary OpenCL program, for
`perfcast campaign run -- python -m perfcast.campaign.oclgrind_driver 0 triad=1048576@full 10`.
"""

from __future__ import annotations

import sys

import numpy as np

from perfcast.kernels.campaign import KERNELS, OPENCL_SOURCE, opencl_options


def main(argv: list[str]) -> int:
    """Launch the named kernels; return the exit status."""
    import pyopencl as cl

    default = int(argv[0])
    repeats = int(argv[2]) if len(argv) > 2 else 1
    sizes: dict[str, int] = {}
    groups_of: dict[str, int] = {}
    for item in argv[1].split(","):
        name, spec = item.split("=")
        size, _, groups = spec.partition("@")
        sizes[name], groups_of[name] = int(size), 0 if groups == "full" else int(groups or default)
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context)
    device = context.devices[0]
    program = cl.Program(context, OPENCL_SOURCE.read_text()).build(options=opencl_options(bool(device.double_fp_config)))
    flags = cl.mem_flags
    for kernel in KERNELS:
        if kernel.name not in sizes:
            continue
        n = sizes[kernel.name]
        buffers = {name: cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=array)
                   for name, array in kernel.arrays(n, np.random.default_rng(1)).items()}
        launch = kernel.profile_launch(n, groups_of[kernel.name]) if groups_of[kernel.name] else kernel.launch(n)
        handle = cl.Kernel(program, kernel.name)
        handle.set_args(*kernel.ordered_arguments(n, buffers))
        for _ in range(repeats):
            # The offset goes by position: pyopencl's stubs and its runtime spell the keyword differently.
            cl.enqueue_nd_range_kernel(queue, handle, launch.global_size, launch.local_size, launch.offset)
            queue.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
