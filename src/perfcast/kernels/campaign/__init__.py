"""The campaign's kernel suite: twelve kernels, each described for every model perfcast has.

A kernel's description says what it computes, its algorithmic species and f (boat hull), its work and its
traffic per memory level as functions of the problem size (roofline), its compulsory DRAM footprint (which
replaces a simulator's cache-less byte count), how it is launched in full and at a reduced NDRange for
profiling, its host data, and how its result is checked. The source is suite.cl (OpenCL C) and suite.cu
(CUDA C, the same algorithms).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from perfcast.errors import NotFound

__all__ = ["CUDA_SOURCE", "C_SOURCE", "KERNELS", "OPENCL_SOURCE", "TILE", "CampaignKernel", "Launch", "kernel_named",
           "opencl_options"]

OPENCL_SOURCE = Path(__file__).parent / "suite.cl"
CUDA_SOURCE = Path(__file__).parent / "suite.cu"
C_SOURCE = Path(__file__).parent / "suite.c"  # C with OpenMP, for the cpu backend
TILE = 16  # sgemm tile and the side of the 2D work-groups; GROUP = TILE^2 work-items in 1D groups
GROUP = TILE * TILE
NBODY_GROUP = 64


@dataclass(frozen=True)
class Launch:
    """An NDRange: global size, work-group size and global offset (work-items, per dimension)."""

    global_size: tuple[int, ...]
    local_size: tuple[int, ...]
    offset: tuple[int, ...] | None = None

    @property
    def items(self) -> int:
        """Return the number of work-items."""
        return int(np.prod(self.global_size))


Arrays = dict[str, np.ndarray]


@dataclass(frozen=True)
class CampaignKernel:
    """One kernel of the suite, sizes by a problem size `n` (elements, grid side or matrix order)."""

    name: str
    about: str
    precision: str  # fp32, fp64 or int32: the compute peak it runs against
    species: str
    f: float  # data ops per work unit / m, as `perfcast classify` counts them
    element_bytes: int
    sizes: tuple[int, int, int]  # n for the full run, the quick run, and the Oclgrind profile
    bind: Callable[[int], dict[str, int]]
    work: Callable[[int], float]  # op
    traffic: Callable[[int], dict[str, float]]  # B per memory level: L1 = every access, DRAM = compulsory
    footprint: Callable[[int], tuple[float, float]]  # compulsory DRAM bytes read, written
    launch: Callable[[int], Launch]
    profile_launch: Callable[[int, int], Launch]  # (n, groups): a reduced NDRange of `groups` work-groups
    arrays: Callable[[int, np.random.Generator], Arrays]  # host inputs and outputs, by argument name
    arguments: tuple[str, ...]  # argument order: array names, or scalars given by `scalars`
    scalars: Callable[[int], dict[str, Any]]
    check: Callable[[int, Arrays, Arrays], str | None]  # (n, inputs, outputs) -> None, or what is wrong
    note: str = ""
    item_work_grows_with_n: bool = False  # True: the Oclgrind profile must run at the run's own n
    elementary_calls: float = 0  # exp/log/sin-like calls per application of the element operator, in f at 8 ops

    def profile_size(self, n: int) -> int:
        """Return the problem size the Oclgrind profile of a run at size `n` uses."""
        return n if self.item_work_grows_with_n else min(n, self.sizes[2])

    def ordered_arguments(self, n: int, buffers: dict[str, Any]) -> list[Any]:
        """Return the launch arguments in order: the device `buffers` by name, the scalars for size `n`."""
        scalars = self.scalars(n)
        return [buffers[a] if a in buffers else scalars[a] for a in self.arguments]

    def dram_bytes(self, n: int) -> float:
        """Return the compulsory DRAM traffic in B."""
        read, written = self.footprint(n)
        return read + written


def _one_d(n: int, group: int = GROUP) -> Launch:
    return Launch((-(-n // group) * group,), (group,))


def _one_d_profile(group: int = GROUP, start: Callable[[int], int] = lambda n: 0,
                   items: Callable[[int], int] = lambda n: n) -> Callable[[int, int], Launch]:
    def launch(n: int, groups: int) -> Launch:
        # Never past the full launch of items(n) work-items: more groups than the problem has (528 for four
        # waves of a 132-SM GPU on a small n) would read outside the buffers.
        whole = -(-items(n) // group)
        groups = max(1, min(groups, whole))
        first = min(start(n) // group, whole - groups)
        return Launch((groups * group,), (group,), (first * group,))
    return launch


def _tiles_profile(n: int, groups: int) -> Launch:
    """Return `groups` TILExTILE work-groups (rounded up to whole rows of them) inside an n x n launch, centred."""
    across = n // TILE
    wide = max(1, min(groups, across))
    high = max(1, min(-(-groups // wide), across))
    return Launch((TILE * wide, TILE * high), (TILE, TILE),
                  ((across - wide) // 2 * TILE, (across - high) // 2 * TILE))


def _close(expected: np.ndarray, got: np.ndarray, what: str, rtol: float = 1e-3) -> str | None:
    if not np.allclose(got, expected, rtol=rtol, atol=rtol * float(np.max(np.abs(expected)) or 1.0)):
        worst = int(np.argmax(np.abs(got - expected)))
        return f"{what}: element {worst} is {got.flat[worst]!r}, expected {expected.flat[worst]!r}"
    return None


# ------------------------------------------------------------------ the kernels

def _triad() -> CampaignKernel:
    def check(n: int, i: Arrays, o: Arrays) -> str | None:
        return _close(i["b"][:4096] + 3.0 * i["c"][:4096], o["a"][:4096], "triad")

    return CampaignKernel(
        "triad", "STREAM triad a = b + s c", "fp32", "N|element ^ N|element -> N|element", 2, 4,
        (1 << 24, 1 << 22, 1 << 20), lambda n: {"N": n}, lambda n: 2.0 * n,
        lambda n: {"L1": 12.0 * n, "DRAM": 12.0 * n}, lambda n: (8.0 * n, 4.0 * n),
        _one_d, _one_d_profile(),
        lambda n, rng: {"a": np.zeros(n, np.float32), "b": rng.random(n, np.float32), "c": rng.random(n, np.float32)},
        ("a", "b", "c", "s", "n"), lambda n: {"s": np.float32(3.0), "n": np.int32(n)}, check,
    )


def _stencil() -> CampaignKernel:
    def check(n: int, i: Arrays, o: Arrays) -> str | None:
        g = i["in"].reshape(n, n, n)
        z = n // 2
        inner = g[z, 1:-1, 1:-1] * 0.5 + 0.1 * (g[z, 1:-1, :-2] + g[z, 1:-1, 2:] + g[z, :-2, 1:-1] + g[z, 2:, 1:-1]
                                                 + g[z - 1, 1:-1, 1:-1] + g[z + 1, 1:-1, 1:-1])
        return _close(inner, o["out"].reshape(n, n, n)[z, 1:-1, 1:-1], "stencil7 middle plane")

    return CampaignKernel(
        "stencil7", "3D 7-point stencil", "fp32", "NxNxN|neighb(3x3x3) -> NxNxN|element", 8 / 27, 4,
        (256, 160, 128), lambda n: {"N": n}, lambda n: 8.0 * (n - 2) ** 3,
        lambda n: {"L1": 32.0 * n**3, "DRAM": 8.0 * n**3}, lambda n: (4.0 * n**3, 4.0 * n**3),
        lambda n: _one_d(n**3), _one_d_profile(start=lambda n: (n // 2) * n * n + (n // 2) * n, items=lambda n: n**3),
        lambda n, rng: {"out": np.zeros(n**3, np.float32), "in": rng.random(n**3, np.float32)},
        ("out", "in", "n", "c0", "c1"), lambda n: {"n": np.int32(n), "c0": np.float32(0.5), "c1": np.float32(0.1)},
        check, note="species: a 3x3x3 neighbourhood, of which the stencil reads 7 points (f = 8 ops / 27)",
    )


def _sor() -> CampaignKernel:
    def points(n: int) -> int:
        return (n - 2) * ((n - 2) // 2)

    def check(n: int, i: Arrays, o: Arrays) -> str | None:
        u0, f = i["u"].reshape(n, n), i["f"].reshape(n, n)
        u = o["u"].reshape(n, n)
        row = 5
        cols = np.arange(1, n - 1)
        red = cols[(row + cols) % 2 == 1]  # colour 0: (row + col) odd
        gs = 0.25 * (u0[row, red - 1] + u0[row, red + 1] + u0[row - 1, red] + u0[row + 1, red] - 1e-4 * f[row, red])
        return _close(-0.5 * u0[row, red] + 1.5 * gs, u[row, red], "sor_redblack row 5")

    return CampaignKernel(
        "sor_redblack", "one colour of a red-black SOR sweep (2D Poisson)", "fp32",
        "NxN|neighb(3x3) ^ NxN|element -> NxN|element", 1.0, 4, (4096, 2048, 1024), lambda n: {"N": n},
        lambda n: 9.0 * points(n), lambda n: {"L1": 24.0 * points(n), "DRAM": 12.0 * n * n},
        lambda n: (8.0 * n * n, 4.0 * n * n), lambda n: _one_d(points(n)),
        _one_d_profile(start=lambda n: points(n) // 2, items=points),
        lambda n, rng: {"u": rng.random(n * n, np.float32), "f": rng.random(n * n, np.float32)},
        ("u", "f", "n", "colour", "omega", "h2"),
        lambda n: {"n": np.int32(n), "colour": np.int32(0), "omega": np.float32(1.5), "h2": np.float32(1e-4)},
        check, note="species approximate: one colour updates half the points, 9 ops each, of a 3x3 neighbourhood",
    )


def _gemm(name: str, about: str, note: str) -> CampaignKernel:
    def check(n: int, i: Arrays, o: Arrays) -> str | None:
        a, b = i["A"].reshape(n, n), i["B"].reshape(n, n)
        rows = [0, n // 2, n - 1]
        return _close(a[rows] @ b, o["C"].reshape(n, n)[rows], name, rtol=1e-3)

    return CampaignKernel(
        name, about, "fp32", "NxK|tile(1xK) ^ KxM|tile(Kx1) -> NxM|element", 2, 4, (1024, 512, 1024),
        lambda n: {"N": n, "K": n, "M": n}, lambda n: 2.0 * n**3,
        lambda n: {"L1": 8.0 * n**3 if name == "sgemm_naive" else 8.0 * n**3 / TILE, "DRAM": 12.0 * n * n},
        lambda n: (8.0 * n * n, 4.0 * n * n),
        lambda n: Launch((n, n), (TILE, TILE)),
        _tiles_profile,
        lambda n, rng: {"C": np.zeros(n * n, np.float32), "A": rng.random(n * n, np.float32) - 0.5,
                        "B": rng.random(n * n, np.float32) - 0.5},
        ("C", "A", "B", "n"), lambda n: {"n": np.int32(n)}, check, note=note, item_work_grows_with_n=True,
    )


_GEMM_NOTE = ("n = 1024 (12 MiB, inside a 32 MiB last-level cache): compute and latency bound at any size; at n = 2048 "
              "PoCL's naive kernel takes 33 s a launch on 2 cores")


def _histogram() -> CampaignKernel:
    def check(n: int, i: Arrays, o: Arrays) -> str | None:
        expected = np.bincount(i["data"], minlength=256).astype(np.uint32)
        if not np.array_equal(expected, o["bins"]):
            return f"histogram256: bins differ in {int(np.sum(expected != o['bins']))} places"
        return None

    return CampaignKernel(
        "histogram256", "256-bin histogram with local and global atomics", "int32", "N|element -> 256|shared", 1, 1,
        (1 << 26, 1 << 23, 1 << 20), lambda n: {"N": n}, lambda n: 1.0 * n,
        lambda n: {"L1": 1.0 * n, "DRAM": 1.0 * n}, lambda n: (1.0 * n, 1024.0),
        _one_d, _one_d_profile(),
        lambda n, rng: {"bins": np.zeros(256, np.uint32), "data": rng.integers(0, 256, n, dtype=np.uint8)},
        ("bins", "data", "n"), lambda n: {"n": np.int32(n)}, check,
    )


def _reduce() -> CampaignKernel:
    def check(n: int, i: Arrays, o: Arrays) -> str | None:
        expected = np.float64(i["x"].astype(np.float64).sum())
        got = np.float64(o["partial"].astype(np.float64).sum())
        return None if abs(got - expected) <= 1e-4 * abs(expected) else f"reduce_sum: {got} != {expected}"

    return CampaignKernel(
        "reduce_sum", "tree reduction in local memory, one partial sum per work-group", "fp32", "N|element -> 1|shared",
        1, 4, (1 << 25, 1 << 23, 1 << 20), lambda n: {"N": n}, lambda n: 1.0 * n,
        lambda n: {"L1": 4.0 * n, "DRAM": 4.0 * n}, lambda n: (4.0 * n, 4.0 * n / GROUP),
        _one_d, _one_d_profile(),
        lambda n, rng: {"partial": np.zeros(-(-n // GROUP), np.float32), "x": rng.random(n, np.float32)},
        ("partial", "x", "n"), lambda n: {"n": np.int32(n)}, check,
    )


def _transcendental() -> CampaignKernel:
    def check(n: int, i: Arrays, o: Arrays) -> str | None:
        v = i["x"][:4096].astype(np.float64)
        expected = np.exp(-v) * np.log(v + 2) + np.sin(v) * np.sqrt(v + 1) + 1 / (v + 3)
        return _close(expected, o["y"][:4096].astype(np.float64), "transcendental", rtol=1e-4)

    # exp, log, sin at 8 ops; sqrt and the division 1 each; 5 adds, 3 multiplies and a negation: 35
    return CampaignKernel(
        "transcendental", "exp, log, sin, sqrt and a division per element", "fp32", "N|element -> N|element", 35, 4,
        (1 << 24, 1 << 22, 1 << 20), lambda n: {"N": n}, lambda n: 35.0 * n,
        lambda n: {"L1": 8.0 * n, "DRAM": 8.0 * n}, lambda n: (4.0 * n, 4.0 * n),
        _one_d, _one_d_profile(),
        lambda n, rng: {"y": np.zeros(n, np.float32), "x": rng.random(n, np.float32) * 4},
        ("y", "x", "n"), lambda n: {"n": np.int32(n)}, check,
        note="f counts elementary functions at 8 ops, as `perfcast classify` does",
        elementary_calls=3,
    )


def _nbody() -> CampaignKernel:
    def check(n: int, i: Arrays, o: Arrays) -> str | None:
        body = i["body"].reshape(n, 4).astype(np.float64)
        rows = [0, n // 2]
        d = body[None, :, :3] - body[rows, None, :3]
        r2 = (d**2).sum(-1) + 1e-3
        expected = (body[None, :, 3] * r2**-1.5)[..., None] * d
        return _close(expected.sum(1), o["acc"].reshape(n, 4)[rows, :3].astype(np.float64), "nbody", rtol=2e-3)

    # per interaction: 3 sub, 3 mul + 3 add (r2), rsqrt (1), 3 mul (s), 3 FMA (6): 20 ops
    return CampaignKernel(
        "nbody", "all-pairs gravitational acceleration", "fp32", "N|full -> N|element", 20, 16,
        (32768, 8192, 32768), lambda n: {"N": n}, lambda n: 20.0 * n * n,
        lambda n: {"L1": 16.0 * n * n, "DRAM": 32.0 * n}, lambda n: (16.0 * n, 16.0 * n),
        lambda n: _one_d(n, NBODY_GROUP), _one_d_profile(NBODY_GROUP),
        lambda n, rng: {"acc": np.zeros(4 * n, np.float32),
                        "body": np.column_stack([rng.random((n, 3)), rng.random(n) + 0.5]).astype(np.float32).ravel()},
        ("acc", "body", "n", "eps2"), lambda n: {"n": np.int32(n), "eps2": np.float32(1e-3)}, check,
        note="the bodies (16 B each) fit in cache at any size that runs in seconds: compute bound by design",
        item_work_grows_with_n=True,
    )


NNZ_PER_ROW = 16


def _spmv() -> CampaignKernel:
    def arrays(n: int, rng: np.random.Generator) -> Arrays:
        cols = rng.integers(0, n, (n, NNZ_PER_ROW), dtype=np.int32)
        cols.sort(axis=1)
        return {"y": np.zeros(n, np.float32), "row_start": (np.arange(n + 1) * NNZ_PER_ROW).astype(np.int32),
                "cols": cols.ravel(), "vals": rng.random(n * NNZ_PER_ROW, np.float32), "x": rng.random(n, np.float32)}

    def check(n: int, i: Arrays, o: Arrays) -> str | None:
        rows = slice(0, 2048)
        vals = i["vals"].reshape(n, NNZ_PER_ROW)[rows]
        xs = i["x"][i["cols"].reshape(n, NNZ_PER_ROW)[rows]]
        return _close((vals * xs).sum(1), o["y"][rows], "spmv_csr")

    return CampaignKernel(
        "spmv_csr", f"CSR sparse matrix-vector product, {NNZ_PER_ROW} random columns per row", "fp32",
        "NxK|tile(1xK) ^ NxK|tile(1xK) -> N|element", 2, 4, (1 << 22, 1 << 20, 1 << 18),
        lambda n: {"N": n, "K": NNZ_PER_ROW}, lambda n: 2.0 * NNZ_PER_ROW * n,
        lambda n: {"L1": (12.0 * NNZ_PER_ROW + 12.0) * n, "DRAM": (8.0 * NNZ_PER_ROW + 16.0) * n},
        lambda n: ((8.0 * NNZ_PER_ROW + 12.0) * n, 4.0 * n), _one_d, _one_d_profile(),
        arrays, ("y", "row_start", "cols", "vals", "x", "n"), lambda n: {"n": np.int32(n)}, check,
        note="species approximate: the gathers of x (16 MiB at full size) are not a species pattern and not counted",
    )


HASH_ROUNDS = 16


def _hash() -> CampaignKernel:
    def check(n: int, i: Arrays, o: Arrays) -> str | None:
        v = i["in"][:4096].astype(np.uint64)
        mask = np.uint64(0xFFFFFFFF)
        for r in range(HASH_ROUNDS):
            v ^= v >> np.uint64(16)
            v = (v * np.uint64(0x7FEB352D)) & mask
            v ^= v >> np.uint64(15)
            v = (v + np.uint64(r)) & mask
        return None if np.array_equal(v.astype(np.uint32), o["out"][:4096]) else "hash_int: outputs differ"

    # per round: shift, xor, multiply, shift, xor, add = 6 integer ops
    return CampaignKernel(
        "hash_int", f"{HASH_ROUNDS} rounds of a multiply-xorshift hash per element", "int32",
        "N|element -> N|element", 6 * HASH_ROUNDS, 4, (1 << 24, 1 << 22, 1 << 20), lambda n: {"N": n},
        lambda n: 6.0 * HASH_ROUNDS * n, lambda n: {"L1": 8.0 * n, "DRAM": 8.0 * n}, lambda n: (4.0 * n, 4.0 * n),
        _one_d, _one_d_profile(),
        lambda n, rng: {"out": np.zeros(n, np.uint32), "in": rng.integers(0, 2**32, n, dtype=np.uint32)},
        ("out", "in", "n", "rounds"), lambda n: {"n": np.int32(n), "rounds": np.int32(HASH_ROUNDS)}, check,
    )


def _horner() -> CampaignKernel:
    def check(n: int, i: Arrays, o: Arrays) -> str | None:
        v = i["x"][:4096]
        s = np.ones_like(v)
        for _ in range(16):
            s = s * v + 0.5
        return _close(s, o["y"][:4096], "horner_fp64", rtol=1e-12)

    return CampaignKernel(
        "horner_fp64", "degree-16 polynomial by Horner's rule, double precision", "fp64", "N|element -> N|element",
        32, 8, (1 << 23, 1 << 21, 1 << 20), lambda n: {"N": n}, lambda n: 32.0 * n,
        lambda n: {"L1": 16.0 * n, "DRAM": 16.0 * n}, lambda n: (8.0 * n, 8.0 * n), _one_d, _one_d_profile(),
        lambda n, rng: {"y": np.zeros(n, np.float64), "x": rng.random(n)},
        ("y", "x", "n"), lambda n: {"n": np.int32(n)}, check,
    )


KERNELS: tuple[CampaignKernel, ...] = (
    _triad(), _stencil(), _sor(),
    _gemm("sgemm_naive", "C = A B, one output per work-item from global memory", _GEMM_NOTE),
    _gemm("sgemm_tiled", f"C = A B with {TILE}x{TILE} tiles in local memory", _GEMM_NOTE),
    _histogram(), _reduce(), _transcendental(), _nbody(), _spmv(), _hash(), _horner(),
)


def opencl_options(has_fp64: bool) -> list[str]:
    """Return the build options of suite.cl on a device with or without double precision."""
    return [f"-DTILE={TILE}"] + (["-DUSE_FP64"] if has_fp64 else [])


def kernel_named(name: str) -> CampaignKernel:
    """Return the suite's kernel called `name`."""
    for kernel in KERNELS:
        if kernel.name == name:
            return kernel
    raise NotFound(f"no campaign kernel {name!r}; the suite has: {', '.join(k.name for k in KERNELS)}")
