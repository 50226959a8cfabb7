"""`perfcast bench --backend cuda` end to end on a stand-in for CuPy: the backend's own logic (block size from
the device query, the compute shape chosen by measurement, every figure of the suite, the profile written) is
checked here; CuPy and the GPU themselves only where one is lent (docs/gpu.md)."""

import re
import shutil
import sys
import types

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from perfcast.cli import app

PROPS = {
    "name": b"NVIDIA H100 80GB HBM3", "totalGlobalMem": 512 * 2**20, "l2CacheSize": 2**20, "warpSize": 32,
    "maxThreadsPerBlock": 1024, "maxThreadsPerMultiProcessor": 1536, "multiProcessorCount": 4, "major": 9,
    "minor": 0, "clockRate": 1_980_000, "sharedMemPerMultiprocessor": 228 * 2**10,
}
# Simulated lane-operations per second of the compute kernels by their -DCHAINS: fp64 likes 16, the rest 8.
LANE_RATES = {"f32": {4: 2e12, 8: 4e12, 16: 3e12}, "i32": {4: 1e12, 8: 2e12, 16: 1.5e12},
              "f64": {4: 0.5e12, 8: 1e12, 16: 1.8e12}}


L2_RATE = 7e12  # B/s the stand-in L2 reads at
# B/s the stand-in DRAM moves for the read, write, copy and triad kernels by the floats each thread accesses at once
# (mem_triad, mem_triad_v2, mem_triad_v4), each launch 5 µs besides: a Hopper's shape, wide accesses faster.
STREAM_RATES = {1: 2.8e12, 2: 3.0e12, 4: 3.05e12}
STREAM_BYTES = {"read": 4, "write": 4, "copy": 8, "triad": 12}  # per float, no write-allocate on a GPU


class Clock:
    now = 0.0


ARGUMENTS: dict = {}  # kernel name -> the arguments of its first launch


class FakeArray:
    def __init__(self, host):
        self.host = np.asarray(host)

    def set(self, staged):
        Clock.now += staged.nbytes / 50e9


class FakeKernel:
    def __init__(self, name, chains, launches):
        self.name, self.chains, self.launches = name, chains, launches

    def __call__(self, grid, block, args, shared_mem=0):
        threads = grid[0] * block[0]
        self.launches.append((self.name, block[0], self.chains))
        ARGUMENTS.setdefault(self.name, tuple(args))
        match = re.fullmatch(r"peak_(f32|i32|f64)_(fma|add)", self.name)
        if self.name == "mem_read_l2":  # an L2 of L2_RATE: passes x PER_ITEM floats per thread
            from perfcast.bench.accelerator import PER_ITEM

            Clock.now += 5e-6 + threads * int(args[2]) * PER_ITEM * 4 / L2_RATE
        elif match:
            Clock.now += threads * self.chains * int(args[0]) / LANE_RATES[match[1]][self.chains]
        elif stream := re.fullmatch(r"mem_(read|write|copy|triad)(?:_v(\d))?", self.name):
            from perfcast.bench.accelerator import PER_ITEM

            width = int(stream[2] or 1)
            floats = threads * width * (PER_ITEM if stream[1] == "read" else 1)
            Clock.now += 5e-6 + floats * STREAM_BYTES[stream[1]] / STREAM_RATES[width]
        else:
            Clock.now += 5e-6 + threads * 1e-12


def fake_cupy(launches, compiled):
    cupy = types.ModuleType("cupy")
    cupy.__version__ = "13.6.0 (stand-in)"

    class CompileException(Exception):
        pass

    class RawModule:
        def __init__(self, code, options):
            assert "#error" in code  # bench.cu itself
            self.chains = int(next(o for o in options if o.startswith("-DCHAINS=")).split("=")[1])
            compiled.append(self.chains)

        def get_function(self, name):
            return FakeKernel(name, self.chains, launches)

    class Event:
        def record(self):
            self.at = Clock.now

        def synchronize(self):
            pass

    class Device:
        def __init__(self, index):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1, getDeviceProperties=lambda index: dict(PROPS), runtimeGetVersion=lambda: 13000,
        CUDARuntimeError=RuntimeError,
    )
    cupy.cuda = types.SimpleNamespace(
        runtime=runtime, Device=Device, Event=Event, get_elapsed_time=lambda a, b: (b.at - a.at) * 1e3,
        alloc_pinned_memory=lambda nbytes: bytearray(nbytes),
        compiler=types.SimpleNamespace(CompileException=CompileException),
    )
    cupy.RawModule = RawModule
    cupy.asarray = FakeArray
    return cupy


