"""scripts/gpu_conversions.py: each kernel converts what its name says, by nvcc's own code (no GPU needed)."""

from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "scripts" / "gpu_conversions.py"


@pytest.mark.needs_cuda_tools  # tests/conftest.py skips it, saying how to get them, where nvcc or cuobjdump is missing
def test_each_kernel_s_loop_is_its_conversions_and_the_reference_has_none(load_script):
    script = load_script("gpu_conversions")
    counts = script.sass_counts(["sm_80", "sm_90"])
    chains = script.CHAINS
    for arch, kernels in counts.items():
        # The FADD reference converts only to start its chains, outside the loop.
        assert sum(kernels["add_f32"].get(c, 0) for c in script.CONVERSIONS) <= chains, arch
        # The unrolled loop: one conversion per chain and iteration, as many as the adds that use them.
        assert kernels["cvt_u8_f32"]["I2F"] >= 4 * chains, arch
        u32 = "I2F" if arch == "sm_80" else "I2FP"  # sm_86 and later convert an unsigned int with I2FP
        assert kernels["cvt_u32_f32"][u32] >= 4 * chains, arch
        assert kernels["cvt_f32_u32"]["F2I"] >= 4 * chains, arch
        for name in ("cvt_u8_f32", "cvt_u32_f32"):
            converted = sum(kernels[name].get(c, 0) for c in script.CONVERSIONS)
            assert converted == kernels[name]["FADD"] - chains, (arch, name)  # the last FADDs sum the chains


def test_the_command_line_needs_a_mode_and_checks_architectures(capsys):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True)
    assert done.returncode == 2 and "--sass ARCH" in done.stderr
    done = subprocess.run([sys.executable, str(SCRIPT), "--sass", "compute_90"], capture_output=True, text=True)
    assert done.returncode == 2 and "sm_NN" in done.stderr


def test_the_rates_are_per_sm_and_clock_at_the_reference_s_clock(tmp_path, monkeypatch, load_script):
    """A stand-in for CuPy whose kernels take known times: the arithmetic of the measurement, without a GPU."""
    import sys
    from types import SimpleNamespace

    script = load_script("gpu_conversions")
    seconds = {"add_f32": 1.0, "cvt_u8_f32": 8.0, "cvt_u32_f32": 4.0, "cvt_f32_u32": 8.0}
    clock = []

    class Event:
        def record(self):
            clock.append(self)

        def synchronize(self):
            pass

    class Function:
        def __init__(self, name):
            self.name = name

        def __call__(self, grid, block, args):
            clock.append(seconds[self.name])

    def elapsed(start, end):
        return 1e3 * clock[clock.index(start) + 1]  # ms, as CuPy gives it

    cuda = SimpleNamespace(
        Device=lambda index: SimpleNamespace(attributes={
            "MultiProcessorCount": 100, "ClockRate": 2_000_000, "ComputeCapabilityMajor": 9,
            "ComputeCapabilityMinor": 0}),
        Event=Event, get_elapsed_time=elapsed,
        runtime=SimpleNamespace(getDeviceProperties=lambda index: {"name": b"Fake H100"}))
    fake = SimpleNamespace(cuda=cuda, RawModule=lambda code: SimpleNamespace(get_function=Function),
                           empty=lambda n, dtype: None, float32=None, uint32=int, int32=int)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    record = script.measure(tmp_path / "c.json", None)
    results = 4 * 100 * script.THREADS * script.ITERATIONS * script.CHAINS
    assert record["clock_from_fadd_hz"] == pytest.approx(results / 1.0 / 100 / 128)
    kernels = record["kernels"]
    assert kernels["add_f32"]["per_sm_per_clock"] == pytest.approx(128)  # the reference defines the clock
    assert kernels["cvt_u8_f32"]["per_sm_per_clock"] == pytest.approx(16)
    assert kernels["cvt_u32_f32"]["per_sm_per_clock"] == pytest.approx(32)
    assert kernels["cvt_f32_u32"]["spread"] == 0
    assert (tmp_path / "c.json").read_text().count("per_sm_per_clock") == 4
