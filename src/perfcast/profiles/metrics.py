"""The kernel metrics perfcast's models read, with their names in each profiler (docs/metrics.md explains them).

Every reader turns its tool's names into these canonical names, values in base units: instructions, 32-byte
DRAM sectors, seconds. One table drives the readers, the metric lists `perfcast profile` asks each tool for,
and the test that docs/metrics.md names every metric.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ALL_METRICS", "HIERARCHICAL", "METRICS", "NCU_DURATION", "MetricSpec", "ncu_metric_names",
           "nvprof_metric_names"]


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
    model: str = "§3"  # the model that needs it: §3 (quantitative roofline) or §4 (projection)
    aggregate: str = "sum"  # over launches: "sum" for counts, "mean" for ratios and clocks


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

def _flop(op: str, kind: str, precision: str, letter: str, nvprof: str) -> MetricSpec:
    return MetricSpec(f"{kind}_{precision}", f"N_{kind.upper()} ({precision})", "inst", nvprof, _sass(f"{letter}{op}"),
                      f"{'fadd, fsub' if kind == 'add' else 'fmul'} on {precision} (x lanes)" if precision != "fp16"
                      else "counted as fp32 (no fp16 class in Oclgrind's mapping)", model="§4")


# The hierarchical metrics of the projection (spec §4). FMA counts are the §3 ones above.
HIERARCHICAL: tuple[MetricSpec, ...] = (
    _flop("add", "add", "fp32", "f", "flop_count_sp_add"), _flop("mul", "mul", "fp32", "f", "flop_count_sp_mul"),
    _flop("add", "add", "fp64", "d", "flop_count_dp_add"), _flop("mul", "mul", "fp64", "d", "flop_count_dp_mul"),
    _flop("add", "add", "fp16", "h", "flop_count_hp_add"), _flop("mul", "mul", "fp16", "h", "flop_count_hp_mul"),
    MetricSpec("fma_fp16", "N_FMA (fp16)", "inst", "flop_count_hp_fma", _sass("hfma"), "counted as fp32", model="§4"),
    MetricSpec("l1_bytes", "N+_L1", "B", "", (("l1tex__t_bytes.sum", 1.0),),
               "global load + store bytes", "every byte through L1/tex; hits in L1 = L1 - L2 bytes", model="§4"),
    # The L2's sectors requested by the L1 (srcunit_tex), 32 B each: they match the L1's bytes to 1 % on every
    # streaming kernel of an H100 capture (docs/validation/gpu-h100/l2-h100.csv), where lts__t_bytes counts 1.5x
    # them whatever the DRAM traffic: traffic from other sources, not DRAM fills (between the H100's two L2
    # partitions, likely; not recorded). Profiles taken before this change, both Hopper campaign archives
    # included, hold only lts__t_bytes.
    MetricSpec("l2_bytes", "N+_L2", "B", "", (("lts__t_sectors_srcunit_tex.sum", 32.0), ("lts__t_bytes.sum", 1.0)),
               "(no cache: not given)",
               "the L1's requests to L2; hits in L2 = L2 - DRAM bytes (0 where L2 carries more than L1 asked for, "
               "with a note)", model="§4"),
    MetricSpec("dram_bytes", "N_DRAM", "B", "", (("dram__bytes.sum", 1.0),),
               "global load + store bytes (no cache); in the campaign, the compulsory footprint", model="§4"),
    MetricSpec("shared_wavefronts_ld", "wavefronts (ld)", "wavefront", "",
               (("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 1.0),), "local loads (no banks)", model="§4"),
    MetricSpec("shared_wavefronts_st", "wavefronts (st)", "wavefront", "",
               (("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 1.0),), "local stores (no banks)",
               model="§4"),
    MetricSpec("shared_conflicts_ld", "bank conflicts (ld)", "count", "shared_load_transactions (minus requests)",
               (("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 1.0),), "0 (no banks)", model="§4"),
    MetricSpec("shared_conflicts_st", "bank conflicts (st)", "count", "", (
        ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 1.0),), "0 (no banks)", model="§4"),
    MetricSpec("shared_inst_ld", "shared ld (warp)", "inst", "", (("smsp__inst_executed_op_shared_ld.sum", 1.0),),
               "local loads / 32", model="§4"),
    MetricSpec("shared_inst_st", "shared st (warp)", "inst", "", (("smsp__inst_executed_op_shared_st.sum", 1.0),),
               "local stores / 32", model="§4"),
    MetricSpec("threads_per_inst", "active threads / warp instruction", "thread", "warp_execution_efficiency x 32",
               (("smsp__thread_inst_executed_per_inst_executed.ratio", 1.0),), "none: Oclgrind has no warps",
               "a ratio: launches are averaged, not summed", model="§4", aggregate="mean"),
    MetricSpec("clock_hz", "SM clock", "Hz", "", (("sm__cycles_elapsed.avg.per_second", 1.0),), "none",
               "averaged over launches", model="§4", aggregate="mean"),
)

NCU_DURATION = "gpu__time_duration.sum"


ALL_METRICS = METRICS + HIERARCHICAL


def ncu_metric_names() -> list[str]:
    """Return the Nsight Compute metrics `perfcast profile --tool ncu` asks for: §3's, §4's and the duration."""
    return [spec.ncu[0][0] for spec in ALL_METRICS] + [NCU_DURATION]


def nvprof_metric_names() -> list[str]:
    """Return the nvprof metrics `perfcast profile --tool nvprof` asks for (§3's, and §4's FLOP by kind)."""
    return [spec.nvprof for spec in ALL_METRICS if spec.nvprof.replace("_", "").isalnum()]
