"""The core-bound ceiling of a projection between two CPUs (docs/models.md, §4, a core-bound ceiling between CPUs)."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfcast.campaign.archive import Archive
from perfcast.campaign.projection import ArchiveRun, CompiledCode, core_times, project_archive, project_profiles
from perfcast.cli import app
from perfcast.devices.catalog import get_device

ZEN3 = Path(__file__).parents[2] / "docs" / "validation" / "projection-pocl" / "zen3-avx2"


@pytest.fixture(scope="module")
def runs() -> dict[str, ArchiveRun]:
    """The committed Zen 3 campaigns: PoCL on both cores and held to one, three of each (2026-11-28)."""
    return {name: ArchiveRun.of(Archive.read(ZEN3 / f"pocl-{name}.zip"))
            for name in ("2core-zen3", "1core-zen3", "2core-zen3-b", "1core-zen3-b", "2core-zen3-c", "1core-zen3-c")}


def _kernel(run: ArchiveRun, name: str):
    return next(p for p in run.profiles.kernels if p.name == name)


def test_only_two_cpus_get_a_core_ceiling(runs):
    """Between GPUs, or a CPU and a GPU, §4 stands as written (the quantitative model's CPU terms are a CPU's)."""
    two = runs["2core-zen3"]
    profile = two.profiles.kernels[0]
    assert core_times(profile, get_device("h100-sxm5"), get_device("a100-80gb")) == (None, "")
    assert core_times(profile, two.device, get_device("h100-sxm5")) == (None, "")


def test_each_device_prices_the_kernel_at_its_own_rates(runs):
    two, one = runs["2core-zen3"], runs["1core-zen3"]
    times, note = core_times(_kernel(two, "stencil7"), two.device, one.device, two.compiled_code())
    # Bound by its integer divisions, priced at each device's measured rate: one core takes about twice as long.
    assert 1.6 < times[1] / times[0] < 2.2
    assert "core-bound ceiling" in note and one.device.name in note


def test_no_ceiling_without_the_compilers_lanes(runs):
    """Without the campaign's report of the lanes, §3 would price the triad's vector accesses lane by lane."""
    two, one = runs["2core-zen3"], runs["1core-zen3"]
    times, note = core_times(_kernel(two, "triad"), two.device, one.device, CompiledCode())
    assert times is None and "no compiler's report" in note


def test_no_ceiling_where_a_device_lacks_a_core_rate(runs):
    """A device profile older than the bench's CPU rates leaves a term unpriced on one side: no ceiling."""
    two, one = runs["2core-zen3"], runs["1core-zen3"]
    older = one.device.model_copy(update={"int_divisions": None})
    times, note = core_times(_kernel(two, "stencil7"), two.device, older, two.compiled_code())
    assert times is None and "integer-division rate" in note and older.name in note


def test_barriers_and_local_accesses_are_priced_on_both_devices_or_on_neither(runs):
    """§3.9's figures on one device alone would skew the ratio: a source benched with them, a target without."""
    from dataclasses import replace

    two, one = runs["2core-zen3"], runs["1core-zen3"]
    stencil = _kernel(two, "stencil7")
    crossing = replace(stencil, metrics={**stencil.metrics, "barriers": 1e9})
    measured = {"source": "measured", "tool": "test", "date": "2026-11-29"}
    benched = two.device.model_copy(update={"barriers": {"value": 1e8, **measured}})
    benched = type(benched).from_mapping(benched.model_dump(mode="json", exclude_none=True))
    plain, _ = core_times(stencil, two.device, one.device, two.compiled_code())
    one_sided, _ = core_times(crossing, benched, one.device, two.compiled_code())
    assert one_sided == pytest.approx(plain)  # the source's 10 s of crossings left out, as the target must
    both, _ = core_times(crossing, benched, benched, two.compiled_code())
    assert both[0] == pytest.approx(plain[0] + 10.0, rel=0.01)


def test_a_bad_incore_record_costs_the_ceiling_not_the_kernel(runs):
    two, one = runs["2core-zen3"], runs["1core-zen3"]
    code = two.compiled_code()
    broken = CompiledCode(code.vectorisation, {"kernels": {"nbody": {"cycles_per_item": "many"}}}, code.work_items)
    nbody = _kernel(two, "nbody")
    times, note = core_times(nbody, two.device, one.device, broken)
    assert times is None and note.startswith("no core-bound ceiling")
    projected, left_out = project_profiles(two.profiles, two.device, [one.device], kernels=[nbody],
                                           times={"nbody": two.timings["nbody"][0]}, code=broken)
    assert len(projected) == 1 and not left_out and projected[0].projection.source.perf_core is None


@pytest.mark.parametrize(("source", "target"), [("2core-zen3", "1core-zen3"), ("1core-zen3", "2core-zen3"),
                                                ("2core-zen3-b", "1core-zen3-b"), ("1core-zen3-b", "2core-zen3-b"),
                                                ("2core-zen3-c", "1core-zen3-c"), ("1core-zen3-c", "2core-zen3-c")])
