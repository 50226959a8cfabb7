"""Build the OpenCL programs of PolyBench/GPU (PolyBench-ACC) as campaign programs perfcast was not tuned on.

    python scripts/polybench_gpu_programs.py GITDIR --out /tmp/polybench [--only NAME ...] [--check]

GITDIR is a bare checkout of cavazos-lab/PolyBench-ACC (BSD 3-clause, University of Delaware; `fetch
github:cavazos-lab/PolyBench-ACC` brings one). The script extracts `OpenCL/` at HEAD with `git cat-file`, compiles
each program with gcc once per problem size (PolyBench sets its sizes at compile time: `-DN=...`), and writes
`programs.json` in the form `scripts/program_campaigns.py` reads (scripts/third_party_programs.py writes the same
for Rodinia and SHOC).

Why these programs. The 17 Rodinia and SHOC programs of docs/validation/programs/ are the ones perfcast's
quantitative model was improved on (§3.8, §3.9 were found on them). PolyBench/GPU's kernels are a held-out set of
another shape: no local memory and no barriers, one work-item per output row or element looping over a whole
row or column of a matrix, so their time is set by how the CPU runtime walks memory (a row per work-item strides
across work-items; a column per work-item is contiguous across them). Nothing in perfcast was changed for them.

Each program is built with `-DOPENCL_DEVICE_SELECTION=CL_DEVICE_TYPE_ALL` (the suite's default asks for a GPU)
and `-DRUN_ON_CPU=0` (the suite's own sequential reference is not timed). The timed size runs its kernels for
about 0.1-3 s on PoCL on 2 cores; the two profiled sizes run under Oclgrind in seconds to about a minute and
differ by 1.5-2x in each dimension, so perfcast checks each kernel's declared scaling (`scaling`: counts grow as
work-items^p; p = 2 for a work-item looping over a row of an n x n matrix, 1.5 for a 2D NDRange looping over n,
3 for covariance's triangle) and carries the reuse distances to the timed size. The exponents are read from the
kernels' loops, as a user would declare them; a wrong one is refused by the campaign with the exponent that fits.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from third_party_programs import CL_DEFINES, check, compile_cmd, extract  # noqa: E402

OPT = "-O2"


@dataclass
class Program:
    """One PolyBench/GPU program: its folder, source stem, the size macros per run, and its kernels' scaling."""

    name: str
    folder: str  # under OpenCL/
    stem: str  # STEM.c and STEM.cl
    timed: dict[str, int]
    profiled: tuple[dict[str, int], dict[str, int]]
    scaling: dict[str, float] = field(default_factory=dict)
    notes: str = ""


def _square(n: int, *names: str) -> dict[str, int]:
    return {name: n for name in names}


def programs() -> list[Program]:
    """Return the programs, with sizes for PoCL on a small CPU and Oclgrind in seconds."""
    rows = ("NX", "NY")
    return [
        Program("atax", "linear-algebra/kernels/atax", "atax", _square(8192, *rows),
                (_square(512, *rows), _square(1024, *rows)), {"atax_kernel1": 2, "atax_kernel2": 2},
                "y = A^T (A x): kernel 1 walks a row of A per work-item, kernel 2 a column."),
        Program("bicg", "linear-algebra/kernels/bicg", "bicg", _square(8192, *rows),
                (_square(512, *rows), _square(1024, *rows)), {"bicgKernel1": 2, "bicgKernel2": 2},
                "BiCG's two products, q = A p (a row per work-item) and s = A^T r (a column per work-item)."),
        Program("mvt", "linear-algebra/kernels/mvt", "mvt", {"N": 8192}, ({"N": 512}, {"N": 1024}),
                {"mvt_kernel1": 2, "mvt_kernel2": 2}, "x1 += A y1 (rows), x2 += A^T y2 (columns)."),
        Program("gesummv", "linear-algebra/kernels/gesummv", "gesummv", {"N": 8192}, ({"N": 512}, {"N": 1024}),
                {"gesummv_kernel": 2}, "y = alpha A x + beta B x, a row of both matrices per work-item."),
        Program("gemver", "linear-algebra/kernels/gemver", "gemver", {"N": 8192}, ({"N": 512}, {"N": 1024}),
                {"gemver_kernel1": 1, "gemver_kernel2": 2, "gemver_kernel3": 2},
                "A rank-2 update (2D, one element per work-item), then two matrix-vector products."),
        Program("gemm", "linear-algebra/kernels/gemm", "gemm", _square(1024, "NI", "NJ", "NK"),
                (_square(64, "NI", "NJ", "NK"), _square(128, "NI", "NJ", "NK")), {"gemm": 1.5},
                "C = alpha A B + beta C, one element of C per work-item, accumulated in global memory."),
        Program("2mm", "linear-algebra/kernels/2mm", "2mm", _square(1024, "NI", "NJ", "NK", "NL"),
                (_square(64, "NI", "NJ", "NK", "NL"), _square(128, "NI", "NJ", "NK", "NL")),
                {"mm2_kernel1": 1.5, "mm2_kernel2": 1.5}, "D = alpha A B C + beta D as two products."),
        Program("syrk", "linear-algebra/kernels/syrk", "syrk", _square(1024, "NI", "NJ"),
                (_square(64, "NI", "NJ"), _square(128, "NI", "NJ")), {"syrk_kernel": 1.5},
                "C = alpha A A^T + beta C: each work-item reads two rows of A, so neighbouring work-items read "
                "rows apart (a gather across work-items)."),
        Program("covariance", "datamining/covariance", "covariance", _square(1024, "M", "N"),
                (_square(256, "M", "N"), _square(512, "M", "N")),
                {"mean_kernel": 2, "reduce_kernel": 1, "covar_kernel": 3},
                "Column means (a column per work-item), centring (2D), then the upper triangle of the "
                "covariance matrix, one row of it per work-item: work-items m, work m^2 n / 2. Its 1D NDRanges "
                "round m up to the work-group's 256, so its sizes are multiples of 256 (at 64 and 128 both "
                "profiles ran 256 work-items and the campaign refused the scaling); 512 takes over 2 min under "
                "Oclgrind and the traffic simulation of 256 alone 9.5 min."),
        Program("convolution-2d", "stencils/convolution-2d", "2DConvolution", _square(8192, "NI", "NJ"),
                (_square(256, "NI", "NJ"), _square(512, "NI", "NJ")), {},
                "A 3x3 stencil, one output per work-item."),
        Program("convolution-3d", "stencils/convolution-3d", "3DConvolution", _square(384, "NI", "NJ", "NK"),
                (_square(64, "NI", "NJ", "NK"), _square(128, "NI", "NJ", "NK")), {},
                "A 3D stencil launched once per plane i (NI launches of a 2D NDRange)."),
        Program("fdtd-2d", "stencils/fdtd-2d", "fdtd2d", {"TMAX": 100, "NX": 2048, "NY": 2048},
                ({"TMAX": 2, "NX": 256, "NY": 256}, {"TMAX": 2, "NX": 512, "NY": 512}), {},
                "2D finite-difference time domain: three kernels a time step, TMAX steps."),
        Program("jacobi-2d", "stencils/jacobi-2d-imper", "jacobi2D", {"TSTEPS": 100, "N": 2048},
                ({"TSTEPS": 2, "N": 256}, {"TSTEPS": 2, "N": 512}), {},
                "5-point Jacobi sweep and copy-back, two kernels a step."),
        Program("doitgen", "linear-algebra/kernels/doitgen", "doitgen", _square(256, "NR", "NQ", "NP"),
                (_square(32, "NR", "NQ", "NP"), _square(64, "NR", "NQ", "NP")),
                {"doitgen_kernel1": 1.5, "doitgen_kernel2": 1},
                "A tensor contraction launched once per r: kernel 1 (2D over p, q) loops over p, kernel 2 copies."),
        Program("jacobi-1d", "stencils/jacobi-1d-imper", "jacobi1D", {"TSTEPS": 200, "N": 4194304},
                ({"TSTEPS": 2, "N": 65536}, {"TSTEPS": 2, "N": 131072}), {},
                "3-point Jacobi in 1D and copy-back: short launches, where the launch's own cost shows."),
    ]


