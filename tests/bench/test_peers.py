"""Peers: likwid-bench driven through a fake program on PATH (as kerncraft tests it), the alternating rounds,
and the report; for real where likwid is installed."""

from __future__ import annotations

import os
import shutil
import stat

import pytest

from perfcast.bench import peers
from perfcast.bench.peers import PEERS, PeerFigure, PeerUnavailable, compare_with_peers, peers_markdown
from perfcast.devices.catalog import catalog

FAKE = """#!/bin/sh
# A stand-in for likwid-bench: prints what the real one prints, with rates that depend on the test.
echo "$@" >> "$(dirname "$0")/calls.txt"
case "$2" in
  stream*) echo "MByte/s:		2000.00" ;;
  *) echo "MFlops/s:		1000.00" ;;
esac
echo "Cycles per update:	0.5"
"""


@pytest.fixture
def fake_likwid(tmp_path, monkeypatch):
    program = tmp_path / "likwid-bench"
    program.write_text(FAKE)
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return tmp_path


def test_likwid_output_is_read_in_base_units(fake_likwid):
    assert peers._likwid("peakflops_sp_avx_fma", "N:24kB:2") == 1000e6
    assert peers._likwid("stream_avx", "N:32kB:2") == 2000e6
    assert (fake_likwid / "calls.txt").read_text().splitlines() == [
        "-t peakflops_sp_avx_fma -W N:24kB:2 -s 1", "-t stream_avx -W N:32kB:2 -s 1"]


@pytest.mark.skipif(shutil.which("gcc") is None, reason="perfcast's side needs gcc")
def test_likwid_figures_cover_peaks_levels_and_dram(fake_likwid):
    host = catalog()["core-i7-930"]  # 4 cores, 8 threads, L1/L2 per core, L3 shared
    figures = likwid = peers.likwid_figures(host, {"sse2", "avx", "avx2", "fma"})
    names = [f.name for f in figures]
    assert names[:3] == ["fp32 FMA peak, 8 threads", "fp64 FMA peak, 8 threads", "fp32 FMA peak, 1 thread"]
    assert [n.split()[0] for n in names[3:]] == ["L1", "L2", "L3", "DRAM"]
    assert [f.peer_kernel for f in likwid][:3] == [
        "peakflops_sp_avx_fma -W N:24kB:8", "peakflops_avx_fma -W N:24kB:8", "peakflops_sp_avx_fma -W S0:24kB:1"]
    assert likwid[3].peer_kernel == "stream_avx -W N:64kB:8"  # half of 4 x 32 KiB L1
    assert likwid[-1].theirs() == 2000e6


def test_isa_picks_the_likwid_kernels():
    from perfcast.kernels.native import VectorIsa

    assert peers._likwid_names(VectorIsa("AVX-512", 64, 32), set()) == (
        "peakflops_sp_avx512_fma", "peakflops_avx512_fma", "stream_avx512")
    assert peers._likwid_names(VectorIsa("AVX", 32, 16), {"avx"})[0] == "peakflops_sp_avx"
    with pytest.raises(PeerUnavailable, match="NEON"):
        peers._likwid_names(VectorIsa("NEON", 16, 32), set())


def test_a_missing_peer_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(PeerUnavailable, match="apt-get install likwid"):
        peers.likwid_figures(catalog()["core-i7-930"])


def test_rounds_alternate_and_the_report_names_the_kernels():
    calls: list[str] = []

    def side(name: str, value: float):
        return lambda: calls.append(name) or value

    figures = [PeerFigure("peak", "op/s", side("ours", 2e9), side("theirs", 1e9), "peakflops -W N:24kB:2")]
    results = compare_with_peers(figures, 3)
    assert calls == ["ours", "theirs", "theirs", "ours", "ours", "theirs"]
    assert results[0].ratio == 2.0
    text = peers_markdown("likwid", figures, results, 3)
    assert "## Against likwid" in text and "`peakflops -W N:24kB:2`" in text and "**2.000**" in text
    assert "one run of at least 1 s (likwid-bench `-s`" in text
    assert "likwid-bench `-s`" not in peers_markdown("clpeak", figures, results, 3)