def test_the_ceiling_beats_section_4_alone_on_every_recorded_pair(runs, source, target):
    """§4 as written scaled these kernels by bandwidth ratios; the ceiling scales them by their cores' costs."""
    with_ceiling = project_archive(runs[source], runs[target])
    alone, _ = project_profiles(runs[source].profiles, runs[source].device, [with_ceiling.target_device],
                                kernels=[runs[source].profiles.kernels[i] for i in range(12)],
                                times={k: t for k, (t, _) in runs[source].timings.items()},
                                measured={(k, with_ceiling.target_device.name): v
                                          for k, v in runs[target].timings.items()})
    assert len(with_ceiling.projections) == len(alone) == 12 and not with_ceiling.left_out
    mape = [sum(p.scored().ape for p in found) / 12 for found in (with_ceiling.projections, alone)]
    assert mape[0] < mape[1]
    assert all(p.projection.source.perf_core is not None for p in with_ceiling.projections)
    assert all(p.projection.source.perf_core is None for p in alone)


def test_the_first_pair_projects_within_the_issue_goal(runs):
    """Issue 26: MAPE <= 15 % over the 12 kernels both ways on the first pair (§4 alone: 16.0 % and 22.5 %)."""
    for source, target in (("2core-zen3", "1core-zen3"), ("1core-zen3", "2core-zen3")):
        result = project_archive(runs[source], runs[target])
        assert sum(p.scored().ape for p in result.projections) / len(result.projections) <= 0.15


def test_the_cli_and_the_report_say_where_the_ceiling_applies(tmp_path):
    runner = CliRunner()
    two, one = ZEN3 / "pocl-2core-zen3.zip", ZEN3 / "pocl-1core-zen3.zip"
    result = runner.invoke(app, ["project", str(two), "--to", str(one), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["kernels"]
    assert all(row["ceilings"]["source"]["perf_core"] > 0 for row in rows)
    assert all(any("core-bound ceiling" in note for note in row["notes"]) for row in rows)
    report = runner.invoke(app, ["campaign", "report", str(two), str(one), "-o", str(tmp_path)])
    assert report.exit_code == 0, report.output
    assert "core-bound ceiling on each device where it has one (12 of 12 kernels" in (tmp_path / "report.md").read_text()


def test_set_walk_rates_price_a_walk_on_both_devices_or_on_neither():
    """A level's set-walk rate (§3.1) counts only where both devices have one: one side's alone would skew the ratio."""
    two = ArchiveRun.of(Archive.read(ZEN3 / "pocl-2core-zen3-f.zip"))
    one = ArchiveRun.of(Archive.read(ZEN3 / "pocl-1core-zen3-f.zip"))
    sgemm = _kernel(two, "sgemm_naive")
    assert sgemm.metrics["set_walk_l3"] > 1e9  # its column of B: every load in the L1 set of the one before
    assert two.device.set_walk_loads and one.device.set_walk_loads
    walked, _ = core_times(sgemm, two.device, one.device, two.compiled_code())
    plain = [device.model_copy(update={"set_walk_loads": {}}) for device in (two.device, one.device)]
    random, _ = core_times(sgemm, *plain, two.compiled_code())
    one_sided, _ = core_times(sgemm, two.device, plain[1], two.compiled_code())
    assert one_sided == random  # the source's rate alone is not taken
    # With both, the walk is priced at the slower set-walk rates on each side: both times grow.
    assert walked[0] > 1.5 * random[0] and walked[1] > 1.5 * random[1]


def test_random_rates_by_working_set_count_only_where_both_cpus_have_them():
    """A level's rate at the size its loads gather from (§3.1) is read on both devices or on neither."""
    from dataclasses import replace

    two = ArchiveRun.of(Archive.read(ZEN3 / "pocl-2core-zen3-f.zip"))
    one = ArchiveRun.of(Archive.read(ZEN3 / "pocl-1core-zen3-f.zip"))
    spmv = _kernel(two, "spmv_csr")
    loads = spmv.metrics["scattered_l3"]
    spmv = replace(spmv, metrics={**spmv.metrics, "gather_loads_l3": loads, "gather_log2_l3": 24 * loads})  # 16 MiB

    def slowed(device):
        """The device with an L3 whose random loads over 16 MiB come at a tenth of its own rate."""
        own = device.random_loads["L3"]
        curve = {2**21: own, 2**24: own.model_copy(update={"value": own.value / 10})}
        return device.model_copy(update={"random_loads_by_size": {"L3": curve}})

    plain, _ = core_times(spmv, two.device, one.device, two.compiled_code())
    one_sided, _ = core_times(spmv, slowed(two.device), one.device, two.compiled_code())
    both, _ = core_times(spmv, slowed(two.device), slowed(one.device), two.compiled_code())
    assert one_sided == plain
    assert both[0] > 3 * plain[0] and both[1] > 3 * plain[1]
