"""Nsight Compute's source page (SASS with executed-thread counts): the reader on a real export's layout, and the
SASS comparison weighted by it (spec §4)."""

from pathlib import Path

import pytest

from perfcast.errors import InputError
from perfcast.profiles.ncu_source import looks_like_ncu_source, read_ncu_source
from perfcast.profiles.profile import ProfileError
from perfcast.profiles.sass import compare_sass

DATA = Path(__file__).parent.parent / "data"
HEADER = ('"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed",'
          '"Thread Instructions Executed","Predicated-On Thread Instructions Executed"')


def test_a_real_export_is_read_with_offsets_from_the_kernels_start():
    text = (DATA / "ncu" / "source-page-het.csv").read_text()
    assert looks_like_ncu_source(text)
    (name, counts), = read_ncu_source(text).items()
    assert name.startswith("void HET_RGNNMatmulNoScatterGatherListFwProp<")
    assert [(c.offset, c.opcode, c.threads) for c in counts] == [
        (0x0, "IMAD.MOV.U32", 116224.0), (0x10, "IMAD.MOV.U32", 116224.0), (0x20, "S2UR", 116224.0)]


def test_launches_sum_and_the_layouts_variants_are_read():
    """A '#' column, ==PROF== lines, separators, a predicate, a CUDA line without address, two launches."""
    launch = ('"Kernel Name","k",\n"#",' + HEADER + '\n'
              '"1","0x100","  FFMA R1, R2, R3, R4 ","1","4","1,024","1,000"\n'
              '"2","","  y[i] = a * x[i];","","","",""\n'
              '"3","0x110","  @P0 EXIT ","0","1","32","0"\n')
    text = "==PROF== Connected\nprogram output\n" + launch + launch.replace("0x100", "0x200").replace("0x110", "0x210")
    (counts,) = read_ncu_source(text).values()
    assert [(c.offset, c.opcode, c.threads) for c in counts] == [(0, "FFMA", 2048.0), (0x10, "EXIT", 64.0)]
    assert not looks_like_ncu_source("ID,Kernel Name\n")


@pytest.mark.parametrize(("text", "message"), [
    ('"Kernel Name","k",\n"Address","Source","Instructions Executed"\n"0x0","NOP","1"\n', "SourceCounters"),
    ('"Kernel Name","k",\n' + HEADER + '\n"0xzz","NOP","1","1","1"\n', "not hexadecimal"),
    ('"Kernel Name","k",\n' + HEADER + '\n"0x0","NOP","1","1","-3","0"\n', "not a count"),
    ('"Kernel Name","k",\n' + HEADER + '\n"0x0","NOP","1","1","lots","0"\n', "not a number"),
    ("==PROF== nothing profiled\n", "no kernel"),
])
def test_bad_source_pages_are_refused_with_the_reason(text, message):
    with pytest.raises(ProfileError, match=message):
        read_ncu_source(text)


def _page(instructions, threads) -> str:
    """Return a source page in Nsight Compute's layout for `instructions`, each run by threads(instruction)."""
    rows = [f'"{0x7f0000001000 + i.address:#x}","  {i.text} ","0","{threads(i) // 32}","{threads(i):,}","0"'
            for i in instructions]
    return '"Kernel Name","special",\n' + HEADER + "\n" + "\n".join(rows) + "\n"


@pytest.mark.needs_cuda_tools
def test_executed_counts_weigh_the_special_and_other_blocks(tmp_path):
    """Uniform counts give the static ratio; only one kind of block executed gives that kind's own ratio."""
    (c,) = compare_sass(DATA / "sass" / "special.cu", "sm_80", "sm_90", tmp_path)
    compiled = [i for b in c.source_blocks for i in b.instructions]
    special = {i.address for b in c.source_blocks if b.special for i in b.instructions}
    assert special and c.special_source and c.other_source

    def ratio(threads) -> float:
        (counts,) = read_ncu_source(_page(compiled, threads)).values()
        return c.executed_flop_ratio({n.offset: (n.opcode, n.threads) for n in counts})

    assert ratio(lambda i: 4096) == pytest.approx(c.flop_ratio)
    assert ratio(lambda i: 0 if i.address in special else 4096) == pytest.approx(c.other_target / c.other_source)
    assert ratio(lambda i: 4096 if i.address in special else 0) == pytest.approx(c.special_target / c.special_source)
    # Other blocks run 3 times as often as the special ones: (3 O_t + S_t) / (3 O_s + S_s).
    assert ratio(lambda i: 1024 if i.address in special else 3072) == pytest.approx(
        (3 * c.other_target + c.special_target) / (3 * c.other_source + c.special_source))
    mismatched = {i.address: ("NOP", 1.0) for i in compiled}
    with pytest.raises(InputError, match="profiled SASS is not what --sass compiles for sm_80"):
        c.executed_flop_ratio(mismatched)
