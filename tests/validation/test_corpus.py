"""The GPU corpus files: read back what was written, refuse what is broken, turn into recorded spaces."""

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from perfcast.errors import NotFound
from perfcast.validation.corpus import CorpusError, read_corpus, write_kernel_csv
from perfcast.validation.corpus_build import build_corpus


def _manifest(folder: Path, version: int = 1) -> None:
    (folder / "corpus.yaml").write_text(
        f"format: perfcast-gpu-corpus\nversion: {version}\nrepository: {{name: test}}\nkernels:\n"
        "  k:\n    title: a kernel\n    problem: {size: [4]}\n    sources:\n      a: {path: a.json}\n"
        "      b: {path: b.json}\n")


def _write(folder: Path) -> None:
    per_device = {"a": {(1, 2): ("ok", 2.0, 0.01), (3, 4): ("runtime", float("nan"), float("nan"))},
                  "b": {(1, 2): ("ok", 4.0, float("nan"))}}
    write_kernel_csv(folder / "k.csv.gz", ("x", "y"), [(1, 2), (3, 4)], per_device)
    _manifest(folder)


def test_a_written_kernel_reads_back(tmp_path: Path) -> None:
    _write(tmp_path)
    kernel = read_corpus(tmp_path).kernels["k"]
    assert kernel.parameters == ("x", "y") and kernel.devices == ("a", "b")
    assert kernel.times[0, 0] == pytest.approx(2e-3) and kernel.times[0, 1] == pytest.approx(4e-3)
    assert kernel.status[1, 0] == "runtime" and kernel.status[1, 1] == "absent"
    assert np.isnan(kernel.spreads[0, 1])
    assert kernel.best_row("a") == 0
    space = kernel.recorded_space("a")
    assert [r.status for r in space.records] == ["ok", "runtime"]
    assert len(kernel.recorded_space("b").records) == 1  # absent rows are not records


def test_a_newer_corpus_asks_for_a_newer_perfcast(tmp_path: Path) -> None:
    _write(tmp_path)
    _manifest(tmp_path, version=99)
    with pytest.raises(CorpusError, match="update perfcast"):
        read_corpus(tmp_path)


@pytest.mark.parametrize("body, message", [
    ("x,y,time_ms@a,spread@a,time_ms@b,spread@b\n1,2,-3,,4,\n", "positive"),
    ("x,y,time_ms@a,spread@a,time_ms@b,spread@b\n1,2,3,,4\n", "cells"),
    ("x,y,time_ms@a,spread@a,time_ms@b,spread@b\n1,2,3,,4,\n1,2,3,,4,\n", "twice"),
    ("x,y,time_ms@a,time_ms@b\n1,2,3,4\n", "spread"),
    ("x,y,time_ms@a,spread@a,time_ms@b,spread@b\n1,z,3,,4,\n", "integer"),
    ("x,y,time_ms@a,spread@a,time_ms@b,spread@b\n", "no configurations"),
    ("x,y,time_ms@a,spread@a,time_ms@a,spread@a\n1,2,3,,4,\n", "two columns"),
    ("x,y,time_ms@a,spread@a,time_ms@b,spread@b\n1,2,3,inf,4,\n", "positive"),
    ("x,y,time_ms@a,spread@a,time_ms@b,spread@b\n1,2,3,nan,4,\n", "positive"),
    ("x,y,time_ms@a,spread@a,time_ms@b,spread@b\n99999999999999999999,2,3,,4,\n", "integer"),
    ("x,y,time_ms@a,spread@a,time_ms@b,spread@b\n1," + "9" * 200_000 + ",3,,4,\n", "CSV"),
])
def test_a_broken_kernel_file_is_refused_with_a_reason(tmp_path: Path, body: str, message: str) -> None:
    _manifest(tmp_path)
    (tmp_path / "k.csv.gz").write_bytes(gzip.compress(body.encode()))
    with pytest.raises(CorpusError, match=message):
        read_corpus(tmp_path)


def test_an_unknown_kernel_is_named(tmp_path: Path) -> None:
    _write(tmp_path)
    with pytest.raises(NotFound, match="it has: k"):
        read_corpus(tmp_path, ["gemm"])


def test_the_shipped_corpus_reads_and_names_its_sources() -> None:
    corpus = read_corpus()
    assert {"convolution-milo", "dedispersion-milo", "gemm", "pnpoly", "convolution"} <= set(corpus.kernels)
    assert len(corpus.devices()) == 12  # the hub's ten, and the H200 and H100 perfcast measured (docs/validation/gpu-h*)
    assert corpus.manifest["repository"]["licence"].startswith("MIT")
    for kernel in corpus.kernels.values():
        assert all(source.path.endswith(".json.gz") for source in kernel.sources)
        assert (kernel.status == "ok").sum() > 0.5 * kernel.status.size


