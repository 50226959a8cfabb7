"""The profile readers on real and real-format files (tests/data/profiles/README.md says where each comes from)."""

from pathlib import Path

import pytest

from perfcast.profiles import READERS, ProfileError, read_profile
from perfcast.profiles.ncu import parse_ncu_value, read_ncu, unit_factor
from perfcast.profiles.nvprof import read_nvprof
from perfcast.profiles.oclgrind import read_oclgrind

DATA = Path(__file__).parent.parent / "data" / "profiles"
SAMPLES = {
    "ncu": [DATA / "ncu-details-a100-bert.csv", DATA / "ncu-raw-constructed.csv"],
    "nvprof": [DATA / "nvprof-metrics-constructed.csv"],
    "oclgrind": [DATA / "oclgrind-opencl_program-256.txt"],
}


@pytest.mark.parametrize("tool", list(READERS))
def test_every_registered_reader_has_samples_and_is_sniffed(tool):
    assert SAMPLES[tool], f"no sample file for the {tool} reader"
    for path in SAMPLES[tool]:
        text = path.read_text()
        detected = [name for name, (_, looks_like, _) in READERS.items() if looks_like(text)]
        assert detected == [tool], path.name
        profile = read_profile(path)
        assert profile.kernels and all(k.launches >= 1 for k in profile.kernels)


class TestNcuDetails:
    """A real A100 capture: sgemm launched three times, an elementwise kernel once."""

    @pytest.fixture(scope="class")
    @classmethod
    def profile(cls):
        return read_profile(DATA / "ncu-details-a100-bert.csv")

    def test_launches_of_one_kernel_are_summed(self, profile):
        sgemm = profile.kernel("ampere_sgemm_32x32_sliced1x4_tn")
        assert sgemm.launches == 3
        assert sgemm.metrics["fma_fp32"] == 3 * 4_194_304  # "4,194,304" in each launch
        assert sgemm.metrics["fma_fp64"] == 0

    def test_a_metric_listed_twice_with_one_value_is_read(self):
        # A section and --metrics may both list a metric: the same value twice is no conflict.
        text = (DATA / "ncu-details-a100-bert.csv").read_text()
        row = next(line for line in text.splitlines() if line.startswith('"6",') and "dram__bytes.sum" in line)
        assert read_ncu(text.replace(row, row + "\n" + row)).kernel("ampere_sgemm").launches == 3

    @pytest.mark.parametrize(("relabel", "message"), [('\n"10",', "given twice"), ('\n"8",', "names two kernels")])
    def test_two_launches_under_one_id_are_refused(self, relabel, message):
        # Relabelled to ID 6, launch 10 (sgemm again) or 8 (the elementwise kernel) would silently merge into it.
        text = (DATA / "ncu-details-a100-bert.csv").read_text().replace(relabel, '\n"6",')
        with pytest.raises(ProfileError, match=message):
            read_ncu(text)

    def test_kernel_found_by_part_of_its_name(self, profile):
        add = profile.kernel("CUDAFunctor_add")
        assert add.launches == 1 and add.metrics["fma_fp32"] == 10_240

    def test_missing_model_metrics_are_named(self, profile):
        # The capture has ffma/dfma counts but not the fp32/fp64 totals, warp instructions or DRAM sectors.
        with pytest.raises(ProfileError, match=r"lacks the metric.*fp32 \(M_fp32; nvprof inst_fp_32, ncu "
                                                r"smsp__sass_thread_inst_executed_op_fp32_pred_on.sum\)"):
            profile.kernel("ampere_sgemm_32x32_sliced1x4_tn").counts()

    def test_preamble_and_program_output_are_skipped(self):
        text = "==PROF== Connected to process 35412\nsome program output, with, commas\n"
        text += (DATA / "ncu-details-a100-bert.csv").read_text() + "==PROF== Disconnected from process 35412\n"
        assert read_ncu(text).kernel("ampere_sgemm").launches == 3


