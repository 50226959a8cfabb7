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
        "-t peakflops_sp_avx_fma -W N:24kB:2", "-t stream_avx -W N:32kB:2"]


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