def _flags(sizes: dict[str, int]) -> list[str]:
    return [f"-D{name}={value}" for name, value in sizes.items()]


def _label(sizes: dict[str, int]) -> str:
    return "_".join(str(v) for v in sizes.values())


def build(gitdir: Path, out: Path, only: set[str] | None) -> list[dict]:
    """Extract PolyBench/GPU's OpenCL folder and build every program at its three sizes; return the entries."""
    chosen = [p for p in programs() if not only or p.name in only]
    root = out / "polybench-gpu"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    commit = extract(gitdir, ["OpenCL"], root)
    utilities = root / "OpenCL" / "utilities"
    entries = []
    for program in chosen:
        folder = root / "OpenCL" / program.folder
        log = folder / "build.log"
        log.write_text("")
        built = []
        for sizes in (program.timed, *program.profiled):
            exe = f"{program.stem}_{_label(sizes)}"
            command = ["gcc", OPT, "-w", f"-I{utilities}", *CL_DEFINES, "-DOPENCL_DEVICE_SELECTION=CL_DEVICE_TYPE_ALL",
                       "-DRUN_ON_CPU=0", *_flags(sizes), f"{program.stem}.c", "-o", exe, "-lOpenCL", "-lm"]
            if not compile_cmd(command, folder, log):
                print(f"  BUILD FAILED polybench-gpu/{program.name} (see {log})")
                break
            built.append([f"./{exe}"])
        else:
            print(f"  built polybench-gpu/{program.name}")
            entries.append({"suite": "polybench-gpu", "name": program.name, "commit": commit, "cwd": str(folder),
                            "command": built[0], "profile_commands": built[1:], "scaling": program.scaling,
                            "notes": f"{program.notes} Timed at {program.timed}, profiled at "
                                     f"{program.profiled[0]} and {program.profiled[1]} (compile-time sizes)."})
    return entries


def main(argv: list[str] | None = None) -> int:
    """Build the programs and write OUT/programs.json; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gitdir", type=Path, help="PolyBench-ACC git dir (bare checkout)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--check", action="store_true", help="run every command; leave out programs that fail")
    parser.add_argument("--native-timeout", type=float, default=120.0)
    parser.add_argument("--oclgrind-timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    if shutil.which("gcc") is None:
        parser.error("gcc is needed")
    if not (args.gitdir / "HEAD").is_file():
        parser.error(f"{args.gitdir}: not a git folder (a bare checkout, or a clone's .git; no HEAD there)")
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    entries = build(args.gitdir.resolve(), out, set(args.only) if args.only else None)
    if args.check:
        entries = check(entries, args.native_timeout, args.oclgrind_timeout)
    (out / "programs.json").write_text(json.dumps(entries, indent=2) + "\n")
    print(f"wrote {len(entries)} programs to {out / 'programs.json'}")
    return 0 if entries else 1


if __name__ == "__main__":
    sys.exit(main())