class TestNcuRaw:
    @pytest.fixture(scope="class")
    @classmethod
    def profile(cls):
        return read_profile(DATA / "ncu-raw-constructed.csv")

    def test_counts_and_duration_in_base_units(self, profile):
        triad = profile.kernel("triad")
        assert triad.launches == 2  # the third launch is nan: left out
        assert triad.metrics["dram_read"] == 4_194_304 + 4_194_310
        assert triad.duration == pytest.approx((27_168 + 26_944) * 1e-9)
        assert any("left out launch ID 3" in note for note in triad.notes)  # ncu's own ID, not a position
        counts = triad.counts()
        assert (counts.fp32, counts.fma32, counts.ldst) == (2 * 16_777_216, 2 * 16_777_216, 2 * 50_331_648)

    def test_the_dgemm_predicts_on_a_catalog_gpu(self, profile):
        from perfcast.devices.catalog import get_device
        from perfcast.devices.quantitative_view import quantitative_inputs
        from perfcast.models.quantitative import predict_counts

        p = predict_counts(profile.kernel("dgemm_naive").counts(), quantitative_inputs(get_device("h100-sxm5")).rates)
        assert p.kernel.k_type == "fp64" and p.time > 0

    def test_bytes_metrics_stand_in_for_sectors(self):
        text = (DATA / "ncu-raw-constructed.csv").read_text()
        text = text.replace('"dram__sectors_read.sum"', '"dram__bytes_read.sum"', 1).replace('"sector","sector"',
                                                                                                '"Mbyte","sector"', 1)
        triad = read_ncu(text).kernel("triad")
        assert triad.metrics["dram_read"] == pytest.approx((4_194_304 + 4_194_310) * 1e6 / 32)

    def test_unknown_unit_names_kernel_and_metric(self):
        text = (DATA / "ncu-raw-constructed.csv").read_text().replace('"nsecond"', '"fortnight"')
        with pytest.raises(ProfileError, match=r"kernel 'triad.*metric gpu__time_duration.sum: unknown unit 'fortnight'"):
            read_ncu(text)

    def test_negative_count_names_kernel_and_metric(self):
        text = (DATA / "ncu-raw-constructed.csv").read_text().replace('"4194310"', '"-4194310"')
        with pytest.raises(ProfileError, match=r"triad.*launch ID 1: metric dram__sectors_read.sum is negative"):
            read_ncu(text)

    def test_a_real_h200_campaign_profile(self):
        # ncu 2025.3 on an H200 (docs/validation/gpu-h200): the clock comes in "hz" with --print-units base.
        profile = read_ncu((DATA / "ncu-raw-h200-campaign.csv").read_text())
        assert len(profile.kernels) == 12
        triad = profile.kernel("triad")
        assert 1.5e9 < triad.metrics["clock_hz"] < 2.1e9
        # triad reads two 64 MiB arrays: DRAM read sectors of 32 B give about those bytes
        assert triad.metrics["dram_read"] * 32 == pytest.approx(2 * 4 * 16_777_216, rel=0.02)
        assert triad.duration == pytest.approx(60.096e-6, rel=1e-3)  # gpu__time_duration.sum, ns

    def test_l2_bytes_are_the_l1s_requests_where_ncu_gives_them(self):
        # An H100 capture with both L2 metrics: lts__t_bytes counts other L2 traffic too (1.5x the L1's bytes on
        # triad), the srcunit_tex sectors are what the L1 asked for (its bytes exactly, on streaming kernels).
        text = (DATA / "ncu-raw-h100-l2.csv").read_text()
        profile = read_ncu(text)
        assert len(profile.kernels) == 12
        for name in ("triad", "reduce_sum", "hash_int"):
            kernel = profile.kernel(name)
            assert kernel.metrics["l2_bytes"] == pytest.approx(kernel.metrics["l1_bytes"], rel=0.01)
        # sgemm_naive hits in L1: the L1 asks the L2 for about an eighth of its bytes
        naive = profile.kernel("sgemm_naive")
        assert naive.metrics["l2_bytes"] < 0.2 * naive.metrics["l1_bytes"]
        # Without the srcunit column the reader falls back on lts__t_bytes, as in profiles taken before it.
        header = text.splitlines()[[i for i, line in enumerate(text.splitlines()) if line.startswith('"ID"')][0]]
        column = header.split('","').index("lts__t_sectors_srcunit_tex.sum")
        older = "\n".join(",".join(cell for i, cell in enumerate(_cells(line)) if i != column) if _cells(line) else line
                          for line in text.splitlines())
        triad = read_ncu(older).kernel("triad")
        assert triad.metrics["l2_bytes"] == pytest.approx(1.5 * triad.metrics["l1_bytes"], rel=0.03)
        # A launch whose srcunit value is nan (not given) falls back the same way, rather than losing the metric.
        lines = text.splitlines()
        row = next(i for i, line in enumerate(lines) if '"triad"' in line)
        cells = _cells(lines[row])
        cells[column] = '"nan"'
        lines[row] = ",".join(cells)
        triad = read_ncu("\n".join(lines)).kernel("triad")
        assert triad.metrics["l2_bytes"] == pytest.approx(1.5 * triad.metrics["l1_bytes"], rel=0.03)

    def test_a_launch_id_given_twice_is_refused_naming_both(self):
        text = (DATA / "ncu-raw-constructed.csv").read_text().replace('\n"1","4242"', '\n"0","4242"', 1)
        with pytest.raises(ProfileError, match="launch ID 0 appears twice"):
            read_ncu(text)

    def test_a_row_cut_short_is_left_out_with_a_note(self):
        text = (DATA / "ncu-raw-constructed.csv").read_text().rstrip("\n")
        profile = read_ncu(text[: text.rindex(",")])  # the last row loses its last column
        assert any("left out a row of" in note and "cut short" in note for note in profile.notes)

    def test_a_negative_count_in_one_launch_only_is_refused(self):
        text = (DATA / "ncu-raw-constructed.csv").read_text().replace('"4194310"', '"-1000"', 1)
        with pytest.raises(ProfileError, match="is negative"):
            read_ncu(text)

    def test_no_header(self):
        with pytest.raises(ProfileError, match="no Nsight Compute CSV header.*ERR_NVGPUCTRPERM"):
            read_ncu("==PROF== Connected\n==ERROR== ERR_NVGPUCTRPERM - no permission\n")

    def test_no_units_row_is_noted(self):
        lines = (DATA / "ncu-raw-constructed.csv").read_text().splitlines()
        without = "\n".join(line for line in lines if not line.startswith('"",'))
        profile = read_ncu(without)
        assert any("no units row" in note for note in profile.notes)
        assert profile.kernel("triad").duration == pytest.approx((27_168 + 26_944) * 1e-9)

    @pytest.mark.parametrize(("text", "value"), [("1,215,000,000.00", 1.215e9), ("6,400", 6400.0), ("0.5", 0.5),
                                                 ("nan", None), ("n/a", None)])
    def test_values(self, text, value):
        assert parse_ncu_value(text, "k", "m") == value

    @pytest.mark.parametrize(("unit", "factor"), [("byte", 1.0), ("Kbyte", 1e3), ("Mbyte", 1e6), ("inst", 1.0),
                                                  ("Minst", 1e6), ("usecond", 1e-6), ("sector", 1.0),
                                                  ("hz", 1.0), ("GHz", 1e9), ("cycle/nsecond", 1e9)])
    def test_units(self, unit, factor):
        assert unit_factor(unit, "k", "m")[0] == pytest.approx(factor)


