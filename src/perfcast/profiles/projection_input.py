"""A profiled kernel as the projection (spec §4) reads it: FP instructions by kind, hits per level, shared memory.

Hits per level are derived from the bytes each level carries: hits in L1 = L1 bytes - L2 bytes, hits in L2 =
L2 bytes - DRAM bytes, hits in DRAM = DRAM bytes. Where a level below carries more than the one above asked
for (L2 also serves writes back and the texture path), the difference is set to 0 and said. Shared memory:
useful bytes = (wavefronts - bank conflicts) x 128 B, efficiency = (wavefronts - conflicts) / wavefronts.
FP issue share: the FP instructions over the thread instructions issued (warp instructions x active threads).
An int32 kernel is read by its integer instructions and has no FP issue share (`_integer_counts`).
"""

from __future__ import annotations

from perfcast.models.projection import SHARED_BYTES_PER_CLOCK, ProjectedKernel
from perfcast.profiles.profile import KernelProfile, ProfileError

__all__ = ["INT32_KINDS", "projected_kernel"]

INT32_KINDS = ("fma_int32", "add_int32", "mul_int32")  # a profile's int32 instructions split by kind, where it has them


def _integer_counts(profile: KernelProfile, notes: list[str]) -> tuple[float, float, float]:
    """Return an integer kernel's (multiply-adds, adds, multiplies) as §4 reads them: instructions, not ops.

    Where the profile splits its int32 instructions by kind (`fma_int32`, `add_int32`, `mul_int32`) they are
    taken as they are; Oclgrind and Nsight Compute give one count of integer instructions (`int`), which is
    taken as ADD/MUL instructions, priced at the device's int32 ADD/MUL rate, and said in the notes.
    """
    m = profile.metrics
    if all(name in m for name in INT32_KINDS):
        n_fma, n_add, n_mul = (m[name] for name in INT32_KINDS)
        return n_fma, n_add, n_mul
    if "int" not in m:
        raise ProfileError(f"kernel {profile.name!r} has no integer instruction count (int): nothing to project "
                           "an int32 kernel by")
    notes.append("integer instructions (the profile's `int`, not split by kind) taken as int32 ADD/MUL, at the "
                 "device's int32 ADD/MUL rate")
    return 0.0, m["int"], 0.0


def projected_kernel(profile: KernelProfile, precision: str = "fp32", *, time: float | None = None,
                     active_threads: float | None = None, warp_size: int = 32) -> tuple[ProjectedKernel, list[str]]:
    """Return the §4 view of a profiled kernel (FLOP of `precision`, or int32 ops) and notes on what was assumed.

    `time` (s, all launches) defaults to the profile's duration; `active_threads` to the profile's active
    threads per warp instruction, else a full warp (said in the notes).
    """
    m = profile.metrics
    notes: list[str] = []
    if precision == "int32":
        n_fma, n_add, n_mul = _integer_counts(profile, notes)
    else:
        names = [f"fma_{precision}", f"add_{precision}", f"mul_{precision}"]
        missing = [n for n in names if n not in m]
        if missing:
            raise ProfileError(f"kernel {profile.name!r} lacks {', '.join(missing)}: profile with `perfcast profile "
                               "--tool ncu`, which asks for the FP instructions by kind")
        n_fma, n_add, n_mul = (m[n] for n in names)
    flop = 2 * n_fma + n_add + n_mul
    if flop == 0:
        what = "integer instruction" if precision == "int32" else f"{precision} FMA, ADD or MUL"
        raise ProfileError(f"kernel {profile.name!r} executes no {what}: nothing to project")
    time = time if time is not None else profile.duration
    if time is None:
        raise ProfileError(f"kernel {profile.name!r} has no measured duration; give the time measured on the source")
    if active_threads is None:
        if "threads_per_inst" in m:
            active_threads = m["threads_per_inst"]
        else:
            active_threads = float(warp_size)
            notes.append("no active-threads metric: full warps assumed")
    per_level = profile.level_bytes()
    l1, l2, dram = per_level.get("L1"), per_level.get("L2"), per_level.get("DRAM")
    if dram is not None and "dram_bytes" not in m:
        notes.append("DRAM bytes from the 32-byte sectors of the §3 metrics")
    hits: dict[str, float] = {}
    below = 0.0
    for level, carried in (("DRAM", dram), ("L2", l2), ("L1", l1)):
        if carried is None:
            notes.append(f"no {level} byte count: the level is left out")
            continue
        hit = carried - below
        if hit < 0:
            notes.append(f"{level} carries {carried:.4g} B, less than the {below:.4g} B below it: its hits set to 0")
            hit = 0.0
        hits[level] = hit
        below = max(below, carried)
    wavefronts = m.get("shared_wavefronts_ld", 0.0) + m.get("shared_wavefronts_st", 0.0)
    conflicts = m.get("shared_conflicts_ld", 0.0) + m.get("shared_conflicts_st", 0.0)
    shared_bytes, efficiency = 0.0, 1.0
    if wavefronts > 0:
        useful = max(wavefronts - conflicts, 0.0)
        shared_bytes = useful * SHARED_BYTES_PER_CLOCK
        efficiency = useful / wavefronts
    share = None
    if precision == "int32":
        pass  # phi is the FP instructions' share; the GPUs' issue shares are of their FP32 peaks
    elif m.get("inst_warp", 0) > 0 and active_threads > 0:  # no active threads: ProjectedKernel refuses it below
        # phi: FP instructions (thread level) over the thread instructions issued (warp instructions at the
        # active threads each), the share of the issues the FP ones took.
        share = (n_fma + n_add + n_mul) / (active_threads * m["inst_warp"])
        if share > 1 + 1e-6:
            notes.append(f"FP instructions ({n_fma + n_add + n_mul:.4g}) exceed the instructions issued "
                         f"({active_threads:.3g} x {m['inst_warp']:.4g}): the FP issue share is left out")
            share = None
        else:
            share = min(share, 1.0)
    else:
        notes.append("no warp instructions issued (inst_warp): the FP issue share is unknown")
    try:
        kernel = ProjectedKernel(n_fma, n_add, n_mul, active_threads, hits, shared_bytes, efficiency, flop, time,
                                 warp_size, share)
    except ValueError as error:
        raise ProfileError(f"kernel {profile.name!r}: {error}") from None
    return kernel, notes
