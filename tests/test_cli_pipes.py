"""Output to a pipe or a file is whole: no table fitted to 80 columns, no cell wrapped or cut ('kern…').

The commands run under typer's runner, whose stdout is not a terminal, as in `perfcast ... | less`, `> out.txt`,
CI logs and subprocess; each prints a table with a long cell, which must come out on one line.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfcast.cli import app

DATA = Path(__file__).parent / "data"
EXAMPLES = Path(__file__).parents[1] / "examples"
KERNEL = """#define N 4096
void a_kernel_with_a_long_name_to_see_whether_a_cell_is_cut(const float x[N], float y[N]) {
    for (int i = 0; i < N; i++) y[i] = 2 * x[i];
}
"""


def _cases(tmp_path: Path) -> list[tuple[list[str], str]]:
    kernel = tmp_path / "k.c"
    kernel.write_text(KERNEL)
    annotated = tmp_path / "annotated_with_a_long_file_name_for_the_corpus_table.c"
    annotated.write_text("#define N 8\n/* expect: N|element -> N|element */\n"
                         "void f(const float x[N], float y[N]) { for (int i = 0; i < N; i++) y[i] = x[i]; }\n")
    return [
        (["devices", "list"], "NVIDIA A100 SXM4 40GB"),
        (["devices", "show", "a100-40gb"], "NVIDIA A100 SXM4 40GB"),
        (["hull", "1024x1024|neighb(3x3) -> 1024x1024|element", "-d", "gtx470", "--f", "2"],
         "NVIDIA GeForce GTX 470 specifications; NVIDIA Fermi (GF100) architecture whitepaper"),
        (["roofline", "-d", "a100-40gb", "-k", "a_kernel_with_a_long_name_to_see_whether_a_cell_is_cut:1e12:1e9"],
         "a_kernel_with_a_long_name_to_see_whether_a_cell_is_cut"),
        (["profile", "--from", str(DATA / "profiles" / "ncu-raw-constructed.csv"), "-o", str(tmp_path / "p.yaml")],
         "dgemm_naive"),
        (["classify", str(kernel), "--predict", "-d", "gtx470", "-d", "core-i7-930"],
         "a_kernel_with_a_long_name_to_see_whether_a_cell_is_cut"),
        (["validate", "classify", "--corpus", str(annotated)], "annotated_with_a_long_file_name_for_the_corpus_table.c"),
        (["app", str(EXAMPLES / "fast-focus.yaml"), "-d", "gtx470", "-d", "core-i7-930", "-d", "a100-40gb"],
         "x-projection to host"),
        (["predict", str(DATA / "profiles" / "ncu-raw-h200-campaign.csv"), "-d", "h200", "-d", "a100-40gb"],
         "horner_fp64 on a100-40gb: memory bound"),
        (["project", str(DATA / "profiles" / "ncu-raw-h200-campaign.csv"), "--from", "h200", "--to", "h100-sxm5",
          "--time", "triad=67us"], "triad -> h100-sxm5 (fp32)"),
        (["tune", "replay", str(DATA / "tune" / "convolution-a100-subset.json"), "-s", "random", "--seeds", "2"],
         "evaluations to reach a fraction of the optimum"),
        (["choose", "corpus:convolution-milo", "--source", "rtx-a4000", "-d", "rtx-a6000", "-d", "rtx-a4000"],
         "validated cases (projection, same vendor; MAPE"),
    ]


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc preprocesses the C files")
def test_every_table_is_whole_outside_a_terminal(tmp_path: Path) -> None:
    runner = CliRunner()
    for args, long_cell in _cases(tmp_path):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
        assert "…" not in result.stdout, (args, result.stdout)
        assert any(long_cell in line for line in result.stdout.splitlines()), (args, result.stdout)


def test_a_real_pipe_gets_lines_longer_than_80_columns() -> None:
    done = subprocess.run([sys.executable, "-m", "perfcast", "devices", "list"], capture_output=True, text=True,
                          timeout=120, check=True)
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) > 80 and "…" not in done.stdout
    header = next(line for line in lines if "GFLOP/s" in line)
    assert "fp32" in next(line for line in lines if "kind" in line) or "fp32" in header


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc preprocesses the C files")
def test_tables_as_csv_on_standard_output_or_in_a_file(tmp_path: Path) -> None:
    import csv
    import io

    runner = CliRunner()
    annotated = tmp_path / "a.c"
    annotated.write_text("#define N 8\n/* expect: N|element -> N|element */\n"
                         "void f(const float x[N], float y[N]) { for (int i = 0; i < N; i++) y[i] = x[i]; }\n")
    cases = [
        (["devices", "list"], ["name", "device", "kind figures"], "NVIDIA A100 SXM4 40GB"),
        (["roofline", "-d", "a100-40gb", "-k", "kern:1e12:1e9"], ["kernel", "work", "intensity"], "kern"),
        (["profile", "--from", str(DATA / "profiles" / "ncu-raw-constructed.csv"), "-o", str(tmp_path / "p.yaml")],
         ["kernel", "launches", "time"], "dgemm_naive"),
        (["validate", "classify", "--corpus", str(annotated)], ["corpus", "nests", "exact"], "a.c"),
        # commands of several tables: one CSV of tidy rows, a column saying what each row belongs to
        (["hull", "1024x1024|neighb(3x3) -> 1024x1024|element", "-d", "gtx470", "-d", "core-i7-930", "--f", "2,8"],
         ["device", "f", "lower_s", "upper_s"], "core-i7-930"),
        (["app", str(EXAMPLES / "fast-focus.yaml"), "-d", "gtx470", "-d", "core-i7-930"],
         ["device", "step", "kind", "class", "lower_s"], "image to device"),
        (["predict", str(DATA / "profiles" / "ncu-raw-h200-campaign.csv"), "-d", "h200", "-d", "a100-40gb"],
         ["kernel", "device", "time_s", "bound"], "sgemm_tiled"),
        (["tune", "replay", str(DATA / "tune" / "convolution-a100-subset.json"), "-s", "random", "--seeds", "2"],
         ["strategy", "seed", "evaluations", "chosen_fraction"], "random"),
    ]
    for args, header, cell in cases:
        result = runner.invoke(app, [*args, "--csv", "-"])
        assert result.exit_code == 0, (args, result.output)
        rows = list(csv.reader(io.StringIO(result.stdout)))
        assert rows[0][:len(header)] == header, (args, result.stdout)
        assert all(len(row) == len(rows[0]) for row in rows), (args, result.stdout)
        assert any(cell in value for row in rows[1:] for value in row), (args, result.stdout)
        target = tmp_path / "table.csv"
        result = runner.invoke(app, [*args, "--csv", str(target)])
        assert result.exit_code == 0 and list(csv.reader(target.open()))[0][:len(header)] == header
        target.unlink()
    refused = runner.invoke(app, ["devices", "list", "--csv", str(tmp_path / "table.txt")])
    assert refused.exit_code == 2 and ".csv" in refused.output


def test_long_commands_report_each_step_on_a_line_outside_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    from perfcast.cli.common import measuring_progress

    with measuring_progress() as bar:
        task = bar.add_task("starting", total=1.0)
        bar.update(task, description="timing triad", completed=0.25, refresh=True)
        bar.update(task, description="timing triad", completed=0.5, refresh=True)  # the same step: no new line
        bar.update(task, description="timing copy", completed=0.75, refresh=True)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and lines[0].endswith("timing triad") and "25 %" in lines[0] and "left" in lines[0]
    assert "75 %" in lines[1] and lines[1].endswith("timing copy")


def test_an_interrupted_command_says_what_happened(monkeypatch: pytest.MonkeyPatch) -> None:
    import perfcast.cli.devices as devices

    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(devices, "print_table", interrupted)
    result = CliRunner().invoke(app, ["devices", "list"])
    assert result.exit_code == 130 and "interrupted: nothing was written" in result.output
