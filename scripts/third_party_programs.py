"""Build OpenCL programs of two public benchmark suites and list how to run them.

The script takes local (bare) git checkouts of the Rodinia OpenCL suite and of
SHOC, extracts the sources it needs with ``git cat-file``, compiles the
programs directly with gcc/g++ (``-O2``, ``-lOpenCL``; no make, autotools or
cmake), writes the input files that programs read (the Rodinia checkout has no
data files, so random inputs are generated here in each program's own text
format) and writes ``programs.json`` into the output folder.

Each entry of ``programs.json`` is::

    {"suite", "name", "commit", "cwd", "command": [...],
     "profile_commands": [[...], [...]], "notes"}

``command`` is a run meant to be timed on PoCL on a small (2-core) CPU: it
takes roughly 1-20 s.  (PoCL caches compiled kernels in ~/.cache/pocl; the first run of a
program after a build also pays for kernel compilation, up to a few
seconds, so time repeated runs.)  ``profile_commands`` are one or two runs of the same
program small enough to run under Oclgrind (``oclgrind <command>``) in about a
minute: smaller problems where the kernels' counts scale as the work-items do, else
the timed problem with fewer steps or passes (each program's notes say which).
Paths in commands are absolute or relative to ``cwd``.

With ``--check`` the script also runs every command (natively, and the profile
commands under Oclgrind) and leaves out the programs that fail.

Programs of the two suites left out (checked with PoCL and Oclgrind):

* Rodinia bfs: accepts only a device whose type is exactly GPU or CPU, and
  Oclgrind's device reports several types ("unsupported device type").
* Rodinia cfd, b+tree, heartwall, leukocyte, myocyte, dwt2d, hybridsort: need
  input data files the checkout lacks (hybridsort's are missing blobs).
* SHOC scan and sort: fail their own result check on PoCL.
* SHOC md5hash: Oclgrind cannot run its kernel (``llvm.fshl.i32``).
* SHOC spmv: Oclgrind aborts (fatal error in WorkItemBuiltins.cpp).
* SHOC triad: the smallest run takes ~35 s per pass under Oclgrind, so two
  profile runs of different size do not fit in a minute.

Usage::

    python scripts/third_party_programs.py --rodinia <gitdir> --shoc <gitdir> \
        --out /tmp/programs [--only NAME ...] [--check]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

OPT = "-O2"
CL_DEFINES = ["-DCL_TARGET_OPENCL_VERSION=120", "-DCL_USE_DEPRECATED_OPENCL_1_2_APIS"]
# Words in a program's output that mean that it failed although it exited with 0.
ERROR_PATTERN = re.compile(
    r"\berror\b|\bfailed\b|\bfailure\b|not opened|unable to|segmentation|"
    r"Oclgrind - |invalid (?:read|write)|uninitialized|exception|unsupported|"
    r"test failed|---FAILED---",
    re.IGNORECASE,
)
# Lines that mention "error" but do not report one.
BENIGN_PATTERN = re.compile(r"rmse|error checking|Erroneous|^\s*$", re.IGNORECASE)


# --------------------------------------------------------------------------
# Extraction
# --------------------------------------------------------------------------


def git(gitdir: Path, *args: str) -> str:
    """Run a git command against a bare repository and return its stdout."""
    return subprocess.run(
        ["git", f"--git-dir={gitdir}", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def extract(gitdir: Path, paths: list[str], dest: Path) -> str:
    """Write the files under ``paths`` of HEAD into ``dest``; return HEAD's commit.

    Blobs missing from the local object store (large files left out of the
    mirror) are skipped, which ``git archive`` would refuse to do.
    """
    commit = git(gitdir, "rev-parse", "HEAD").strip()
    listing = git(gitdir, "ls-tree", "-r", "-z", commit, "--", *paths)
    for record in listing.split("\0"):
        if not record:
            continue
        meta, path = record.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob" or mode == "120000":
            continue
        blob = subprocess.run(
            ["git", f"--git-dir={gitdir}", "cat-file", "blob", sha],
            capture_output=True,
        )
        if blob.returncode != 0:
            print(f"  (skipped missing blob {path})", file=sys.stderr)
            continue
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob.stdout)
    return commit


def compile_cmd(cmd: list[str], cwd: Path, log: Path) -> bool:
    """Run one compiler command in ``cwd``, appending its output to ``log``."""
    with log.open("a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        result = subprocess.run(cmd, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT)
    return result.returncode == 0


# --------------------------------------------------------------------------
# Input generators for Rodinia (the checkout has no data files)
# --------------------------------------------------------------------------


def gen_grid(path: Path, count: int, low: float, high: float, seed: int) -> None:
    """``count`` random floats, one a line (hotspot temperature/power files)."""
    rng = random.Random(seed)
    path.write_text("".join(f"{rng.uniform(low, high):.6f}\n" for _ in range(count)))


def gen_kmeans(path: Path, points: int, features: int, seed: int = 3) -> None:
    """Kmeans text input: ``id f1 ... fN`` a line, points around a few centres."""
    rng = random.Random(seed)
    centres = [[rng.uniform(0, 100) for _ in range(features)] for _ in range(8)]
    rows = []
    for i in range(points):
        centre = centres[rng.randrange(len(centres))]
        rows.append(f"{i + 1} " + " ".join(f"{c + rng.gauss(0, 5):.3f}" for c in centre))
    path.write_text("\n".join(rows) + "\n")


def gen_nn(folder: Path, files: int, records: int, seed: int = 4) -> None:
    """Nearest-neighbour record files: 48-character lines, lat at 28, lng at 33."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for f in range(files):
        name = f"rec{f}.db"
        names.append(name)
        lines = []
        for r in range(records):
            head = f"{1950 + r % 60:4d} {r % 12 + 1:2d} {r % 28 + 1:2d} {r % 24:2d} S{f:03d}{r % 1000:03d}"
            head = head.ljust(28)[:28]
            lat = rng.uniform(7.0, 63.0)
            lng = rng.uniform(10.0, 179.0)
            line = f"{head}{lat:5.1f}{lng:5.1f}"
            lines.append(f"{line} {rng.randint(10, 150):3d} {rng.randint(900, 1010):4d}".ljust(48)[:48])
        (folder / name).write_text("\n".join(lines) + "\n")
    (folder / "filelist.txt").write_text("\n".join(names) + "\n")


