"""Launches campaign kernels once each at a reduced NDRange; run under Oclgrind to count their instructions.

python -m perfcast.campaign.oclgrind_driver GROUPS N_BY_KERNEL   e.g.  2 triad=1048576,nbody=8192
Each kernel is built and launched with `groups` work-groups of its profile launch, on the first OpenCL device
(Oclgrind's simulator when run under `oclgrind`).
"""

from __future__ import annotations

import sys

import numpy as np

from perfcast.kernels.campaign import KERNELS, OPENCL_SOURCE, TILE, kernel_named


def main(argv: list[str]) -> int:
    """Launch the named kernels; return the exit status."""
    import pyopencl as cl

    groups = int(argv[0])
    sizes = {name: int(n) for name, n in (item.split("=") for item in argv[1].split(","))}
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context)
    device = context.devices[0]
    options = [f"-DTILE={TILE}"] + (["-DUSE_FP64"] if device.double_fp_config else [])
    program = cl.Program(context, OPENCL_SOURCE.read_text()).build(options=options)
    flags = cl.mem_flags
    for kernel in KERNELS:
        if kernel.name not in sizes:
            continue
        spec, n = kernel_named(kernel.name), sizes[kernel.name]
        arrays = spec.arrays(n, np.random.default_rng(1))
        buffers = {name: cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=array)
                   for name, array in arrays.items()}
        scalars = spec.scalars(n)
        arguments = [buffers[a] if a in buffers else scalars[a] for a in spec.arguments]
        launch = spec.profile_launch(n, groups)
        handle = cl.Kernel(program, spec.name)
        handle.set_args(*arguments)
        # The offset goes by position: pyopencl's stubs and its runtime spell the keyword differently.
        cl.enqueue_nd_range_kernel(queue, handle, launch.global_size, launch.local_size, launch.offset)
        queue.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