class TestNvprof:
    @pytest.fixture(scope="class")
    @classmethod
    def profile(cls):
        return read_profile(DATA / "nvprof-metrics-constructed.csv")

    def test_counts_are_avg_times_invocations(self, profile):
        saxpy = profile.kernel("saxpy")
        assert saxpy.launches == 2
        assert saxpy.metrics["dram_read"] == 2 * 4_194_402
        assert saxpy.metrics["inst_warp"] == 2 * 7_340_032
        assert profile.source.device == "Tesla V100-SXM2-16GB (0)"

    def test_metrics_the_models_do_not_read_are_skipped_whatever_their_format(self, profile):
        assert "achieved_occupancy" not in profile.kernel("saxpy").metrics
        assert profile.kernel("init").metrics == {"fp32": 0.0}

    def test_predicts(self, profile):
        from perfcast.models.quantitative import DeviceRates, predict_counts

        p = predict_counts(profile.kernel("saxpy").counts(), DeviceRates(15.7e12, 7.8e12, 15.7e12, 7.8e12, 3.9e12, 900e9))
        assert p.bound == "memory"
        assert p.time == pytest.approx(32 * 2 * (4_194_402 + 2_097_152) / 900e9)

    def test_a_unit_in_a_count_is_an_error(self):
        text = (DATA / "nvprof-metrics-constructed.csv").read_text().replace(",2097152,2097152,2097152",
                                                                             ",2097152,2097152,2.1M")
        with pytest.raises(ProfileError, match=r"saxpy.*dram_write_transactions: '2.1M' is not a count"):
            read_nvprof(text)

    def test_a_row_given_twice_or_with_other_invocations_is_refused(self):
        text = (DATA / "nvprof-metrics-constructed.csv").read_text()
        row = next(line for line in text.splitlines() if "saxpy" in line and "dram_read_transactions" in line)
        with pytest.raises(ProfileError, match="given twice"):
            read_nvprof(text.replace(row, row + "\n" + row))
        other = row.replace(',2,', ',3,', 1)
        with pytest.raises(ProfileError, match="2 invocations in one row and 3 in another"):
            read_nvprof(text.replace(row, other))

    def test_a_row_cut_short_is_said(self):
        text = (DATA / "nvprof-metrics-constructed.csv").read_text().rstrip("\n")
        profile = read_nvprof(text[: text.rindex(",")])
        assert any("fewer columns than the header" in note for note in profile.notes)

    def test_no_table(self):
        with pytest.raises(ProfileError, match="no nvprof metric table"):
            read_nvprof("==1== NVPROF is profiling process 1\n==1== Profiling result:\nNo kernels were profiled.\n")