@pytest.fixture
def launches(monkeypatch):
    launched, compiled = [], []
    ARGUMENTS.clear()
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(launched, compiled))
    return launched, compiled


def test_bench_cuda_end_to_end_chooses_block_and_chains_from_the_device(launches, tmp_path, monkeypatch):
    launched, compiled = launches
    monkeypatch.chdir(tmp_path)  # bench keeps a copy of the profile under ./.perfcast
    out = tmp_path / "h100.yaml"
    result = CliRunner().invoke(app, ["bench", "--backend", "cuda", "--quick", "-r", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(compiled) == [4, 8, 16]  # one NVRTC build per shape tried, none twice
    # 1536 threads per SM: blocks of 256 (six fill it), for every kernel launched.
    assert {block for name, block, _ in launched if name != "empty"} == {256}
    # The peaks are measured with each precision's fastest shape, and the rates follow from its lanes.
    final = {}
    for name, _, chains in launched:
        final[name] = chains
    assert final["peak_f32_fma"] == 8 and final["peak_i32_fma"] == 8 and final["peak_f64_fma"] == 16
    device = yaml.safe_load(out.read_text())
    text = out.read_text()
    assert "fp64 compute kernels: 16 scalar chains (kept 16 x 1-wide" in " ".join(text.split())
    assert "blocks of 256 threads" in " ".join(text.split())
    # A kept shape's rate is its lanes x steps x 2 op over the simulated time: 2 x the lane rate of that shape.
    for precision, rate in (("fp32", 4e12), ("int32", 2e12), ("fp64", 1.8e12)):
        value, unit = device["peak"][precision]["fma"]["value"].split()
        assert unit == "TFLOP/s" and float(value) * 1e12 == pytest.approx(2 * rate, rel=1e-6)


# bench.cu's parameter types -> the numpy dtype CuPy must be given (neither CuPy nor the driver checks them).
C_TYPES = {"float": np.float32, "double": np.float64, "int": np.int32, "unsigned int": np.uint32,
           "float2": np.float32, "float4": np.float32}  # vectors: the float arrays viewed W at a time


def bench_cu_signatures() -> dict:
    """Return bench.cu's kernels as name -> [(C type, is a pointer, name)], macros expanded by the C preprocessor."""
    import subprocess
    from pathlib import Path

    source = Path(__file__).parents[2] / "src" / "perfcast" / "bench" / "kernels" / "bench.cu"
    expanded = subprocess.run(["gcc", "-E", "-P", "-x", "c", "-DPER_ITEM=4", "-DCHAINS=8", "-DELEMENTARY_CHAINS=4",
                               "-DDIVISION_CHAINS=4",
                               str(source)], capture_output=True, text=True, check=True).stdout
    found = {}
    for match in re.finditer(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(([^)]*)\)', expanded):
        parameters = []
        for parameter in match[2].split(","):
            words = re.sub(r"\b(?:__restrict__|const)\b", " ", parameter).replace("*", " * ").split()
            parameters.append((" ".join(w for w in words[:-1] if w != "*"), "*" in words, words[-1]))
        found[match[1]] = parameters
    return found


@pytest.mark.skipif(shutil.which("gcc") is None, reason="the C preprocessor (gcc) expands bench.cu's macros")
def test_every_launch_passes_the_types_bench_cu_declares(launches, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["bench", "--backend", "cuda", "--quick", "-r", "2", "-o", str(tmp_path / "p.yaml")])
    assert result.exit_code == 0, result.output
    signatures = bench_cu_signatures()
    assert set(ARGUMENTS) <= set(signatures) and len(ARGUMENTS) >= 12
    for name, arguments in ARGUMENTS.items():
        parameters = signatures[name]
        assert len(arguments) == len(parameters), (name, arguments, parameters)
        for argument, (type_, pointer, parameter) in zip(arguments, parameters):
            dtype = np.dtype(C_TYPES[type_])
            if pointer and parameter == "sink":  # written, never read: one float64 buffer serves every precision
                assert isinstance(argument, FakeArray) and argument.host.itemsize >= dtype.itemsize, (name, type_)
            elif pointer:
                assert isinstance(argument, FakeArray) and argument.host.dtype == dtype, (name, parameter, type_)
            else:  # a Python int or float would go in as 8 bytes
                assert isinstance(argument, np.generic) and argument.dtype == dtype, (name, parameter, argument)


def test_the_l2_figure_comes_from_the_read_sweep_whose_launches_outlast_their_cost(launches, tmp_path, monkeypatch):
    """A triad per launch below the L2's size times launches (5 µs each here, as on a real GPU); the read sweep's
    launches read a GiB each, so its plateau is the stand-in L2's rate, and the profile says how it was taken."""
    launched, _ = launches
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "p.yaml"
    result = CliRunner().invoke(app, ["bench", "--backend", "cuda", "--quick", "-r", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert len({1 for name, _, _ in launched if name == "mem_read_l2"}) == 1, "the L2 read sweep did not run"
    mask, passes = int(ARGUMENTS["mem_read_l2"][1]), int(ARGUMENTS["mem_read_l2"][2])
    assert (mask + 1) & mask == 0 and passes > 1  # a power-of-two working set, read many times per launch
    device = yaml.safe_load(out.read_text())
    (l2,) = [level for level in device["memory"] if level["level"] == "L2"]
    value, unit = l2["bandwidth"]["value"].split()
    # Within the 5 µs a stand-in launch adds to each GiB read (3 %): a real GPU queues its launches instead.
    assert unit == "TB/s" and float(value) * 1e12 == pytest.approx(L2_RATE, rel=0.05)
    assert "L2 read plateau" in l2["bandwidth"]["tool"]


def test_the_dram_figure_is_the_fastest_access_width_and_the_scalar_triad_a_ceiling(launches, tmp_path, monkeypatch):
    """Each of read, write, copy and triad runs one float per thread and two and four at once; the profile's DRAM
    figure is the fastest triad, and the scalar triad, slower, a bandwidth ceiling for kernels that access one float
    at a time. The notes give every width's rate: the figures are those rates."""
    from perfcast.devices.schema import SCALAR_ACCESSES

    launched, _ = launches
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "p.yaml"
    result = CliRunner().invoke(app, ["bench", "--backend", "cuda", "--quick", "-r", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    names = {name for name, _, _ in launched}
    assert {f"mem_{k}{w}" for k in STREAM_BYTES for w in ("", "_v2", "_v4")} <= names
    notes = " ".join(out.read_text().split())
    found = {}
    for kernel in STREAM_BYTES:
        match = re.search(rf"Global {kernel}: 1-wide ([\d.e+]+) GB/s, 2-wide ([\d.e+]+) GB/s, 4-wide ([\d.e+]+) GB/s; "
                          r"kept 4-wide", notes)
        assert match, kernel
        found[kernel] = [float(v) * 1e9 for v in match.groups()]
        assert found[kernel][0] < found[kernel][1] < found[kernel][2], kernel  # the stand-in's widths, in order
    device = yaml.safe_load(out.read_text())
    (dram,) = [level for level in device["memory"] if level["level"] == "DRAM"]
    value, unit = dram["bandwidth"]["value"].split()
    assert unit == "TB/s" and float(value) * 1e12 == pytest.approx(found["triad"][2], rel=0.01)
    value, unit = device["bandwidth_ceilings"][SCALAR_ACCESSES]["value"].split()
    assert unit == "TB/s" and float(value) * 1e12 == pytest.approx(found["triad"][0], rel=0.01)
    # The launches' 5 µs aside, the rates are the stand-in's.
    assert found["triad"][2] == pytest.approx(STREAM_RATES[4], rel=0.3)