def test_every_registered_peer_describes_itself():
    for name, (about, figures) in PEERS.items():
        assert about and callable(figures), name


@pytest.mark.skipif(shutil.which("likwid-bench") is None or shutil.which("gcc") is None,
                    reason="the real comparison needs likwid-bench and gcc")
def test_for_real_where_likwid_is_installed():
    from perfcast.bench.detect import detect_cpu

    host = detect_cpu(probe_bytes=16 * 2**20, repetitions=3)
    try:
        figures = peers.likwid_figures(host)
    except PeerUnavailable as error:
        pytest.skip(str(error))
    results = compare_with_peers(figures[:1], 1)  # one peak, one round: seconds
    assert 0.3 < results[0].ratio < 3


def test_the_cli_refuses_an_unknown_peer():
    from typer.testing import CliRunner

    from perfcast.cli import app

    result = CliRunner().invoke(app, ["validate", "bench", "--quick", "--against", "clpeak9"])
    assert result.exit_code == 2 and "unknown; peers: likwid" in " ".join(result.stderr.split())


FAKE_CLPEAK = """#!/bin/sh
# A stand-in for clpeak: writes the XML dump the real one writes (clpeak 1.1.2's layout), numbers made up.
echo "$@" >> "$(dirname "$0")/clpeak-calls.txt"
while [ $# -gt 0 ]; do if [ "$1" = "-f" ]; then out="$2"; fi; shift; done
cat > "$out" <<XML
<?xml version="1.0" encoding="utf-8"?>
<clpeak os="Linux x64">
  <platform name="Portable Computing Language">
    <device name="pthread-haswell" driver_version="3.1" compute_units="2" clock_frequency="2445" clock_frequency_unit="MHz">
      <global_memory_bandwidth unit="gbps">
        <float>5.9</float><float8>18.35</float8><float16>17.3</float16>
      </global_memory_bandwidth>
      <single_precision_compute unit="gflops"><float>2.0</float><float16>34.7</float16></single_precision_compute>
      <double_precision_compute unit="gflops"><double>1.97</double><double16>32.27</double16></double_precision_compute>
      <integer_compute unit="gops"><int>3.05</int><int16>54.15</int16></integer_compute>
      <transfer_bandwidth unit="gbps">
        <enqueuewritebuffer>3.14</enqueuewritebuffer>
        <enqueuewritebuffer_nonblocking>3.31</enqueuewritebuffer_nonblocking>
      </transfer_bandwidth>
      <kernel_launch_latency unit="us">12.44</kernel_launch_latency>
    </device>
  </platform>
</clpeak>
XML
"""


def test_clpeak_xml_is_read_once_per_round(tmp_path, monkeypatch):
    program = tmp_path / "clpeak"
    program.write_text(FAKE_CLPEAK)
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    runs = peers._ClpeakRuns(0, 0, ["--compute-sp", "--kernel-latency"])
    assert runs.value("global_memory_bandwidth", 1e9) == 18.35e9  # the best vector width
    assert runs.value("single_precision_compute", 1e9) == 34.7e9
    assert runs.value("transfer_bandwidth/enqueuewritebuffer_nonblocking", 1e9) == 3.31e9
    assert runs.value("kernel_launch_latency", 1.0) == 12.44
    assert len((tmp_path / "clpeak-calls.txt").read_text().splitlines()) == 1  # one run for a round's figures
    runs.value("single_precision_compute", 1e9)  # asked again: the next round runs clpeak again
    calls = (tmp_path / "clpeak-calls.txt").read_text().splitlines()
    assert len(calls) == 2 and calls[0].startswith("-p 0 -d 0 --compute-sp --kernel-latency --enable-xml-dump -f ")
    with pytest.raises(RuntimeError, match="no half_precision_compute"):
        runs.value("half_precision_compute", 1e9)