def test_a_negative_count_in_an_oclgrind_histogram_is_refused():
    text = (DATA / "oclgrind-opencl_program-256.txt").read_text().replace("             256 - fadd",
                                                                           "            -256 - fadd", 1)
    with pytest.raises(ProfileError, match="a negative or impossible count in its histogram"):
        read_oclgrind(text)


class TestOclgrindRecorded:
    @pytest.fixture(scope="class")
    @classmethod
    def profile(cls):
        text = (DATA / "oclgrind-opencl_program-256.txt").read_text()
        return read_oclgrind(text, ir=[(DATA / "oclgrind-opencl_program-256.ll").read_text()],
                             work_items={"saxpy": 256, "dexp": 256, "hash": 256})

    def test_saxpy(self, profile):
        saxpy = profile.kernel("saxpy")
        assert saxpy.launches == 2
        m = saxpy.metrics
        assert (m["fp32"], m["fma_fp32"], m["fp64"]) == (512, 512, 0)  # one llvm.fmuladd.f32 per work-item
        assert m["ldst"] == 2 * 3 * 256 and m["int"] == 2 * 2 * 256  # loads + store; getelementptr
        assert m["dram_read"] == 2 * 2048 / 32 and m["dram_write"] == 2 * 1024 / 32
        assert m["global_ldst"] == m["ldst"] and m["local_ldst"] == 0  # every access of saxpy is global
        assert m["inst_warp"] == 2 * 8 * 256 / 32  # 2 gep, 2 loads, get_global_id, fmuladd, ret, store
        # Issued by a CPU's pipes (inst_alu): get_global_id, fmuladd, ret; the geps fold into the loads' and the
        # store's addressing, which the load and store ports issue.
        assert m["inst_alu"] == 2 * 3 * 256

    def test_fp64_from_the_ir_and_the_builtin(self, profile):
        dexp = profile.kernel("dexp")
        m = dexp.metrics
        # fadd + fdiv on double (the IR says), exp(double) at 8 instructions.
        assert (m["fp64"], m["fp32"]) == (256 * (1 + 1 + 8), 0)
        assert m["local_ldst"] == 512 and m["local_load_bytes"] == 2048
        assert not dexp.notes
        assert dexp.counts().fp64 == m["fp64"]

    def test_elementary_calls_are_kept_and_a_device_cost_replaces_the_fixed_one(self, profile):
        dexp = profile.kernel("dexp")
        assert dexp.elementary_calls("fp64") == 256 and dexp.elementary_calls("fp32") == 0
        base = dexp.counts()
        # 60 instructions a call in place of 8: 256 calls x 52 more fp64 instructions, and as many more lanes of
        # warp instructions; an fp32 cost leaves an fp64 kernel alone.
        priced = dexp.counts({"fp64": 60.0, "fp32": 99.0})
        assert priced.fp64 == base.fp64 + 256 * 52 and priced.fp32 == base.fp32
        assert priced.inst_warp == pytest.approx(base.inst_warp + 256 * 52 / 32)
        assert dexp.counts({"fp64": 8.0}) == base
        saxpy = profile.kernel("saxpy")
        assert saxpy.counts({"fp32": 60.0}) == saxpy.counts()  # no calls, nothing to price

    def test_integer_kernel(self, profile):
        m = profile.kernel("hash").metrics
        assert (m["fp32"], m["fp64"]) == (0, 0)
        assert m["int"] == 4096 + 2304 + 2048 + 2048 + 2048 + 256  # add, icmp, lshr, mul, xor, gep
        assert m["inst_warp"] * 32 == 4608 + 4096 + 2304 + 2048 * 3 + 256 * 5  # phi left out

    def test_without_ir_the_precision_is_guessed_and_said(self):
        profile = read_oclgrind((DATA / "oclgrind-opencl_program-256.txt").read_text())
        dexp = profile.kernel("dexp")
        assert dexp.metrics["fp64"] == 256 * 10  # exp(double) tells fp64
        assert any("taken as fp64" in note for note in dexp.notes)

    def test_no_histogram(self):
        with pytest.raises(ProfileError, match="no Oclgrind instruction histogram"):
            read_oclgrind("hello\n")


