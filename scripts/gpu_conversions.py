"""How many type conversions an NVIDIA GPU runs per SM and clock, measured (issue 25: dedispersion's bound).

    python scripts/gpu_conversions.py --sass sm_80 sm_86 sm_90   # here, no GPU: what nvcc makes of each kernel
    python scripts/gpu_conversions.py --out conversions.json     # on a GPU (CuPy): the rates, side by side

Why. The corpus's dedispersion converts twice per (output, channel): the float shift to an int (F2I) and the
input byte to a float (I2F; nvcc 13 emits I2FP for it on sm_86 and sm_90). At the CUDA C Programming Guide's 16
conversions per SM and clock both together bound the A100's best time (64.5 ms against 67.6 ms measured), but
on the H100 they would give 37.6 ms against 28.7 ms measured: sm_90's I2FP must run faster than 16 a clock,
and no public document says at what rate. This measures it instead of fitting it.

What. Four kernels, each a loop of independent chains per thread (8 chains, so that latency hides), one kind
of instruction the point of each:

- `add_f32`: 8 FADD chains, the reference: its rate over the FP32 lanes per SM (128 on sm_86 and later, 64 on
  sm_80, sm_75 and sm_70; `--fp32-lanes` overrides) gives the clock the GPU ran at in this call, so that
  conversions per SM per clock do not rest on the nominal boost clock;
- `cvt_u8_f32`: a float accumulator adds a byte cast to float (nvcc: I2F.U8 on every architecture);
- `cvt_u32_f32`: the same with a 32-bit unsigned integer (I2F on sm_80, I2FP on sm_86 and sm_90): what
  dedispersion's byte compiles to, since its load zero-extends it (I2FP.F32.U32 there on sm_86 and sm_90);
- `cvt_f32_u32`: an unsigned accumulator adds a float product truncated to unsigned (dedispersion's shift).

Each conversion kernel also adds (an FADD or an IADD per chain), which runs at 64 or 128 a clock, so where
conversions run at 16 a clock they bind. `--sass` compiles the same source with nvcc for each architecture and
counts the conversion instructions and the adds in each kernel's loop (cuobjdump), so that one sees the kernel
measures what its name says; the test suite runs that part here (tests/test_gpu_conversions_script.py).

On a GPU: CuPy compiles the source (NVRTC), each kernel runs 3 warm-up and 7 timed launches of 4 x SMs blocks
of 256 threads, the kernels alternated launch by launch; medians. It writes one JSON file: per kernel, results
per second, per SM per second, and per SM per clock at the FADD kernel's clock, with the GPU's name, SM count,
nominal clock and compute capability.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path

CHAINS = 8
ITERATIONS = 4096
THREADS = 256

SOURCE = r"""
#define CHAINS 8
extern "C" __global__ void add_f32(float *out, unsigned seed, int iterations)
{
    float a[CHAINS];
    for (int c = 0; c < CHAINS; c++) a[c] = (float)(seed + threadIdx.x + c);
    for (int i = 0; i < iterations; i++) {
#pragma unroll
        for (int c = 0; c < CHAINS; c++) a[c] += 1.0009765625f;
    }
    float s = 0.0f;
    for (int c = 0; c < CHAINS; c++) s += a[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

extern "C" __global__ void cvt_f32_u32(float *out, unsigned seed, int iterations)
{
    unsigned s[CHAINS];
    float x = (float)(seed + threadIdx.x) * 0.25f;
    for (int c = 0; c < CHAINS; c++) s[c] = 0u;
    for (int i = 0; i < iterations; i++) {
        x += 1.0f;
#pragma unroll
        for (int c = 0; c < CHAINS; c++) s[c] += (unsigned)(x * (1.5f + 0.125f * c));
    }
    unsigned t = 0u;
    for (int c = 0; c < CHAINS; c++) t += s[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = (float)t;
}
"""

# The two int-to-float kernels differ only in the integer type converted: one text, NAME and TYPE filled in.
INT_TO_FLOAT = r"""
extern "C" __global__ void NAME(float *out, unsigned seed, int iterations)
{
    float a[CHAINS];
    unsigned u = seed + threadIdx.x;
    for (int c = 0; c < CHAINS; c++) a[c] = 0.0f;
    for (int i = 0; i < iterations; i++) {
#pragma unroll
        for (int c = 0; c < CHAINS; c++) a[c] += (float)(TYPE)(u + i * CHAINS + c);
    }
    float s = 0.0f;
    for (int c = 0; c < CHAINS; c++) s += a[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"""
SOURCE += "".join(INT_TO_FLOAT.replace("NAME", name).replace("TYPE", integer)
                  for name, integer in (("cvt_u8_f32", "unsigned char"), ("cvt_u32_f32", "unsigned")))

KERNELS = ("add_f32", "cvt_u8_f32", "cvt_u32_f32", "cvt_f32_u32")
# The SASS families that convert between integers and floats (I2FP: sm_86 and later's int-to-float).
CONVERSIONS = ("I2F", "I2FP", "F2I", "F2IP", "I2I")


def sass_counts(archs: list[str]) -> dict[str, dict[str, dict[str, int]]]:
    """Return, per architecture and kernel, the count of each conversion family and of FADD and IADD3 (nvcc here)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from perfcast.profiles.sass import compile_cubin, disassemble, sass_functions

    counts: dict[str, dict[str, dict[str, int]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "conversions.cu"
        source.write_text(SOURCE)
        for arch in archs:
            functions = sass_functions(disassemble(compile_cubin(source, arch, Path(folder))))
            counts[arch] = {}
            for name in KERNELS:
                families: dict[str, int] = {}
                for instruction in functions.get(name, []):
                    family = instruction.opcode.split(".")[0]
                    if family in (*CONVERSIONS, "FADD", "IADD3", "FMUL"):
                        families[family] = families.get(family, 0) + 1
                counts[arch][name] = families
    return counts


def measure(out: Path, fp32_lanes: int | None) -> dict[str, object]:
    """Time each kernel on the first CUDA GPU (CuPy) and write the rates to `out` (JSON)."""
    try:
        import cupy as cp
    except ImportError:
        sys.exit("CuPy is not installed: the rates are measured on a GPU with CuPy (here, --sass counts the code)")

    device = cp.cuda.Device(0)
    attributes = device.attributes
    sms = int(attributes["MultiProcessorCount"])
    nominal_hz = float(attributes["ClockRate"]) * 1e3
    major, minor = int(attributes["ComputeCapabilityMajor"]), int(attributes["ComputeCapabilityMinor"])
    # FP32 lanes per SM: 64 on GP100, Volta, Turing and GA100; 128 on the other Pascal parts, GA10x and later.
    lanes = fp32_lanes or (64 if (major, minor) in ((6, 0), (7, 0), (7, 2), (7, 5), (8, 0)) else 128)
    module = cp.RawModule(code=SOURCE)
    blocks = 4 * sms
    result = cp.empty(blocks * THREADS, dtype=cp.float32)
    kernels = {name: module.get_function(name) for name in KERNELS}

    def launch(name: str) -> float:
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        kernels[name]((blocks,), (THREADS,), (result, cp.uint32(7), cp.int32(ITERATIONS)))
        end.record()
        end.synchronize()
        return cp.cuda.get_elapsed_time(start, end) * 1e-3

    times: dict[str, list[float]] = {name: [] for name in KERNELS}
    for round_ in range(10):
        for name in KERNELS:  # alternated launch by launch: the clock each sees is the same
            seconds = launch(name)
            if round_ >= 3:
                times[name].append(seconds)
    results = blocks * THREADS * ITERATIONS * CHAINS
    medians = {name: statistics.median(values) for name, values in times.items()}
    clock_hz = results / medians["add_f32"] / sms / lanes  # the clock the FADD kernel ran at, at `lanes` a clock
    record: dict[str, object] = {
        "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
        "compute_capability": f"{major}.{minor}", "sms": sms, "nominal_clock_hz": nominal_hz,
        "fp32_lanes_assumed": lanes, "clock_from_fadd_hz": clock_hz,
        "blocks": blocks, "threads": THREADS, "iterations": ITERATIONS, "chains": CHAINS,
        "kernels": {name: {"median_s": medians[name],
                           "spread": (max(times[name]) - min(times[name])) / medians[name],
                           "per_s": results / medians[name],
                           "per_sm_per_clock": results / medians[name] / sms / clock_hz}
                    for name in KERNELS},
    }
    out.write_text(json.dumps(record, indent=1) + "\n")
    return record


def main() -> None:
    """Count the kernels' instructions here (--sass) or measure their rates on a GPU (--out)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sass", nargs="+", metavar="ARCH", help="compile here for each sm_NN and count instructions")
    parser.add_argument("--out", type=Path, help="JSON file of the measured rates (on a GPU)")
    parser.add_argument("--fp32-lanes", type=int, help="FP32 lanes per SM of the GPU (default from its compute "
                                                        "capability: 64 on 6.0, 7.x and 8.0, else 128)")
    args = parser.parse_args()
    if args.sass:
        bad = [arch for arch in args.sass if not re.fullmatch(r"sm_\d{2,3}a?", arch)]
        if bad:
            parser.error(f"architectures are sm_NN, e.g. sm_90: got {', '.join(bad)}")
        counts = sass_counts(args.sass)
        print(json.dumps(counts, indent=1))
        return
    if args.out is None:
        parser.error("give --sass ARCH... (here) or --out FILE (on a GPU)")
    record = measure(args.out, args.fp32_lanes)
    for name, figures in record["kernels"].items():  # type: ignore[union-attr]
        print(f"{name:11s} {figures['per_sm_per_clock']:7.2f} per SM per clock  ({figures['per_s']:.4g}/s, "
              f"spread {figures['spread']:.1%})")


if __name__ == "__main__":
    main()