def test_clpeak_missing_is_said(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(PeerUnavailable, match="apt-get install clpeak"):
        peers.clpeak_figures(catalog()["core-i7-930"])


def test_the_l1_triad_per_core_and_cycle():
    from perfcast.bench.reference import Comparison

    l1 = Comparison("L1 triad bandwidth (32 KiB)", "B/s", (500e9, 520e9, 540e9), (450e9,))
    text = peers.l1_per_cycle([l1], clock=3.25e9, threads=2, vector_bytes=32)
    # 520e9 / (3.25e9 x 2) = 80 B/cycle of 96; 450e9 / 6.5e9 = 69.2.
    assert "perfcast 80.0 B/cycle (83% of the core's 96 B/cycle" in text and "the peer 69.2 B/cycle (72%)" in text
    assert peers.l1_per_cycle([], 3e9, 2, 32) == "" and peers.l1_per_cycle([l1], 0.0, 2, 32) == ""


@pytest.mark.parametrize(("text", "policy"), [
    ("always [madvise] never\n", "madvise"), ("[always] madvise never\n", "always"), ("always madvise never\n", None),
])
def test_the_huge_page_policy_is_the_bracketed_word(tmp_path, text, policy):
    path = tmp_path / "enabled"
    path.write_text(text)
    assert peers.huge_page_policy(path) == policy
    assert peers.huge_page_policy(tmp_path / "absent") is None


def test_the_page_note_appears_only_where_the_two_sides_get_different_pages():
    note = peers.huge_page_note("madvise", numpy_asks=True)
    assert "2 MiB pages against 4 KiB" in note and "byte counting is the same" in note
    assert peers.huge_page_note("always", True) == ""  # both sides get huge pages
    assert peers.huge_page_note("never", True) == ""  # neither does
    assert peers.huge_page_note("madvise", False) == ""  # numpy does not ask either
    assert peers.huge_page_note(None, True) == ""


def test_numpy_is_asked_whether_it_madvises_huge_pages():
    from numpy._core import multiarray

    before = multiarray._set_madvise_hugepage(False)
    try:
        assert peers.numpy_asks_for_huge_pages() is False
        multiarray._set_madvise_hugepage(True)
        assert peers.numpy_asks_for_huge_pages() is True
    finally:
        multiarray._set_madvise_hugepage(before)


def test_the_ratio_interval_resamples_the_rounds():
    """Steady rounds give a point; spread rounds a range around the ratio, the same each time it is asked."""
    from perfcast.bench.reference import Comparison

    steady = Comparison("peak", "op/s", (2.0, 2.0, 2.0), (1.0, 1.0, 1.0))
    assert steady.interval() == (2.0, 2.0)
    spread = Comparison("L1", "B/s", (240.0, 250.0, 370.0, 400.0, 310.0, 350.0, 240.0),
                        (300.0, 380.0, 300.0, 350.0, 320.0, 330.0, 280.0))
    low, high = spread.interval()
    assert low < spread.ratio < high and spread.interval() == (low, high)
    # Every draw's medians are medians of the rounds: the bounds lie between the extreme ratios of values.
    assert low >= 240 / 380 and high <= 400 / 280
    narrower = spread.interval(confidence=0.5)
    assert low <= narrower[0] <= narrower[1] <= high
    text = peers_markdown("likwid", [PeerFigure("L1", "B/s", lambda: 0.0, lambda: 0.0, "stream_avx")], [spread], 7)
    assert f"| {low:.3f}–{high:.3f} |" in text and "bootstrap" in text


@pytest.mark.skipif(__import__("shutil").which("gcc") is None, reason="the native benchmarks need gcc")
def test_the_cli_says_which_side_streams_through_huge_pages(fake_likwid, monkeypatch, tmp_path):
    import json

    from typer.testing import CliRunner

    from perfcast.cli import app

    monkeypatch.setattr(peers, "LIKWID_SECONDS", 0.01)  # each side runs this long a figure: 1 s by default
    monkeypatch.setattr(peers, "huge_page_policy", lambda: "madvise")
    monkeypatch.setattr(peers, "numpy_asks_for_huge_pages", lambda: True)
    report = tmp_path / "bench.md"
    result = CliRunner().invoke(app, ["validate", "bench", "--quick", "--rounds", "1", "--against", "likwid", "--json",
                                      "--markdown", str(report)])
    assert result.exit_code == 0, result.stderr
    notes = json.loads(result.stdout)["notes"]
    assert any(note.startswith("Pages: this kernel's transparent-huge-page policy is `madvise`") for note in notes)
    assert "2 MiB pages against 4 KiB ones" in report.read_text()