def test_unknown_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("nothing to see\n")
    with pytest.raises(ProfileError, match="not a perfcast profile nor the output of ncu, nvprof, oclgrind"):
        read_profile(path)


def test_projection_view_of_the_real_a100_capture():
    """The §4 metrics of the A100 capture: FP by kind, bytes per level, shared wavefronts and bank conflicts."""
    from perfcast.profiles.projection_input import projected_kernel

    sgemm = read_profile(DATA / "ncu-details-a100-bert.csv").kernel("ampere_sgemm_32x32_sliced1x4_tn")
    m = sgemm.metrics
    assert (m["add_fp32"], m["mul_fp32"]) == (3 * 196_608, 3 * 262_144)
    assert m["clock_hz"] == pytest.approx(998_252_314.81, rel=0.2)  # averaged over the launches, not summed
    kernel, notes = projected_kernel(sgemm, time=3 * 20e-6)
    assert kernel.flop == 2 * 3 * 4_194_304 + 3 * (196_608 + 262_144)
    assert kernel.hits["DRAM"] == m["dram_bytes"]
    assert kernel.hits["L1"] == 0  # L2 carries more than L1 asked for: clamped, and said
    assert any("L1 carries" in note for note in notes) and "no active-threads metric: full warps assumed" in notes
    wavefronts = m["shared_wavefronts_ld"] + m["shared_wavefronts_st"]
    conflicts = m["shared_conflicts_ld"] + m["shared_conflicts_st"]
    assert kernel.shared_efficiency == pytest.approx((wavefronts - conflicts) / wavefronts)
    assert kernel.shared_bytes == (wavefronts - conflicts) * 128
    with pytest.raises(ProfileError, match="no measured duration"):
        projected_kernel(sgemm)


def test_oclgrind_gives_the_projection_its_fp_kinds_and_bytes():
    text = (DATA / "oclgrind-opencl_program-256.txt").read_text()
    profile = read_oclgrind(text, ir=[(DATA / "oclgrind-opencl_program-256.ll").read_text()])
    dexp = profile.kernel("dexp").metrics
    assert (dexp["add_fp64"], dexp["mul_fp64"], dexp["add_fp32"]) == (256, 0, 0)  # one fadd; fdiv is neither
    saxpy = profile.kernel("saxpy").metrics
    assert saxpy["l1_bytes"] == 2 * (2048 + 1024) == saxpy["dram_bytes"]


def test_an_oclgrind_histogram_after_program_output_on_its_line_is_read():
    # A program that prints without a newline (a progress line) puts Oclgrind's header after its text
    # (seen with Rodinia srad); that launch must not be lost, or the per-launch matching shifts.
    text = (DATA / "oclgrind-opencl_program-256.txt").read_text()
    first = text.index("Instructions executed for kernel")
    shifted = text[:first] + "Iterations Progress: hidden" + text[first:]
    from perfcast.profiles.oclgrind import read_oclgrind_launches

    assert [p.name for p in read_oclgrind_launches(shifted)] == [p.name for p in read_oclgrind_launches(text)]
    assert len(read_oclgrind_launches(text)) >= 2


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_a_csv_with_a_byte_order_mark_or_in_utf16_reads_like_utf8(tmp_path, encoding):
    text = (DATA / "ncu-raw-constructed.csv").read_text()
    path = tmp_path / "p.csv"
    path.write_bytes(text.encode(encoding))
    assert read_profile(path).kernel("triad").launches == 2


