"""Rescore committed campaign archives with a variant of the quantitative model on CPUs, side by side.

    python scripts/rescore_quantitative_variants.py VARIANT ARCHIVE.zip ...

VARIANT is one of:
  committed      the model as it is
  ldst-local     before §3.6: T_ldst of a CPU always the bench's local-memory kernel, global accesses too
  ldst-l1        T_ldst of a CPU device from its L1 bandwidth / 4 B, never the bench's local-memory kernel
  ldst-lanes     the same, times the kernel's lanes / the SIMD lanes for 4-byte words (where the report gives lanes)
  elem-scalar    before §3.6's calls: an elementary call costs the measured scalar call in a vectorised kernel too
  instr-max      E_instr = c_op / max(c_op, c_ldst, c_other): the instruction classes issued in parallel
  barrier-issue  §3.3's issue floor also for kernels that use local memory (so barriers), whatever their lanes
  incore-items   §3.5's in-core cycles also of the loops over the work-items (blocks run once a work-item or less)
  incore-barriers  §3.5's in-core floor also for scalar kernels that use local memory (barriers: PoCL's regions)
  local-l1-vector  the same where the compiler's report gives the kernel a vector loop (lanes > 1); a scalar
                 kernel's local accesses keep the bench's local-memory rate
  local-l1       §3.6 with local accesses priced as global ones (at L1 in the kernel's vectors), not at the bench's
                 local-memory rate
  unpacked       before 2026-11-27 afternoon: a kernel the report left scalar keeps 1 lane whatever its compiled code
                 packs (no `packed_lanes`), and a kernel's builds of two precisions have no reading of their own
                 (the archive's readings keep the rule of that afternoon for loops over vectors of work-items)
  caches=FILE[,FILE...]  the archive's device with its L1, L2 and L3 bandwidths taken from FILE, a device profile
                 of the same machine whose cache levels were measured (perfcast bench on PoCL measures them since
                 2026-11-27; profiles before carry estimates from the ISA and the clock); with several files, each
                 device takes the one of its compute units

  touches=FILE   the archive's device with the first-touch rate (§3.7) of FILE (scripts/first_touch_figure.py) where
                 it has none; the archive's profile must count first-touched pages (profiled since 2026-11-27)
  no-touches     before §3.7: no first-touched page is priced
  launches=FILE  the archive's device with the empty launches' and work-groups' rates (§3.8) of FILE, a device
                 profile measured since 2026-11-29 on the same kind of machine, where it has none
  no-launches    before §3.8: no launch nor work-group is priced
  regions=FILE   the archive's device with the barrier crossings', their live values' and the independent local
                 accesses' rates (§3.9) of FILE, a device profile measured since 2026-11-29 on the same kind of
                 machine, each where it has none; the archive's profile must count barriers and their values
                 (scripts/recount_issued.py --metric barriers, then --metric barrier_values)
  no-regions     before §3.9: no barrier crossing priced, local accesses at the shared level's (one chain's) rate
  no-values      §3.9 without the values kept live across barriers: each crossing at the bench's one-value rate
  no-reuse       before the reuse distances (docs/campaign-programs.md): a program's bytes per level and scattered
                 loads as its last profiled size had them, scaled to the timed work-items
  issue-alu      §3.3's issue floor at the instructions a CPU core's pipes issue (the profile's `inst_alu`: every
                 counted one less address arithmetic, free casts, loads and stores and fused branches), not at every
                 instruction Oclgrind counted; scripts/recount_issued.py gives older archives that metric
  device=FILE    the archive's device profile replaced by FILE's, every figure (to score one set of times against
                 the device profile another set was scored with; touches=FILE then adds the first-touch rate)
  reread-gcc     a C campaign's record of gcc's code read again by this perfcast: this checkout's suite.c, its
                 flags and the gcc here, gcov's counts at the archive's sizes; so only on the kind of machine, and
                 with the compiler, the archive was timed with (the script stops where the archive's compiler is not
                 this one); archives before 2026-11-29 have no reading of the whole work-item
  no-whole       before 2026-11-29: no C kernel's whole work-item read from gcc's code stands for its core (§3.5);
                 §3's compute roof, the issue floor and the divisions' time as before

Variants join with "+" (at most one ldst-* part; `committed` alone): `ldst-local+elem-scalar` is the model
before §3.6.

Each archive is scored by `perfcast campaign report` in a child process with the variant applied; the script
prints each archive's quantitative MAPE, then the mean over the archives and, over every kernel group of every
archive, how many the model predicts within a factor 2 and the median predicted / measured. The experiments of
docs/validation/campaign-pocl/README.md ("What PoCL's compiled code says about the misses") ran this way.
Nothing here changes perfcast: the variants exist only in the child process.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

VARIANTS = ("committed", "ldst-local", "ldst-l1", "ldst-lanes", "elem-scalar", "instr-max", "barrier-issue", "unpacked",
            "incore-items", "incore-barriers", "local-l1", "local-l1-vector", "caches", "touches", "no-touches", "device",
            "no-reuse", "issue-alu", "reread-gcc", "no-whole", "launches", "no-launches", "regions", "no-regions",
            "no-values")
_SECONDS = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


def _on_read(change: Callable[[Any, Path], Any]) -> None:
    """Patch the archive reader, in this process only: every archive read is `change(archive, path)` instead."""
    import perfcast.campaign.archive as archive

    read = archive.Archive.read.__func__  # type: ignore[attr-defined]

    def changed_read(cls, path):  # type: ignore[no-untyped-def]
        return change(read(cls, path), path)

    archive.Archive.read = classmethod(changed_read)  # type: ignore[method-assign, assignment]


def _with_device(found: Any, edit: Callable[[dict[str, Any]], None]) -> Any:
    """Return an archive read whose device profile `edit` changed in place (as a mapping)."""
    import yaml

    device = yaml.safe_load(found.device_yaml)
    edit(device)
    return dataclasses.replace(found, device_yaml=yaml.safe_dump(device, sort_keys=False))


def _measured_caches(sources: Sequence[Path]) -> None:
    """Make each device take its cache bandwidths from `sources` (see _on_read).

    A device takes them from the source of its compute units (a 2-core profile's from a 2-core one), or from the
    only source given.
    """
    import yaml

    measured = {}
    for source in sources:
        data = yaml.safe_load(source.read_text())
        measured[data.get("compute_units")] = {level["level"]: level["bandwidth"] for level in data["memory"]
                                               if level["level"] in ("L1", "L2", "L3") and level.get("bandwidth")}

    def with_caches(found: Any, path: Path) -> Any:
        def edit(device: dict[str, Any]) -> None:
            levels = measured.get(device.get("compute_units")) or (next(iter(measured.values()))
                                                                     if len(measured) == 1 else None)
            if levels is None:
                sys.exit(f"caches: no profile given for {device.get('compute_units')} compute units ({path})")
            for level in device.get("memory", []):
                if level["level"] in levels:
                    level["bandwidth"] = levels[level["level"]]
        return _with_device(found, edit)

    _on_read(with_caches)


def _whole_device(source: Path) -> None:
    """Make every archive's device profile `source`'s (see _on_read)."""
    text = source.read_text()
    _on_read(lambda found, path: dataclasses.replace(found, device_yaml=text))


def _figures_where_missing(source: Path, part: str, names: Sequence[str], each: bool = False) -> None:
    """Make a device without the figure `names[0]` take `source`'s figures `names` (see _on_read).

    The first name must be in `source` (else the variant `part` stops with why); the others go with it where given.
    `each`: every figure the device lacks is taken on its own (a device measured before the last of them).
    """
    import yaml

    data = yaml.safe_load(source.read_text()) or {}
    figures = {name: data[name] for name in names if data.get(name) is not None}
    if names[0] not in figures:
        sys.exit(f"{part}: {source} holds no {names[0]} figure")

    def edit(device: dict[str, Any]) -> None:
        if each:
            device.update({name: figure for name, figure in figures.items() if device.get(name) is None})
        elif device.get(names[0]) is None:
            device.update(figures)

    _on_read(lambda found, path: _with_device(found, edit))


def _without_reuse() -> None:
    """Make each unextrapolated_NAME metric of every profile NAME again (see _on_read)."""
    import yaml

    def without_reuse(found: Any, path: Path) -> Any:
        if found.profile_yaml is None:
            return found
        profile = yaml.safe_load(found.profile_yaml)
        for kernel in profile.get("kernels", []):
            metrics = kernel.get("metrics", {})
            for name in [name for name in metrics if name.startswith("unextrapolated_")]:
                metrics[name.removeprefix("unextrapolated_")] = metrics.pop(name)
        return dataclasses.replace(found, profile_yaml=yaml.safe_dump(profile, sort_keys=False))

    _on_read(without_reuse)


def _apply(variant: str) -> None:
    """Patch perfcast, in this process only, so that `campaign report` scores with `variant` (parts joined by +)."""
    import perfcast.campaign.score as score
    import perfcast.models.quantitative as quantitative

    parts = {part.split("=")[0] for part in variant.split("+")}
    # The files the variant's NAME=FILE parts give, by name.
    files = dict(part.split("=", 1) for part in variant.split("+") if "=" in part)
    # device= first: caches=, touches=, launches= and regions= then patch the device it returns.
    if "device" in files:
        _whole_device(Path(files["device"]))
    if "caches" in files:
        _measured_caches([Path(name) for name in files["caches"].split(",")])
    if "touches" in files:
        _figures_where_missing(Path(files["touches"]), "touches", ("first_touches",))
    if "launches" in files:
        _figures_where_missing(Path(files["launches"]), "launches", ("launches", "work_groups"))
    if "regions" in files:
        _figures_where_missing(Path(files["regions"]), "regions", ("barriers", "local_loads", "barrier_values"),
                               each=True)
    dropped = (("barriers", "local_loads", "barrier_values") if "no-regions" in parts
               else ("barrier_values",) if "no-values" in parts else ())
    if dropped:
        _on_read(lambda found, path: _with_device(found, lambda device: [device.pop(name, None) for name in dropped]))
    if "no-launches" in parts:
        score.launch_term = lambda inputs, launched, work_groups: (None, None)
    if "no-reuse" in parts:
        _without_reuse()
    if "issue-alu" in parts:
        # The floor reads inst_warp x 32: give it the issued instructions in that place (a profile without them keeps
        # every counted instruction).
        floor_of = score.scalar_issue_floor

        def scalar_issue_floor(profile, inputs):  # type: ignore[no-untyped-def]
            issued = profile.metrics.get("inst_alu")
            if issued is not None:
                profile = dataclasses.replace(profile, metrics={**profile.metrics, "inst_warp": issued / 32})
            return floor_of(profile, inputs)

        score.scalar_issue_floor = scalar_issue_floor
    if "no-touches" in parts:
        score.first_touch_term = lambda profile, inputs: (None, None)
    if "reread-gcc" in parts:
        _reread_gcc()
    if "no-whole" in parts:
        score.kernel_item_cycles = lambda name, incore, work_items, precision=None: None
    if "instr-max" in parts:
        source = inspect.getsource(quantitative.predict)
        changed = source.replace("e_instr = c_op / (c_op + c_ldst + c_other)",
                                 "e_instr = c_op / max(c_op, c_ldst, c_other)")
        if changed == source:
            sys.exit("instr-max: the line it changes is no longer in perfcast.models.quantitative.predict")
        exec(compile(changed, quantitative.__file__, "exec"), quantitative.__dict__)  # noqa: S102 - an experiment
        score.predict = quantitative.predict
    if "elem-scalar" in parts:
        score.vector_call_cost = lambda cost, lanes, simd_lanes: cost
    if "unpacked" in parts:
        score.packed_lanes = lambda name, incore, precision=None: None
        entry_of = score.incore_entry
        score.incore_entry = lambda name, incore, precision=None: entry_of(name, incore, None)
    if parts & {"local-l1", "local-l1-vector"}:
        # One wrapper for both: without a local rate cpu_ldst_rate prices local accesses as global ones.
        rate, everywhere = score.cpu_ldst_rate, "local-l1" in parts
        score.cpu_ldst_rate = lambda ldst, local, lanes, simd, accesses, local_rate: rate(
            ldst, local, lanes, simd, accesses, None if everywhere or lanes > 1 else local_rate)
    original = score.predict_profiled

    def predict_profiled(profile, inputs, lanes=None, incore_cycles=None,  # type: ignore[no-untyped-def]
                         incore_vectors=False, packed=False, *more, **named):
        device = inputs.device
        ldst = parts & {"ldst-local", "ldst-l1", "ldst-lanes"}
        if ldst and device.kind == "cpu":
            # Without the L1's bandwidth, predict_profiled keeps the T_ldst it is given (§3.6 does not apply).
            inputs = dataclasses.replace(inputs, l1_bandwidth=None)
        if ldst & {"ldst-l1", "ldst-lanes"} and device.kind == "cpu":
            rate = device.memory_level("L1").bandwidth.value / 4
            width = (device.simd_width_bits or 512) // 32
            if "ldst-lanes" in ldst:
                rate *= min(lanes or width, width) / width
            inputs = dataclasses.replace(inputs, rates=dataclasses.replace(inputs.rates, t_ldst=rate))
        if "incore-barriers" in parts and lanes == 1:
            incore_vectors = True  # predict_profiled's gate then passes a kernel with barriers too
        # Arguments predict_profiled gained after this script (masked, laid_out, ...) pass through as given.
        return original(profile, inputs, lanes, incore_cycles, incore_vectors, packed, *more, **named)

    score.predict_profiled = predict_profiled
    if "incore-items" in parts:
        cycles_of = score.kernel_incore_cycles

        def kernel_incore_cycles(name, incore, work_items, instructions=None,  # type: ignore[no-untyped-def]
                                 precision=None):
            entry = score.incore_entry(name, incore, precision)
            if entry is not None and entry.get("loops"):
                every = sum(loop["executions_per_item"] / (loop["unroll"] * loop.get("lanes", 1))
                            * loop["cycles"] / loop["copies"]
                            for loop in entry["loops"] if loop.get("executions_per_item"))
                incore = {**incore, "kernels": {**incore["kernels"], name: {**entry, "cycles_per_item": every}},
                          "precisions": {}}
            return cycles_of(name, incore, work_items, instructions, precision)

        score.kernel_incore_cycles = kernel_incore_cycles
    if "barrier-issue" in parts:
        # Only the issue floor sees the kernel as scalar: §3.6 keeps the lanes the compiler reported.
        terms = score.cpu_terms

        def cpu_terms(profile, inputs, lanes=None):  # type: ignore[no-untyped-def]
            scalar = lanes is not None and profile.metrics.get("local_ldst", 0) > 0
            return terms(profile, inputs, 1 if scalar else lanes)

        score.cpu_terms = cpu_terms


def _reread_gcc() -> None:
    """Make each C campaign's `incore` record this perfcast's reading of gcc's code at its sizes (see _on_read)."""
    from perfcast.campaign.run import CAMPAIGN_BACKENDS
    from perfcast.kernels.campaign import KERNELS

    def reread(found: Any, path: Path) -> Any:
        if found.manifest.get("backend") != "cpu" or "incore" not in found.manifest:
            return found
        timer = CAMPAIGN_BACKENDS["cpu"][1](None)
        recorded = (found.manifest.get("environment") or {}).get("compiler")
        here = timer.environment().get("compiler")
        if recorded and here and recorded != here:
            sys.exit(f"reread-gcc: {path} was compiled by {recorded!r}, this machine's is {here!r}")
        kernels = [k for k in KERNELS if k.name in found.manifest["kernels"]]
        sizes = {k.name: found.manifest["kernels"][k.name]["n"] for k in kernels}
        return dataclasses.replace(found, manifest={**found.manifest, "incore": timer.incore(kernels, sizes)})

    _on_read(reread)


def _seconds(text: str) -> float:
    value, unit = text.split()
    return float(value) * _SECONDS[unit]


def _score(variant: str, archive: Path) -> tuple[float | None, list[float]]:
    """Return an archive's quantitative MAPE (%) and each kernel group's predicted / measured under `variant`."""
    with tempfile.TemporaryDirectory() as folder:
        run = subprocess.run([sys.executable, __file__, "--child", variant, "campaign", "report", str(archive), "-o",
                              folder], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{archive}: report failed: {run.stderr.strip()[-300:]}")
            return None, []
        report = (Path(folder) / "report.md").read_text()
    found = re.search(r"^\| quantitative \| \d+ \| ([\d.]+)% \|", report, re.M)
    ratios = []
    for line in report.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 9 and cells[0] not in ("kernel", "---"):
            try:
                ratios.append(_seconds(cells[7]) / _seconds(cells[1]))
            except (KeyError, ValueError):
                continue
    return (float(found[1]) if found else None), ratios


def main() -> None:
    """Score every archive named with the variant named, or (as a child) run perfcast with the variant applied."""
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        _apply(sys.argv[2])
        from perfcast.cli import main as perfcast_main

        sys.argv = ["perfcast", *sys.argv[3:]]
        perfcast_main()
        return
    parts = [part.split("=")[0] for part in sys.argv[1].split("+")] if len(sys.argv) >= 3 else []
    ldst = [part for part in parts if part.startswith("ldst-")]
    if (not parts or not set(parts) <= set(VARIANTS) or len(set(parts)) != len(parts) or len(ldst) > 1
            or ("committed" in parts and len(parts) > 1)):
        sys.exit(__doc__)
    for part in sys.argv[1].split("+"):  # caches=, touches=, ..., device=: their files, said before any child runs
        name, _, files = part.partition("=")
        for path in filter(None, files.split(",")):
            if not Path(path).is_file():
                sys.exit(f"{name}: {path} is not a file")
    variant, mapes, ratios = sys.argv[1], [], []
    for archive in map(Path, sys.argv[2:]):
        mape, group_ratios = _score(variant, archive)
        ratios += group_ratios
        if mape is not None:
            mapes.append(mape)
            print(f"{archive.stem:32s} quantitative MAPE {mape:6.1f} %")
    if mapes:
        print(f"{variant}: mean MAPE {statistics.mean(mapes):.1f} % over {len(mapes)} archives")
    if ratios:
        within = sum(1 for r in ratios if abs(math.log(r)) < math.log(2))
        print(f"{variant}: {within} of {len(ratios)} kernel groups within 2x; median predicted / measured "
              f"{statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