def test_the_build_takes_medians_and_spreads_from_the_runs(tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    cache = {"device_name": "GPU", "kernel_name": "k", "problem_size": [4], "tune_params_keys": ["x"],
             "tune_params": {"x": [1, 2]}, "objective": "time",
             "cache": {"1": {"x": 1, "time": 2.5, "times": [1.0, 2.0, 4.0]},
                       "2": {"x": 2, "time": "RuntimeFailedConfig"}}}
    (hub / "cachefiles/convolution_milo").mkdir(parents=True)
    (hub / "cachefiles/dedispersion_milo").mkdir(parents=True)
    for name in ("A100", "A4000", "A6000", "MI250X", "W6600", "W7800"):
        (hub / f"cachefiles/convolution_milo/{name}.json.gz").write_bytes(gzip.compress(json.dumps(cache).encode()))
        (hub / f"cachefiles/dedispersion_milo/{name}.json.gz").write_bytes(gzip.compress(json.dumps(cache).encode()))
    build_corpus(hub, tmp_path / "out", "0" * 40, ["convolution-milo"])
    build_corpus(hub, tmp_path / "out", "0" * 40, ["dedispersion-milo"])  # keeps convolution-milo listed
    assert set(read_corpus(tmp_path / "out").kernels) == {"convolution-milo", "dedispersion-milo"}
    kernel = read_corpus(tmp_path / "out").kernels["convolution-milo"]
    assert kernel.times[0, 0] == pytest.approx(2e-3)  # the median of 1, 2, 4 ms, not their mean
    assert kernel.spreads[0, 0] == pytest.approx(np.std([1.0, 2.0, 4.0]) / 2.0, rel=1e-2)
    assert kernel.status[1, 0] == "runtime"


def test_a_column_measured_elsewhere_is_added_and_named_as_not_the_hubs(tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    cache = {"device_name": "GPU", "kernel_name": "k", "problem_size": [4], "tune_params_keys": ["x"],
             "tune_params": {"x": [1, 2, 3]}, "objective": "time",
             "cache": {str(x): {"x": x, "time": float(x), "times": [float(x)]} for x in (1, 2, 3)}}
    (hub / "cachefiles/convolution_milo").mkdir(parents=True)
    for name in ("A100", "A4000", "A6000", "MI250X", "W6600", "W7800"):
        (hub / f"cachefiles/convolution_milo/{name}.json.gz").write_bytes(gzip.compress(json.dumps(cache).encode()))
    # KernelTuner 1.5's format: the objective as a list, a failure under __error__ with no time.
    ours = {**cache, "device_name": "NVIDIA H200", "objective": ["time"],
            "cache": {"2": {"x": 2, "time": 0.5, "times": [0.5]}, "3": {"x": 3, "__error__": "RuntimeFailedConfig"}}}
    (tmp_path / "h200.json").write_text(json.dumps(ours))
    build_corpus(hub, tmp_path / "out", "0" * 40, ["convolution-milo"],
                 {"convolution-milo": {"h200": tmp_path / "h200.json"}})
    kernel = read_corpus(tmp_path / "out").kernels["convolution-milo"]
    column = kernel.devices.index("h200")
    assert list(kernel.status[:, column]) == ["absent", "ok", "runtime"]
    source = next(s for s in kernel.sources if s.device == "h200")
    assert source.recorded_name == "NVIDIA H200" and "not the hub's" in source.measured_by
    assert any("2 of the 3 configurations tried, 1 timed" in note for note in kernel.notes)
    with pytest.raises(CorpusError, match="already has a cache for a100-pcie-40gb"):
        build_corpus(hub, tmp_path / "out", "0" * 40, ["convolution-milo"],
                     {"convolution-milo": {"a100-pcie-40gb": tmp_path / "h200.json"}})


def test_a_kernel_file_that_decompresses_beyond_the_limit_is_refused(tmp_path: Path, monkeypatch) -> None:
    import perfcast.validation.corpus as corpus_module

    _write(tmp_path)
    monkeypatch.setattr(corpus_module, "MAX_BYTES", 16)
    with pytest.raises(CorpusError, match="decompresses to more than"):
        read_corpus(tmp_path)


def test_a_kernel_name_that_is_a_path_is_refused(tmp_path: Path) -> None:
    _write(tmp_path)
    text = (tmp_path / "corpus.yaml").read_text().replace("  k:\n", "  ../k:\n")
    (tmp_path / "corpus.yaml").write_text(text)
    with pytest.raises(CorpusError, match="plain names"):
        read_corpus(tmp_path)
