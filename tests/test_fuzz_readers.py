"""Every reader of a file users hand perfcast, fed random and mutated inputs: a value or a PerfcastError, in time.

Each reader starts from a real file of its format (a catalog device, a recorded profile of each tool, a campaign
archive, KernelTuner and T4 caches, a launch log, a tuning store, a corpus manifest) and hypothesis mutates it:
bytes flipped, cut, inserted, lines repeated or dropped, numbers made negative, huge or not numbers. Anything
but a return or a PerfcastError (an InputError names the file and the problem) fails, and so does an input that
takes longer than the deadline. Cases found are kept in FOUND, so that they stay tested.
"""

from __future__ import annotations

import gzip
import json
import re
import zipfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from perfcast.errors import PerfcastError

ROOT = Path(__file__).parents[1]
DATA = ROOT / "tests" / "data"
FUZZ = settings(max_examples=150, deadline=timedelta(seconds=5), derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# Mutations of text: each an operation at a position drawn by hypothesis.
_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


@st.composite
def mutated(draw: st.DrawFn, seed: str) -> str:
    """Return `seed` with one to three mutations."""
    text = seed
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["cut", "flip", "insert", "repeat_line", "drop_line", "number", "dup_key"]))
        lines = text.splitlines(keepends=True)
        at = draw(st.integers(0, max(len(text) - 1, 0)))
        if kind == "cut":
            text = text[:at]
        elif kind == "flip" and text:
            text = text[:at] + chr((ord(text[at]) + draw(st.integers(1, 120))) % 0x250) + text[at + 1:]
        elif kind == "insert":
            text = text[:at] + draw(st.text(max_size=12)) + text[at:]
        elif kind == "repeat_line" and lines:
            line = draw(st.integers(0, len(lines) - 1))
            text = "".join(lines[:line + 1] + [lines[line]] * draw(st.integers(1, 3)) + lines[line + 1:])
        elif kind == "drop_line" and lines:
            line = draw(st.integers(0, len(lines) - 1))
            text = "".join(lines[:line] + lines[line + 1:])
        elif kind == "number":
            numbers = list(_NUMBER.finditer(text))
            if numbers:
                match = numbers[draw(st.integers(0, len(numbers) - 1))]
                new = draw(st.sampled_from(["-1", "-0.5", "0", "nan", "inf", "1e308", "9" * 5000, "x", "", "1e20"]))
                text = text[:match.start()] + new + text[match.end():]
        elif kind == "dup_key" and lines:
            line = draw(st.integers(0, len(lines) - 1))
            text = "".join(lines[:line + 1] + [lines[line]] + lines[line + 1:])
    return text


def _survives(read: Callable[[], Any]) -> None:
    """Run a reader: a return or a PerfcastError is fine; anything else fails the test."""
    try:
        read()
    except PerfcastError:
        pass