def gen_pgm(path: Path, rows: int, cols: int, seed: int = 5) -> None:
    """ASCII PGM image (P2) with a smooth pattern plus noise (srad input)."""
    rng = random.Random(seed)
    out = ["P2", f"{cols} {rows}", "255"]
    for i in range(rows):
        out.append(" ".join(str(max(0, min(255, int(128 + 60 * ((i * j) % 7 - 3) / 3 + rng.gauss(0, 20))))) for j in range(cols)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")


# --------------------------------------------------------------------------
# Rodinia recipes
# --------------------------------------------------------------------------


@dataclass
class Recipe:
    """How to build and run one program."""

    name: str
    folder: str  # build folder, relative to the suite root
    compiler: str
    sources: list[str]
    exe: str
    command: list[str]  # arguments after the executable
    profiles: list[list[str]]
    notes: str = ""
    flags: list[str] = field(default_factory=list)
    # sources compiled separately with other flags: {source: [flags]}
    special: dict[str, list[str]] = field(default_factory=dict)
    prepare: Callable[[Path], None] | None = None  # writes input files


def _cxx() -> list[str]:
    return ["-std=gnu++11"]


def rodinia_recipes() -> list[Recipe]:
    """Return the Rodinia programs, with sizes tuned for PoCL on a 2-core CPU."""
    util = ["../util/timing.c"]
    return [
        Recipe(
            "backprop",
            "opencl/backprop",
            "g++",
            ["backprop_ocl.cpp", *util, "backprop.c", "imagenet.c", "facetrain.c"],
            "backprop.out",
            ["-n", "2097152"],
            [["-n", "8192"], ["-n", "16384"]],
            "One forward and one weight-adjust kernel launch (one training step). "
            "backprop_ocl.cpp is compiled with -O0: bpnn_train_kernel() falls off "
            "the end of a non-void function and at -O1/-O2 g++ turns that into a "
            "bogus error exit or an endless loop.",
            special={"backprop_ocl.cpp": ["-O0"]},
        ),
        Recipe(
            "gaussian",
            "opencl/gaussian",
            "g++",
            ["clutils.cpp", "gaussianElim.cpp", "utils.cpp"],
            "gaussian.out",
            ["-s", "1536"],
            [["-s", "48"], ["-s", "96"]],
            "Gaussian elimination on an internally generated matrix; 2 kernels "
            "launched per row (2N launches). Work per launch shrinks with the "
            "pivot row, total work grows as N^3 while work items per launch grow "
            "as N^2: per-work-item work does not grow, but launch count does.",
            flags=["-fopenmp"],
        ),
        Recipe(
            "hotspot",
            "opencl/hotspot",
            "gcc",
            ["OpenCL_helper_library.c", "hotspot.c", *util],
            "hotspot.out",
            ["512", "2", "2000", "../../data/hotspot/temp_512", "../../data/hotspot/power_512", "output.txt"],
            [
                ["512", "2", "4", "../../data/hotspot/temp_512", "../../data/hotspot/power_512", "output_p1.txt"],
                ["512", "2", "8", "../../data/hotspot/temp_512", "../../data/hotspot/power_512", "output_p2.txt"],
            ],
            "Temperature/power grids generated by this script. One kernel launch per pyramid_height (2) time steps. "
            "Profiled at the timed grid with 4 and 8 time steps (the launches' NDRange is the timed one's): at "
            "smaller grids the counts per work-item grow as work-items^1.14 (halo cells), which perfcast refuses "
            "to extrapolate.",
            prepare=lambda root: _prep_hotspot(root),
        ),
        Recipe(
            "hotspot3D",
            "opencl/hotspot3D",
            "gcc",
            ["3D.c", "CL_helper.c", *util],
            "hotspot3D.out",
            [
                "-n",
                "256",
                "-l",
                "8",
                "-i",
                "2000",
                "-f",
                "../../data/hotspot3D/power_256x8",
                "../../data/hotspot3D/temp_256x8",
                "output.txt",
            ],
            [
                [
                    "-n",
                    "64",
                    "-l",
                    "8",
                    "-i",
                    "4",
                    "-f",
                    "../../data/hotspot3D/power_64x8",
                    "../../data/hotspot3D/temp_64x8",
                    "output_p1.txt",
                ],
                [
                    "-n",
                    "128",
                    "-l",
                    "8",
                    "-i",
                    "4",
                    "-f",
                    "../../data/hotspot3D/power_128x8",
                    "../../data/hotspot3D/temp_128x8",
                    "output_p2.txt",
                ],
            ],
            "Power/temperature grids generated by this script. One kernel launch "
            "per iteration; each work item walks all layers (work per item grows "
            "with -l, fixed here).",
            flags=["-lm"],
            prepare=lambda root: _prep_hotspot3d(root),
        ),
        Recipe(
            "lud",
            "opencl/lud",
            "g++",
            ["ocl/lud.cpp", "common/common.c", *util],
            "lud.out",
            ["-s", "4096"],
            [["-s", "64"], ["-s", "128"]],
            "LU decomposition of an internally generated matrix; 3 kernels "
            "launched per 16-wide block step (N/16 steps). Per-work-item work is "
            "fixed (16x16 blocks) but launch count and total work grow with N "
            "(N^3).",
            flags=["-Icommon", "-I../util"],
        ),
        Recipe(
            "nw",
            "opencl/nw",
            "g++",
            ["nw.c", *util],
            "nw.out",
            ["8192", "10", "./nw.cl"],
            [["128", "10", "./nw.cl"], ["256", "10", "./nw.cl"]],
            "Needleman-Wunsch; kernel file passed on the command line. Two "
            "kernels launched once per block anti-diagonal (2*N/16 launches).",
        ),
        Recipe(
            "pathfinder",
            "opencl/pathfinder",
            "g++",
            ["main.cpp", "OpenCL.cpp", *util],
            "pathfinder.out",
            ["-c", "200000", "-r", "200", "-h", "20"],
            # The same pyramid height as the timed run: each work-item loops -h times, so a smaller -h would
            # count a fifth of the timed launches' work per work-item (the rows only change how many launches).
            [["-c", "2048", "-r", "40", "-h", "20"], ["-c", "4096", "-r", "40", "-h", "20"]],
            "Dynamic programming on an internally generated grid; one kernel "
            "launch per pyramid height rows. Per-work-item work grows with -h, so it is profiled at the timed -h.",
        ),
        Recipe(
            "srad",
            "opencl/srad",
            "gcc",
            [
                "main.c",
                "kernel/kernel_gpu_opencl_wrapper.c",
                "util/opencl/opencl.c",
                "util/graphics/graphics.c",
                "util/graphics/resize.c",
                "util/timer/timer.c",
                *util,
            ],
            "srad.out",
            ["-n", "1500", "-l", "0.5", "-s", "502", "458"],
            [["-n", "2", "-l", "0.5", "-s", "64", "64"], ["-n", "2", "-l", "0.5", "-s", "128", "128"]],
            "Reads ../../data/srad/image.pgm (502x458, generated by this script) "
            "and resizes it to -s rows cols; 6 kernels per iteration. Writes "
            "image_out.pgm into cwd.",
            flags=["-lm"],
            prepare=lambda root: gen_pgm(root / "data/srad/image.pgm", 502, 458),
        ),
        Recipe(
            "streamcluster",
            "opencl/streamcluster",
            "g++",
            ["streamcluster.cpp", *util],
            "streamcluster.out",
            ["10", "20", "32", "65536", "65536", "1000", "none", "output.txt", "1", "-p", "0", "-d", "0"],
            [
                ["10", "20", "16", "256", "256", "100", "none", "output_p1.txt", "1", "-p", "0", "-d", "0"],
                ["10", "20", "16", "512", "512", "100", "none", "output_p2.txt", "1", "-p", "0", "-d", "0"],
            ],
            "Points generated internally (infile 'none'); nproc=1 so kernels are "
            "launched from one host thread. Many small pgain kernel launches.",
            flags=["-lpthread"],
        ),
        Recipe(
            "kmeans",
            "opencl/kmeans",
            "g++",
            ["kmeans.cpp", *util, "cluster.c", "getopt.c", "read_input.c", "kmeans_clustering.c", "rmse.c"],
            "kmeans.out",
            ["-o", "-m", "15", "-n", "15", "-i", "../../data/kmeans/100k_34f.txt"],
            [
                ["-o", "-m", "5", "-n", "5", "-i", "../../data/kmeans/1k_34f.txt"],
                ["-o", "-m", "5", "-n", "5", "-i", "../../data/kmeans/2k_34f.txt"],
            ],
            "Input points (34 features) generated by this script. One swap "
            "kernel, then one assignment kernel launch per k-means iteration; "
            "each work item loops over all clusters and features. kmeans.cpp is "
            "compiled with -O0: allocate() falls off the end of a non-void "
            "function, which crashes the -O2 build.",
            special={"kmeans.cpp": ["-O0"]},
            prepare=lambda root: _prep_kmeans(root),
        ),
        Recipe(
            "lavaMD",
            "opencl/lavaMD",
            "gcc",
            [
                "main.c",
                "kernel/kernel_gpu_opencl_wrapper.c",
                "util/num/num.c",
                "util/timer/timer.c",
                "util/opencl/opencl.c",
                *util,
            ],
            "lavaMD.out",
            ["-boxes1d", "14"],
            [["-boxes1d", "2"], ["-boxes1d", "3"]],
            "Particles generated internally; a single kernel launch, one work "
            "group per box, each work item loops over the neighbour boxes.",
            flags=["-fopenmp", "-lm"],
        ),
        Recipe(
            "nn",
            "opencl/nn",
            "g++",
            ["nearestNeighbor.cpp", "clutils.cpp", "utils.cpp"],
            "nn.out",
            [
                "../../data/nn/big/filelist.txt",
                "-r",
                "5",
                "-lat",
                "30",
                "-lng",
                "90",
                "-q",
                "-t",
                "-f",
                "../../data/nn/big",
                "-p",
                "0",
                "-d",
                "0",
            ],
            [
                [
                    "../../data/nn/small/filelist.txt",
                    "-r",
                    "5",
                    "-lat",
                    "30",
                    "-lng",
                    "90",
                    "-q",
                    "-t",
                    "-f",
                    "../../data/nn/small",
                    "-p",
                    "0",
                    "-d",
                    "0",
                ],
                [
                    "../../data/nn/mid/filelist.txt",
                    "-r",
                    "5",
                    "-lat",
                    "30",
                    "-lng",
                    "90",
                    "-q",
                    "-t",
                    "-f",
                    "../../data/nn/mid",
                    "-p",
                    "0",
                    "-d",
                    "0",
                ],
            ],
            "Hurricane-like records generated by this script. A single tiny "
            "distance kernel; run time is dominated by host-side file parsing.",
            flags=["-fopenmp"],
            prepare=lambda root: _prep_nn(root),
        ),
        Recipe(
            "particlefilter",
            "opencl/particlefilter",
            "g++",
            ["ex_particle_OCL_single_seq.cpp", *util],
            "OCL_particlefilter_single.out",
            ["-x", "128", "-y", "128", "-z", "10", "-np", "32768"],
            [["-x", "32", "-y", "32", "-z", "2", "-np", "256"], ["-x", "32", "-y", "32", "-z", "2", "-np", "512"]],
            "Single-precision variant; video frames generated internally. "
            "Several kernels per frame; the find-index kernel loops over all "
            "particles in each work item (per-work-item work grows with -np). "
            "Compiled with -O0: a non-void function falls off its end, which "
            "makes the -O2 build report bogus enqueue errors.",
            flags=["-I../util", "-lm"],
            special={"ex_particle_OCL_single_seq.cpp": ["-O0"]},
        ),
    ]


def _prep_hotspot(root: Path) -> None:
    folder = root / "data/hotspot"
    folder.mkdir(parents=True, exist_ok=True)
    for n in (64, 128, 512):
        gen_grid(folder / f"temp_{n}", n * n, 320.0, 345.0, seed=n)
        gen_grid(folder / f"power_{n}", n * n, 0.0, 0.005, seed=n + 1)


def _prep_hotspot3d(root: Path) -> None:
    folder = root / "data/hotspot3D"
    folder.mkdir(parents=True, exist_ok=True)
    for n in (64, 128, 256):
        gen_grid(folder / f"temp_{n}x8", n * n * 8, 320.0, 345.0, seed=n)
        gen_grid(folder / f"power_{n}x8", n * n * 8, 0.0, 0.005, seed=n + 1)


def _prep_kmeans(root: Path) -> None:
    folder = root / "data/kmeans"
    folder.mkdir(parents=True, exist_ok=True)
    gen_kmeans(folder / "1k_34f.txt", 1024, 34, seed=21)
    gen_kmeans(folder / "2k_34f.txt", 2048, 34, seed=22)
    gen_kmeans(folder / "100k_34f.txt", 100_000, 34, seed=23)


def _prep_nn(root: Path) -> None:
    gen_nn(root / "data/nn/small", 2, 1024, seed=31)
    gen_nn(root / "data/nn/mid", 2, 2048, seed=32)
    gen_nn(root / "data/nn/big", 12, 262144, seed=33)


def build_rodinia(gitdir: Path, out: Path, only: set[str] | None) -> list[dict]:
    """Extract and build the Rodinia programs; return their entries."""
    recipes = [r for r in rodinia_recipes() if not only or r.name in only]
    if not recipes:
        return []
    root = out / "rodinia"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    folders = sorted({r.folder for r in recipes}) + ["opencl/util"]
    print(f"extracting Rodinia ({len(recipes)} programs)")
    commit = extract(gitdir, folders, root)
    entries = []
    for recipe in recipes:
        cwd = root / recipe.folder
        log = cwd / "build.log"
        log.write_text("")
        lang = _cxx() if recipe.compiler == "g++" else []
        base = [OPT, "-w", "-I../util", "-DTIMING", *CL_DEFINES]
        objects: list[str] = []
        ok = True
        for src, extra in recipe.special.items():
            obj = Path(src).stem + ".special.o"
            ok = ok and compile_cmd([recipe.compiler, *lang, *base, *extra, "-c", src, "-o", obj], cwd, log)
            objects.append(obj)
        sources = [s for s in recipe.sources if s not in recipe.special]
        cmd = [recipe.compiler, *lang, *base, *recipe.flags, *sources, *objects, "-o", recipe.exe, "-lOpenCL", "-lm"]
        ok = ok and compile_cmd(cmd, cwd, log)
        if not ok:
            print(f"  BUILD FAILED rodinia/{recipe.name} (see {log})")
            continue
        if recipe.prepare is not None:
            recipe.prepare(root)
        print(f"  built rodinia/{recipe.name}")
        exe = f"./{recipe.exe}"
        entries.append(
            {
                "suite": "rodinia",
                "name": recipe.name,
                "commit": commit,
                "cwd": str(cwd),
                "command": [exe, *recipe.command],
                "profile_commands": [[exe, *p] for p in recipe.profiles],
                "notes": recipe.notes,
            }
        )
    return entries


# --------------------------------------------------------------------------
# SHOC
# --------------------------------------------------------------------------

SHOC_CONFIG_H = """/* Written by third_party_programs.py in place of the configure output. */
#define HAVE_GETTIMEOFDAY 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_CLOCK_GETTIME 1
#define HAVE_CLOCK_PROCESS_CPUTIME_ID 1
#define HAVE_SQRT 1
#define HAVE_POW 1
#ifndef restrict
#define restrict __restrict
#endif
"""

SHOC_COMMON = [
    "src/common/CTimer.cpp",
    "src/common/ResultDatabase.cpp",
    "src/common/OptionParser.cpp",
    "src/common/Option.cpp",
    "src/common/Timer.cpp",
    "src/common/ProgressBar.cpp",
    "src/common/InvalidArgValue.cpp",
    "src/common/Matrix2DStatics.cpp",
    "src/opencl/common/OpenCLDeviceInfo.cpp",
    "src/opencl/common/OpenCLPlatform.cpp",
    "src/opencl/common/OpenCLNodePlatformContainer.cpp",
    "src/opencl/common/Event.cpp",
]


@dataclass
class ShocBench:
    """One SHOC level-1 benchmark: sources, kernel files, run sizes."""

    name: str
    folder: str
    exe: str
    sources: list[str]
    kernels: list[str]  # .cl files turned into C strings (cl_source_<stem>)
    command: list[str]
    profiles: list[list[str]]
    notes: str = ""


def shoc_benches() -> list[ShocBench]:
    """Return the SHOC level-1 programs; ``-s`` is the size preset (1..4)."""
    kern = "Kernel source is compiled into the binary as a C string. "
    return [
        ShocBench(
            "bfs",
            "bfs",
            "BFS",
            ["BFS.cpp", "../../../common/Graph.cpp"],
            ["bfs_uiuc_spill.cl", "bfs_iiit.cl"],
            ["-s", "3", "--passes", "5"],
            [["-s", "3", "--passes", "1"]],
            kern + "Random graph generated internally; kernels launched once per BFS level. "
            "Timed at -s 3 and profiled at the same size (one pass): each launch's NDRange is the graph's vertex "
            "count, and between sizes the counts per work-item follow the graph (work-items^0.98), so perfcast "
            "refuses to scale them; -s 4 takes over 5 min under Oclgrind.",
        ),
        ShocBench(
            "fft",
            "fft",
            "FFT",
            ["FFT.cpp", "fftlib.cpp"],
            ["fft.cl"],
            ["-s", "3", "--passes", "5"],
            [["-s", "1", "--passes", "1", "--MB", "1"], ["-s", "1", "--passes", "1", "--MB", "2"]],
            kern + "Batched 512-point FFTs (sp and dp), forward and inverse; --MB sets the data size.",
        ),
        ShocBench(
            "gemm",
            "gemm",
            "GEMM",
            ["GEMM.cpp"],
            ["gemmN.cl"],
            ["-s", "1", "--passes", "40"],
            [["-s", "1", "--passes", "1"], ["-s", "1", "--passes", "2"]],
            kern + "Matrix products (sgemm/dgemm, N and T): per-work-item "
            "work grows with the matrix size. -s 1 (N=256) is the smallest "
            "preset that Oclgrind finishes, so the two profile runs differ in "
            "passes (kernel launches), not in N (--KiB 64 took >90 s). "
            "Timed at -s 1 (N=256), the size profiled: per-work-item work grows with N and the two profile runs "
            "differ only in passes, so no scaling between sizes could be checked; -s 2 takes over 200 s under "
            "Oclgrind.",
        ),
        ShocBench(
            "md",
            "md",
            "MD",
            ["MD.cpp"],
            ["md.cl"],
            ["-s", "1", "--passes", "10"],
            [["-s", "1", "--passes", "1", "--iterations", "1"], ["-s", "1", "--passes", "1", "--iterations", "2"]],
            kern + "Lennard-Jones force on a neighbour list (sp and dp); each "
            "work item loops over its neighbours. Profile runs differ in "
            "--iterations (kernel launches), -s 1 is the smallest preset. "
            "Timed at -s 1, the size profiled (the profile runs differ only in iterations).",
        ),
        ShocBench(
            "reduction",
            "reduction",
            "Reduction",
            ["Reduction.cpp"],
            ["reduction.cl"],
            ["-s", "3", "--passes", "3"],
            [["-s", "3", "--passes", "1", "--iterations", "1"], ["-s", "3", "--passes", "1", "--iterations", "2"]],
            kern + "Sum reductions (sp and dp); each work item sums a "
            "grid-strided slice, so per-item work grows with the size. "
            "Profile runs differ in --iterations. "
            "Profiled at the timed size -s 3 (3 s under Oclgrind): its NDRange is the same at every size while "
            "each work-item's grid-strided slice grows, so counts from -s 1 would be taken for the same work.",
        ),
        ShocBench(
            "stencil2d",
            "stencil2d",
            "Stencil2D",
            ["Stencil2Dmain.cpp", "OpenCLStencil.cpp", "OpenCLStencilFactory.cpp", "CommonOpenCLStencilFactory.cpp"],
            ["stencil2d.cl"],
            ["-s", "1", "--passes", "2"],
            [
                ["-s", "1", "--passes", "1", "--num-iters", "4", "--warmupPasses", "0", "--customSize", "256,256"],
                ["-s", "1", "--passes", "1", "--num-iters", "4", "--warmupPasses", "0", "--customSize", "512,512"],
            ],
            kern + "9-point stencil (sp and dp), one kernel launch per "
            "iteration (1000 by default); each work item computes a column "
            "strip of the 8x256 work-group tile.",
        ),
    ]


def cl_to_cpp(cl_file: Path, out_file: Path) -> None:
    """Write the OpenCL source as ``const char *cl_source_<stem>`` (as SHOC's build does)."""
    lines = cl_file.read_text().replace("\r", "").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    body = "\n".join('"' + line.replace("\\", "\\\\").replace('"', '\\"') + '\\n"' for line in lines)
    out_file.write_text(f"const char *cl_source_{cl_file.stem} =\n{body}\n;\n")


def build_shoc(gitdir: Path, out: Path, only: set[str] | None) -> list[dict]:
    """Extract and build SHOC level-1 programs; return their entries."""
    benches = [b for b in shoc_benches() if not only or b.name in only]
    if not benches:
        return []
    root = out / "shoc"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    print(f"extracting SHOC ({len(benches)} programs)")
    commit = extract(gitdir, ["src/common", "src/opencl/common", "src/opencl/level1"], root)
    build = root / "build"
    build.mkdir()
    (build / "config.h").write_text(SHOC_CONFIG_H)
    log = build / "build.log"
    log.write_text("")
    flags = [OPT, "-w", "-std=gnu++11", f"-I{build}", f"-I{root}/src/common", f"-I{root}/src/opencl/common", *CL_DEFINES]
    objects = []
    for src in SHOC_COMMON + ["src/opencl/common/main.cpp"]:
        obj = build / (Path(src).stem + ".o")
        if not compile_cmd(["g++", *flags, "-c", str(root / src), "-o", str(obj)], root, log):
            print(f"  BUILD FAILED SHOC common file {src} (see {log})")
            return []
        objects.append(str(obj))
    entries = []
    for bench in benches:
        folder = root / "src/opencl/level1" / bench.folder
        blog = folder / "build.log"
        blog.write_text("")
        sources = [str(folder / s) for s in bench.sources]
        for cl in bench.kernels:
            gen = folder / (Path(cl).stem + "_cl.cpp")
            cl_to_cpp(folder / cl, gen)
            sources.append(str(gen))
        exe = build / bench.exe
        cmd = ["g++", *flags, f"-I{folder}", *sources, *objects, "-o", str(exe), "-lOpenCL", "-lm"]
        if not compile_cmd(cmd, folder, blog):
            print(f"  BUILD FAILED shoc/{bench.name} (see {blog})")
            continue
        print(f"  built shoc/{bench.name}")
        entries.append(
            {
                "suite": "shoc",
                "name": bench.name,
                "commit": commit,
                "cwd": str(build),
                "command": [str(exe), *bench.command],
                "profile_commands": [[str(exe), *p] for p in bench.profiles],
                "notes": bench.notes,
            }
        )
    return entries


# --------------------------------------------------------------------------
# Optional check
# --------------------------------------------------------------------------


def output_errors(text: str) -> list[str]:
    """Lines of program output that look like error reports."""
    return [line.strip() for line in text.splitlines() if ERROR_PATTERN.search(line) and not BENIGN_PATTERN.search(line)]


def run_checked(cmd: list[str], cwd: str, timeout: float) -> tuple[bool, float, str]:
    """Run ``cmd``; return (success, wall seconds, reason)."""
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, time.monotonic() - start, f"timeout after {timeout:.0f} s"
    wall = time.monotonic() - start
    if proc.returncode != 0:
        return False, wall, f"exit status {proc.returncode}: {proc.stderr[-300:]!r}"
    bad = output_errors(proc.stdout + proc.stderr)
    if bad:
        return False, wall, "error in output: " + " | ".join(bad[:3])
    return True, wall, ""


def check(entries: list[dict], native_timeout: float, oclgrind_timeout: float) -> list[dict]:
    """Run every entry natively and under Oclgrind; keep those that pass."""
    kept = []
    for entry in entries:
        label = f"{entry['suite']}/{entry['name']}"
        ok, wall, why = run_checked(entry["command"], entry["cwd"], native_timeout)
        report = [f"native {wall:.1f}s" + ("" if ok else f" FAILED ({why})")]
        for prof in entry["profile_commands"]:
            if not ok:
                break
            ok, wall, why = run_checked(["oclgrind", *prof], entry["cwd"], oclgrind_timeout)
            report.append(f"oclgrind {wall:.1f}s" + ("" if ok else f" FAILED ({why})"))
        print(f"  {'ok  ' if ok else 'DROP'} {label}: " + "; ".join(report), flush=True)
        if ok:
            kept.append(entry)
    return kept


def main(argv: list[str] | None = None) -> int:
    """Build both suites and write programs.json; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rodinia", type=Path, required=True, help="Rodinia git dir")
    parser.add_argument("--shoc", type=Path, required=True, help="SHOC git dir")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--only", nargs="*", help="build only these program names")
    parser.add_argument("--check", action="store_true", help="run all commands and leave out programs that fail")
    parser.add_argument("--native-timeout", type=float, default=120.0)
    parser.add_argument("--oclgrind-timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        parser.error("gcc and g++ are needed")
    for name in ("rodinia", "shoc"):
        gitdir = getattr(args, name)
        if not (gitdir / "HEAD").is_file():
            parser.error(f"--{name} {gitdir}: not a git folder (a bare checkout, or a clone's .git; no HEAD there)")
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    only = set(args.only) if args.only else None
    entries = build_rodinia(args.rodinia.resolve(), out, only)
    entries += build_shoc(args.shoc.resolve(), out, only)
    if args.check:
        entries = check(entries, args.native_timeout, args.oclgrind_timeout)
    path = out / "programs.json"
    path.write_text(json.dumps(entries, indent=2) + "\n")
    print(f"wrote {len(entries)} programs to {path}")
    return 0 if entries else 1


if __name__ == "__main__":
    sys.exit(main())
