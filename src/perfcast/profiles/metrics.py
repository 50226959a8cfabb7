"""The kernel metrics perfcast's models read, with their names in each profiler (docs/metrics.md explains them).

Every reader turns its tool's names into these canonical names, values in base units: instructions, 32-byte
DRAM sectors, seconds. One table drives the readers, the metric lists `perfcast profile` asks each tool for,
and the test that docs/metrics.md names every metric.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["METRICS", "NCU_DURATION", "MetricSpec", "ncu_metric_names", "nvprof_metric_names"]


@dataclass(frozen=True)
class MetricSpec:
    """One model metric: canonical name, spec symbol, unit, and its source in nvprof, Nsight Compute and Oclgrind.

    `ncu` lists accepted Nsight Compute names, first the one `perfcast profile` asks for; each with the factor
    that turns its base-unit value into this metric's unit (1/32 for bytes into sectors).
    """

    name: str
    symbol: str
    unit: str
    nvprof: str
    ncu: tuple[tuple[str, float], ...]
    oclgrind: str
    caveat: str = ""


def _sass(op: str) -> tuple[tuple[str, float], ...]:
    """Return the SM-sub-partition and SM spellings of a thread-level SASS instruction count."""
    return ((f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum", 1.0),
            (f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum", 1.0))


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("fma_fp32", "M_fma32", "inst", "flop_count_sp_fma", _sass("ffma"),
               "calls of llvm.fmuladd.f32 / llvm.fma.f32 and mad/fma builtins on floats (x vector lanes)"),
    MetricSpec("fma_fp64", "M_fma64", "inst", "flop_count_dp_fma", _sass("dfma"),
               "the same on doubles (.f64, builtins mangled with d)"),
    MetricSpec("ldst", "M_ldst", "inst", "inst_compute_ld_st", _sass("memory"),
               "every load and store: global, local, constant, private",
               "Oclgrind counts a vector load as one instruction, as a GPU does"),
    MetricSpec("inst_warp", "M_inst", "warp inst", "inst_executed",
               (("smsp__inst_executed.sum", 1.0), ("sm__inst_executed.sum", 1.0)),
               "all instructions executed / 32 (phi nodes, debug and lifetime intrinsics left out)",
               "Oclgrind has no warps: this assumes every warp full and converged"),
    MetricSpec("fp32", "M_fp32", "inst", "inst_fp_32", _sass("fp32"),
               "fadd, fsub, fmul, fdiv, frem, fneg, fcmp on float, FMA calls, float math builtins "
               "(elementary functions at 8 instructions each, as `perfcast classify` counts them)",
               "precision comes from the dumped LLVM IR; without it, from the kernel's builtins, else fp32"),
    MetricSpec("fp64", "M_fp64", "inst", "inst_fp_64", _sass("fp64"), "the same on double"),
    MetricSpec("int", "M_int", "inst", "inst_integer", _sass("integer"),
               "add, sub, mul, div, rem, shifts, and, or, xor, icmp, getelementptr (address arithmetic)"),
    MetricSpec("dram_read", "M_rd", "sector", "dram_read_transactions",
               (("dram__sectors_read.sum", 1.0), ("dram__bytes_read.sum", 1 / 32)),
               "global load bytes / 32",
               "Oclgrind sees no cache: an upper bound on DRAM reads; the campaign replaces it with the footprint"),
    MetricSpec("dram_write", "M_wr", "sector", "dram_write_transactions",
               (("dram__sectors_write.sum", 1.0), ("dram__bytes_write.sum", 1 / 32)),
               "global store bytes / 32", "as for M_rd"),
)

NCU_DURATION = "gpu__time_duration.sum"


def ncu_metric_names() -> list[str]:
    """Return the Nsight Compute metrics `perfcast profile --tool ncu` asks for: the model's set and the duration."""
    return [spec.ncu[0][0] for spec in METRICS] + [NCU_DURATION]


def nvprof_metric_names() -> list[str]:
    """Return the nvprof metrics `perfcast profile --tool nvprof` asks for."""
    return [spec.nvprof for spec in METRICS]