def test_utf16_without_its_mark_is_named(tmp_path):
    path = tmp_path / "p.csv"
    path.write_bytes((DATA / "ncu-raw-constructed.csv").read_text().encode("utf-16-le"))
    with pytest.raises(ProfileError, match="UTF-16 without a byte-order mark"):
        read_profile(path)


def test_the_projection_takes_the_fp_share_of_issued_instructions_from_a_profile():
    from perfcast.profiles.profile import KernelProfile
    from perfcast.profiles.projection_input import projected_kernel

    metrics = {"fma_fp32": 600.0, "add_fp32": 100.0, "mul_fp32": 100.0, "inst_warp": 50.0, "threads_per_inst": 16.0,
               "l1_bytes": 4096.0, "dram_bytes": 1024.0}
    kernel, notes = projected_kernel(KernelProfile("k", 1, metrics, duration=1e-6))
    assert kernel.fp_issue_share == pytest.approx(800 / (16 * 50))  # 800 FP of 800 thread instructions issued
    half, _ = projected_kernel(KernelProfile("k", 1, {**metrics, "inst_warp": 100.0}, duration=1e-6))
    assert half.fp_issue_share == pytest.approx(0.5)
    broken, notes = projected_kernel(KernelProfile("k", 1, {**metrics, "inst_warp": 10.0}, duration=1e-6))
    assert broken.fp_issue_share is None and any("exceed the instructions issued" in n for n in notes)
    unknown, notes = projected_kernel(KernelProfile("k", 1, {k: v for k, v in metrics.items() if k != "inst_warp"},
                                                    duration=1e-6))
    assert unknown.fp_issue_share is None and any("FP issue share is unknown" in n for n in notes)


def _cells(line: str) -> list[str]:
    """Return a CSV row's cells as written (quotes kept), or [] for a line that is not a row."""
    import csv

    if not line.startswith('"'):
        return []
    return [f'"{cell}"' for cell in next(csv.reader([line]))]


class TestAtomics:
    """atomics (docs/models.md §3.4): the read-modify-writes of OpenCL's atomic builtins and LLVM's atomic opcodes."""

    # suite.cl's histogram as Oclgrind counts 256 work-items: one local atomic_inc each, 160 global merges.
    HISTOGRAM = """Instructions executed for kernel 'histogram256':
             512 - call _Z7barrierj()
             256 - call _Z10atomic_incPU3AS3Vj()
             160 - call _Z10atomic_addPU3AS1Vjj()
              40 - call _Z25atomic_fetch_add_explicitPU3AS4VU7_Atomicij12memory_order()
              30 - call _Z11atomic_loadPU3AS4VU7_Atomici()
               7 - call _Z8atom_xorPU3AS1Vjj()
               5 - atomicrmw
               3 - cmpxchg
             256 - load global (256 bytes)
             256 - ret
"""

    def test_every_read_modify_write_counts_once_and_stays_an_instruction(self):
        profile = read_oclgrind(self.HISTOGRAM).kernel("histogram256")
        assert profile.metrics["atomics"] == 256 + 160 + 40 + 7 + 5 + 3  # atomic_load reads only: left out
        assert profile.metrics["inst_warp"] * 32 == pytest.approx(512 + 256 + 160 + 40 + 30 + 7 + 5 + 3 + 256 + 256)

    def test_a_real_profile_of_the_suites_histogram_counts_its_atomics(self):
        # Oclgrind 21.10's own names, through a campaign (PoCL, Xeon VM): one local atomic_inc per work-item, and
        # the merges of each group's non-zero bins (256 random bytes fill about 162 of 256 bins: 0.63 each).
        from perfcast.campaign.archive import Archive
        from perfcast.campaign.projection import ArchiveRun

        archive = (Path(__file__).parents[2] / "docs" / "validation" / "campaign-pocl" / "xeon-avx512-issue"
                   / "campaign-pocl-xeon-issue.zip")
        histogram = ArchiveRun.of(Archive.read(archive)).profiles.kernel("histogram256")
        assert histogram.metrics["atomics"] / histogram.work_items == pytest.approx(1 + 162 / 256, rel=0.02)

    def test_a_kernel_without_atomics_has_none(self):
        text = (DATA / "oclgrind-opencl_program-256.txt").read_text()
        assert all(k.metrics["atomics"] == 0 for k in read_oclgrind(text).kernels)


