"""The suite as one program among others: `campaign run --as-program` puts perfcast's own kernels through `-- CMD`.

The suite's own campaign (`campaign.run`) times each kernel with pyopencl events and profiles it with its own
driver. Here the same kernels become an ordinary OpenCL program (`python -m perfcast.campaign.oclgrind_driver`)
that the program path runs unmodified, as it runs Rodinia's: the launch log times every launch; the driver
again, at one and then two work-groups per kernel, is the profile command (so the scaling check of two sizes
runs, counts ∝ work-items, the suite's own premise: each kernel is profiled at a size whose work per work-item
is the timed run's); each kernel's species, bound to the run's sizes, and its f are given as a user would give
them (`--species`), so the boat hull is scored as well. The archive is a program archive; `campaign report`
scores it like any other, beside the suite's own archive if both are given.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from perfcast.campaign.program import ProgramOptions
from perfcast.campaign.program_species import KernelSpecies
from perfcast.errors import InputError
from perfcast.kernels.campaign import KERNELS, CampaignKernel
from perfcast.species.grammar import parse_species

__all__ = ["DRIVER", "suite_as_program", "suite_species"]

DRIVER = ("-m", "perfcast.campaign.oclgrind_driver")
PROFILE_GROUPS = (1, 2)  # work-groups per kernel in the two profile commands, as the suite's own profile


def _chosen(names: Sequence[str]) -> list[CampaignKernel]:
    """Return the suite's kernels named (all of them for none), in the suite's order; refuse an unknown name."""
    known = {kernel.name for kernel in KERNELS}
    unknown = sorted(set(names) - known)
    if unknown:
        raise InputError(f"--kernel {', '.join(unknown)}: not a kernel of the suite (they are: {', '.join(sorted(known))})")
    return [kernel for kernel in KERNELS if not names or kernel.name in names]


def suite_species(kernel: CampaignKernel, n: int) -> KernelSpecies:
    """Return a suite kernel's species bound for problem size `n`, its f and element size (B), as `--species` does."""
    return KernelSpecies(str(parse_species(kernel.species).bind(kernel.bind(n))), float(kernel.f),
                         float(kernel.element_bytes))


def suite_as_program(output: Path, quick: bool = False, names: Sequence[str] = (), repetitions: int = 10,
                     device_profile: Path | None = None, fresh: bool = False, record: str = "") -> ProgramOptions:
    """Return the program-campaign options that run the suite's kernels (all, or `names`) as an OpenCL program.

    The timed command launches each kernel `repetitions` times at the run's size (the full sizes, or the quick
    ones); the two profile commands launch it once at 1 and 2 work-groups of the size its Oclgrind profile uses.
    """
    if repetitions < 1:
        raise InputError(f"--repetitions {repetitions}: at least one launch per kernel")
    kernels = _chosen(names)
    sizes = {kernel.name: kernel.sizes[1] if quick else kernel.sizes[0] for kernel in kernels}
    timed = ",".join(f"{kernel.name}={sizes[kernel.name]}@full" for kernel in kernels)
    profiled = ",".join(f"{kernel.name}={kernel.profile_size(sizes[kernel.name])}" for kernel in kernels)
    python = sys.executable
    command = (python, *DRIVER, "0", timed, str(repetitions))
    profile_commands = tuple((python, *DRIVER, str(groups), profiled) for groups in PROFILE_GROUPS)
    species = {kernel.name: suite_species(kernel, sizes[kernel.name]) for kernel in kernels}
    record = record or shlex.join(["perfcast", "campaign", "run", "--as-program", "-o", str(output),
                                   *(["--quick"] if quick else []),
                                   *[part for name in names for part in ("--kernel", name)]])
    return ProgramOptions(command, output, profile_commands, device_profile=device_profile, fresh=fresh, quick=quick,
                          record=record, species=species)