def _file(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


# --- YAML files: devices, applications, perfcast profiles ----------------------------------------------------------

DEVICE = (ROOT / "src" / "perfcast" / "devices" / "catalog" / "gtx470.yaml").read_text()
APPLICATION = (ROOT / "examples" / "fast-focus.yaml").read_text()
PROFILE_YAML = (ROOT / "docs" / "validation" / "gpu-h200" / "special-h200.yaml").read_text()


@FUZZ
@given(text=mutated(DEVICE))
@example(text="a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b, *b]\n")
@example(text="compute_units: " + "9" * 5000 + "\n")
def test_device_files(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    from perfcast.devices.catalog import load_device_file

    path = _file(tmp_path_factory.mktemp("d"), "d.yaml", text)
    _survives(lambda: load_device_file(path))


@FUZZ
@given(text=mutated(APPLICATION))
def test_application_files(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    from perfcast.species.application_file import load_application

    path = _file(tmp_path_factory.mktemp("a"), "a.yaml", text)
    _survives(lambda: load_application(path))


@FUZZ
@given(text=st.one_of(mutated("1024x1024|neighb(7x7) ^ 1024x1024|element -> 1024x1024|element"),
                      mutated("AxB|tile(1xB) -> A|element"), st.text(max_size=60)))
def test_species(text: str) -> None:
    from perfcast.species.grammar import parse_species

    _survives(lambda: parse_species(text).bind({"A": 64, "B": 32}))


# --- profiler outputs, each tool -----------------------------------------------------------------------------------

PROFILES = {
    "ncu-raw": (DATA / "profiles" / "ncu-raw-constructed.csv").read_text(),
    "ncu-details": (DATA / "profiles" / "ncu-details-a100-bert.csv").read_text()[:20_000],
    "nvprof": (DATA / "profiles" / "nvprof-metrics-constructed.csv").read_text(),
    "oclgrind": (DATA / "profiles" / "oclgrind-opencl_program-256.txt").read_text(),
    "perfcast": PROFILE_YAML,
}


@pytest.mark.parametrize("kind", sorted(PROFILES))
def test_profiles(tmp_path_factory: pytest.TempPathFactory, kind: str) -> None:
    from perfcast.profiles import read_profile

    @FUZZ
    @given(text=mutated(PROFILES[kind]))
    def run(text: str) -> None:
        path = _file(tmp_path_factory.mktemp("p"), "p.txt", text)
        _survives(lambda: read_profile(path))

    run()


@FUZZ
@given(data=st.binary(max_size=400))
def test_profiles_of_any_bytes(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    from perfcast.profiles import read_profile

    path = _file(tmp_path_factory.mktemp("b"), "p.bin", data)
    _survives(lambda: read_profile(path))


# --- campaign archives ---------------------------------------------------------------------------------------------

ARCHIVE = ROOT / "docs" / "validation" / "gpu-h200" / "campaign-h200.zip"
MANIFEST = zipfile.ZipFile(ARCHIVE).read("manifest.json").decode()


@FUZZ
@given(text=mutated(MANIFEST))
def test_campaign_manifests_are_read_and_scored(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    from perfcast.campaign.archive import Archive
    from perfcast.campaign.report import score_archive

    path = tmp_path_factory.mktemp("z") / "a.zip"
    with zipfile.ZipFile(ARCHIVE) as source, zipfile.ZipFile(path, "w") as target:
        for name in source.namelist():
            target.writestr(name, text if name == "manifest.json" else source.read(name))
    _survives(lambda: score_archive(Archive.read(path)))


@FUZZ
@given(cut=st.integers(0, ARCHIVE.stat().st_size), flips=st.lists(st.integers(0, ARCHIVE.stat().st_size - 1),
                                                                   max_size=4))
def test_campaign_archive_bytes(tmp_path_factory: pytest.TempPathFactory, cut: int, flips: list[int]) -> None:
    from perfcast.campaign.archive import Archive

    data = bytearray(ARCHIVE.read_bytes())
    for at in flips:
        data[at] ^= 0x5A
    path = _file(tmp_path_factory.mktemp("y"), "a.zip", bytes(data[:cut] if cut else data))
    _survives(lambda: Archive.read(path))


# --- tuning: KernelTuner caches, T4 files, stores ------------------------------------------------------------------

CACHES = {
    "kerneltuner": (DATA / "tune" / "convolution-a100-subset.json").read_text()[:12_000],
    "kerneltuner-1.5": (DATA / "tune" / "kerneltuner-1.5-h200-subset.json").read_text(),
    "t4": (DATA / "tune" / "convolution-a100-subset_T4.json").read_text()[:12_000],
}


@pytest.mark.parametrize("kind", sorted(CACHES))
def test_recorded_spaces(tmp_path_factory: pytest.TempPathFactory, kind: str) -> None:
    from perfcast.tune.recorded import read_recorded
    from perfcast.tune.replay import replay

    @FUZZ
    @given(text=mutated(CACHES[kind]), zipped=st.booleans())
    def run(text: str, zipped: bool) -> None:
        raw = text.encode("utf-8", errors="surrogatepass")
        path = _file(tmp_path_factory.mktemp("c"), "c.json.gz" if zipped else "c.json",
                     gzip.compress(raw) if zipped else raw)

        def read_and_replay() -> None:
            space = read_recorded(path)
            replay(space, ["random"], 1, budget=5)

        _survives(read_and_replay)

    run()


@FUZZ
@given(cut=st.integers(0, 20_000), flips=st.lists(st.integers(0, 20_000), max_size=6))
def test_tuning_stores(tmp_path_factory: pytest.TempPathFactory, cut: int, flips: list[int]) -> None:
    from perfcast.tune.store import Measurement, ResultsStore

    folder = tmp_path_factory.mktemp("s")
    store = ResultsStore(folder / "r.sqlite")
    run, _ = store.open_run("k", "hierarchical", {"device": "d"}, {"n": 1}, 2)
    store.record(run, Measurement("1-work-item", {"a": 1}, {"n": 1}, 1.0, 0.1, (1.0, 1.1), 5.0))
    store.close()
    data = bytearray((folder / "r.sqlite").read_bytes())
    for at in flips:
        if at < len(data):
            data[at] ^= 0xA5
    (folder / "r.sqlite").write_bytes(bytes(data[:cut] if 0 < cut < len(data) else data))

    def read() -> None:
        opened = ResultsStore(folder / "r.sqlite", create=False)
        try:
            opened.run_info(run)
            opened.measurements(run)
        finally:
            opened.close()

    _survives(read)


SPEC = (ROOT / "examples" / "tune-scale" / "scale.yaml").read_text()


@FUZZ
@given(text=mutated(SPEC))
def test_tuning_specs(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    from perfcast.tune.kernel_spec import host_arrays, load_kernel_spec

    folder = tmp_path_factory.mktemp("t")
    (folder / "scale.cl").write_text((ROOT / "examples" / "tune-scale" / "scale.cl").read_text())
    path = _file(folder, "scale.yaml", text)

    def read() -> None:
        spec, _ = load_kernel_spec(path)
        if all(v <= 1 << 20 for v in spec.problem.values()):
            host_arrays(spec, spec.check.size if spec.check and spec.check.size else {k: 8 for k in spec.problem})

    _survives(read)


# --- launch records: the interposer's log, nsys and nvprof GPU traces ----------------------------------------------

LOG = ("#perfcast-launch-log\t1\t7\t1\nQ\t0x1\t0\t2\tdev\nL\t0\t0x1\t7\t1\t100\t-\t-\t1\t2\t10\t30\t0\tk\n"
       "X\t1\t0x1\t7\t1\t100\t10\t-\t-54\tk\nE\t1\t0\n")


@FUZZ
@given(text=mutated(LOG))
def test_launch_logs(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    from perfcast.campaign.launch_log import read_launch_logs

    folder = tmp_path_factory.mktemp("l")
    _file(folder, "launches.7", text)
    _survives(lambda: read_launch_logs(folder / "launches"))


@pytest.mark.parametrize("name", ["nsys-cuda-gpu-trace.csv", "nvprof-gpu-trace-matrixMul.csv"])
def test_gpu_traces(name: str) -> None:
    from perfcast.campaign.cuda_launches import read_gpu_trace

    @FUZZ
    @given(text=mutated((DATA / "launches" / name).read_text()[:8_000]))
    def run(text: str) -> None:
        _survives(lambda: read_gpu_trace(text))

    run()


# --- the GPU corpus' manifest ----------------------------------------------------------------------------------------

CORPUS = ("format: perfcast-gpu-corpus\nversion: 1\nrepository: {name: test}\nkernels:\n"
          "  k:\n    title: a kernel\n    problem: {size: [4]}\n    sources:\n      a: {path: a.json}\n"
          "      b: {path: b.json}\n")


@FUZZ
@given(text=mutated(CORPUS), table=mutated("x,y,time_ms@a,spread@a,time_ms@b,spread@b\n1,2,2.0,0.01,4.0,\n3,4,,,,\n"))
def test_corpus(tmp_path_factory: pytest.TempPathFactory, text: str, table: str) -> None:
    from perfcast.validation.corpus import read_corpus

    folder = tmp_path_factory.mktemp("k")
    _file(folder, "corpus.yaml", text)
    _file(folder, "k.csv.gz", gzip.compress(table.encode("utf-8", errors="surrogatepass")))
    _survives(lambda: read_corpus(folder))


def test_the_fuzzed_formats_cover_every_profile_reader_and_recorded_format() -> None:
    """A new reader or format joins this suite: the registries and the fuzzed kinds are compared."""
    from perfcast.profiles import READERS
    from perfcast.tune.recorded import FORMATS

    assert {kind.split("-")[0] for kind in PROFILES} >= set(READERS)
    assert {kind.split("-")[0] for kind in CACHES} >= set(FORMATS)
    json.dumps(sorted(PROFILES))  # the kinds are plain names