class TestBarriers:
    """barriers (docs/models.md §3.9): every work-item's crossings of a work-group barrier, of either spelling."""

    TREE = """Instructions executed for kernel 'tree':
             768 - call _Z7barrierj()
             256 - call _Z18work_group_barrierj()
             128 - call _Z18work_group_barrierj12memory_scope()
              64 - call _Z12get_local_idj()
            1024 - load local (4096 bytes)
              64 - ret
"""

    def test_each_spelling_counts_and_stays_an_instruction(self):
        profile = read_oclgrind(self.TREE).kernel("tree")
        assert profile.metrics["barriers"] == 768 + 256 + 128
        assert profile.metrics["inst_warp"] * 32 == pytest.approx(768 + 256 + 128 + 64 + 1024 + 64)

    def test_a_real_histogram_counts_one_barrier_a_work_item_where_the_kernel_has_one(self):
        # Oclgrind 21.10's output for a program of three kernels, 256 work-items each; only dexp has a barrier.
        kernels = {k.name: k for k in read_oclgrind((DATA / "oclgrind-opencl_program-256.txt").read_text()).kernels}
        assert kernels["dexp"].metrics["barriers"] == 256
        assert kernels["saxpy"].metrics["barriers"] == kernels["hash"].metrics["barriers"] == 0

    def test_the_histogram_crosses_two_barriers_a_work_item(self):
        assert read_oclgrind(TestAtomics.HISTOGRAM).kernel("histogram256").metrics["barriers"] == 512


class TestIntegerDivisions:
    """div_int (docs/models.md §3.2): the integer divisions a divider executes, counted from Oclgrind's histogram."""

    # The index arithmetic of a 3D stencil's work-item, as LLVM 15 leaves it (its DivRemPairs pass has already
    # rewritten i % n as i - (i / n) * n), and a division by a constant, which becomes a multiply.
    IR = """define spir_kernel void @index(i32 %n, i32 %nn) {
  %z = sdiv i32 %i, %nn
  %q = sdiv i32 %i.frozen, %n
  %y = srem i32 %q, %n
  %x = srem i32 %i, %n
  %half = sdiv i32 %m, 2
  %v = udiv <8 x i32> %a, %b
  ret void
}
"""
    HISTOGRAM = """Instructions executed for kernel 'index':
             400 - sdiv
             200 - srem
              10 - udiv
             100 - ret
"""

    def test_constant_divisors_and_paired_remainders_are_not_divisions(self):
        profile = read_oclgrind(self.HISTOGRAM, ir=[self.IR]).kernel("index")
        # sdiv: 2 of its 3 uses divide by a run-time value; srem: %x = i % n pairs with no division of i by n
        # (the division of i by n is of %i.frozen), %y = q % n neither: both are divisions. udiv: 8 lanes.
        assert profile.metrics["div_int"] == pytest.approx(400 * 2 / 3 + 200 + 10 * 8)
        assert profile.metrics["int"] == pytest.approx(400 + 200 + 80)  # every one is still an integer instruction

    def test_a_remainder_of_a_divisions_operands_comes_with_it(self):
        ir = self.IR.replace("%x = srem i32 %i, %n", "%x = srem i32 %i.frozen, %n")
        profile = read_oclgrind(self.HISTOGRAM, ir=[ir]).kernel("index")
        assert profile.metrics["div_int"] == pytest.approx(400 * 2 / 3 + 200 / 2 + 80)

    def test_without_the_ir_every_division_and_remainder_counts(self):
        profile = read_oclgrind(self.HISTOGRAM).kernel("index")
        assert profile.metrics["div_int"] == 610

    def test_a_kernel_without_divisions_has_none(self):
        text = (DATA / "oclgrind-opencl_program-256.txt").read_text()
        profile = read_oclgrind(text, ir=[(DATA / "oclgrind-opencl_program-256.ll").read_text()])
        assert all(k.metrics["div_int"] == 0 for k in profile.kernels)

    def test_shares_are_per_vector_width_and_remainders_pair_only_within_a_function(self):
        ir = """define spir_kernel void @k(i32 %n) {
  %a = sdiv i32 %i, %n
  %v = sdiv <8 x i32> %w, splat (i32 3)
  %0 = sdiv i32 %x, %n
  call void @helper(i32 %n)
  ret void
}
define void @helper(i32 %n) {
  %1 = srem i32 %x, %n
  ret void
}
"""
        text = "Instructions executed for kernel 'k':\n  100 - sdiv\n  10 - srem\n"
        profile = read_oclgrind(text, ir=[ir]).kernel("k")
        # sdiv: 2 scalar uses (both divide), 1 of 8 lanes (a constant): 100 executions split 2:1 over the widths,
        # 2/3 x 100 x 1 lane divide; the helper's remainder is no pair of the kernel's %0 = x / n (another function).
        assert profile.metrics["div_int"] == pytest.approx(100 * 2 / 3 + 10)
        assert not any("some uses divide by a constant" in note for note in profile.notes)
        without = read_oclgrind(text).kernel("k")
        assert any("no IR" in note for note in without.notes)


def test_an_integer_kernel_is_read_by_its_integer_instructions():
    from perfcast.profiles.profile import KernelProfile
    from perfcast.profiles.projection_input import projected_kernel

    metrics = {"int": 900.0, "fma_fp32": 0.0, "inst_warp": 40.0, "l1_bytes": 4096.0, "dram_bytes": 1024.0}
    kernel, notes = projected_kernel(KernelProfile("hash", 1, metrics, duration=1e-6), "int32")
    # One count of integer instructions: ADD/MUL, one op each; no FP issue share (phi is of FP instructions).
    assert (kernel.n_fma, kernel.n_add, kernel.n_mul, kernel.flop) == (0.0, 900.0, 0.0, 900.0)
    assert kernel.fp_issue_share is None and any("int32 ADD/MUL" in n for n in notes)
    assert not any("FP issue share" in n for n in notes)
    split = {**metrics, "fma_int32": 100.0, "add_int32": 50.0, "mul_int32": 25.0}
    kinds, notes = projected_kernel(KernelProfile("hash", 1, split, duration=1e-6), "int32")
    assert (kinds.n_fma, kinds.n_add, kinds.n_mul, kinds.flop) == (100.0, 50.0, 25.0, 275.0)
    assert not any("int32 ADD/MUL" in n for n in notes)
    with pytest.raises(ProfileError, match="no integer instruction count"):
        projected_kernel(KernelProfile("hash", 1, {"l1_bytes": 1.0}, duration=1e-6), "int32")
    with pytest.raises(ProfileError, match="executes no integer instruction"):
        projected_kernel(KernelProfile("hash", 1, {**metrics, "int": 0.0}, duration=1e-6), "int32")


def test_the_issued_instructions_leave_out_addressing_free_casts_memory_and_fused_branches():
    """inst_alu, the instructions a CPU's pipes issue, hand-counted: 1020 counted (phis aside); 150 geps, 100 sext,
    50 zext, 20 trunc fold or rename; 120 loads and stores go to their ports; 80 of the 90 branches fuse with the 80
    compares before them."""
    from perfcast.profiles.oclgrind import read_oclgrind_launches

    histogram = """Instructions executed for kernel 'k':
             300 - phi
             200 - add
             150 - getelementptr
             100 - sext
              90 - br
              80 - icmp
              70 - load global (280 bytes)
              60 - fmul
              50 - zext
              50 - store global (200 bytes)
              40 - select
              30 - sitofp
              20 - trunc
              20 - call _Z13get_global_idj()
              20 - xor
              20 - mul
              20 - ret
"""
    (profile,) = read_oclgrind_launches(histogram)
    m = profile.metrics
    assert m["inst_warp"] * 32 == 1020
    # 1020 - (150 + 100 + 50 + 20) - (70 + 50) - min(90, 80): add, fmul, select, sitofp (a real conversion), the
    # work-item query, xor, mul, ret, 80 compares and the 10 branches no compare fused with.
    assert m["inst_alu"] == 1020 - 320 - 120 - 80 == 200 + 60 + 40 + 30 + 20 + 20 + 20 + 20 + 80 + 10
