"""Device descriptions: malformed files give errors naming the file, the field and the problem."""

import pytest

from perfcast.devices.catalog import DeviceFileError, device_to_yaml, load_device_file, parse_device_text
from perfcast.devices.schema import Device, InstructionKind, Precision

VALID = """
name: toy-gpu
full_name: Toy GPU
kind: gpu
vendor: Nobody
provenance: {source: spec, reference: toy datasheet}
compute_units: 2
threads: 2048
warp_size: 32
clock: {boost: 1 GHz}
peak:
  fp32: {fma: 1 TFLOP/s, add_mul: 500 GFLOP/s}
memory:
  - {level: shared, size: 48 KiB, scope: per_unit}
  - {level: DRAM, size: 4 GiB,
     bandwidth: {value: 100 GB/s, source: measured, tool: stream, date: 2026-11-22, repetitions: 10, spread: 0.02}}
host_link: {name: PCIe 3.0 x16, bandwidth: 15.75 GB/s}
"""


def problems(text: str, tmp_path) -> str:
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(DeviceFileError) as caught:
        load_device_file(path)
    message = str(caught.value)
    assert str(path) in message, "the error must name the file"
    return message


def test_valid_file_reads_all_figures():
    device = parse_device_text(VALID)
    assert device.peak[Precision.FP32][InstructionKind.FMA].value == 1e12
    assert device.peak_compute("fp32") == 1e12
    assert device.dram_bandwidth == 100e9
    dram = device.memory_level("DRAM").bandwidth
    assert dram.provenance.source == "measured"
    assert dram.provenance.repetitions == 10
    assert device.memory_level("shared").size.value == 48 * 1024
    assert device.memory_level("shared").size.provenance.reference == "toy datasheet"
    assert device.simd_lanes("fp32") == 32


def test_round_trip_through_yaml():
    device = parse_device_text(VALID)
    assert parse_device_text(device_to_yaml(device)) == device


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        ("compute_units: 2\n", "", "compute_units", "required field is missing"),
        ("fma: 1 TFLOP/s", "fma: 1 TB/s", "peak.fp32.fma", "not a compute unit"),
        ("fma: 1 TFLOP/s", "fma: lots", "peak.fp32.fma", "cannot read"),
        ("fma: 1 TFLOP/s", "fma: -1 TFLOP/s", "peak.fp32.fma.value", "greater than 0"),
        ("fp32:", "fp33:", "peak.fp33", "fp32"),
        ("size: 48 KiB", "size: 48 KiB/s", "memory[0].size", "not a bytes unit"),
        ("tool: stream, ", "", "memory[1].bandwidth.provenance", "needs tool"),
        ("date: 2026-11-22, ", "", "memory[1].bandwidth.provenance", "needs date"),
        ("warp_size: 32\n", "", "(top level)", "a gpu needs warp_size"),
        ("kind: gpu", "kind: fpga", "kind", "'cpu' or 'gpu'"),
        ("name: toy-gpu", "name: Toy GPU!", "name", "pattern"),
        ("add_mul: 500 GFLOP/s", "add_mul: 5 TFLOP/s", "(top level)", "exceeds fma"),
        ("level: shared", "level: DRAM", "(top level)", "listed twice"),
        ("level: DRAM", "level: L3", "(top level)", "needs a DRAM level"),
        ("clock: {boost: 1 GHz}", "clock: {}", "clock", "base or boost"),
        ("threads: 2048", "threads: 1", "(top level)", "threads (1) < compute_units (2)"),
        ("vendor: Nobody", "vendor: Nobody\nsurprise: 1", "surprise", "Extra inputs"),
    ],
)
def test_malformed_field_is_named(tmp_path, old, new, field, message):
    assert old in VALID
    text = problems(VALID.replace(old, new, 1), tmp_path)
    assert f"{field}:" in text
    assert message in text


def test_estimated_figure_needs_method(tmp_path):
    text = problems(VALID.replace("add_mul: 500 GFLOP/s", "add_mul: {value: 500 GFLOP/s, source: estimated}"), tmp_path)
    assert "peak.fp32.add_mul.provenance" in text and "needs method" in text


def test_bare_figure_needs_a_default_provenance(tmp_path):
    text = problems(VALID.replace("provenance: {source: spec, reference: toy datasheet}\n", ""), tmp_path)
    assert "no default 'provenance'" in text
    assert "provenance: required field is missing" in text


def test_several_problems_are_all_listed(tmp_path):
    text = problems(VALID.replace("compute_units: 2\n", "").replace("fma: 1 TFLOP/s", "fma: 1 TB/s"), tmp_path)
    assert "compute_units:" in text and "peak.fp32.fma:" in text


def test_yaml_syntax_error_names_the_line(tmp_path):
    text = problems(VALID.replace("peak:\n", "peak: [\n"), tmp_path)
    assert "not valid YAML (line" in text


def test_not_a_mapping(tmp_path):
    assert "expected a mapping" in problems("- just\n- a list\n", tmp_path)


def test_missing_file(tmp_path):
    with pytest.raises(DeviceFileError, match="cannot read"):
        load_device_file(tmp_path / "absent.yaml")


def test_cpu_lanes_follow_precision():
    device = Device.from_mapping(
        {
            "name": "toy-cpu", "full_name": "Toy CPU", "kind": "cpu", "vendor": "x",
            "provenance": {"source": "estimated", "method": "made up for a test"},
            "compute_units": 4, "threads": 8, "simd_width_bits": 256, "clock": {"base": "3 GHz"},
            "peak": {"fp64": {"fma": "192 GFLOP/s"}},
            "memory": [{"level": "DRAM", "bandwidth": "50 GB/s"}],
        }
    )
    assert device.simd_lanes("fp64") == 4
    assert device.simd_lanes("fp32") == 8
    with pytest.raises(LookupError, match="no fp32 peak"):
        device.peak_compute("fp32")


def test_one_way_to_make_measured_and_estimated_figures():
    import datetime

    from perfcast.devices.schema import Figure, Provenance, device_slug

    figure = Figure.measured(1e9, "stream", "2026-11-22", repetitions=5, spread=0.123456)
    assert figure.provenance == Provenance(source="measured", tool="stream", date=datetime.date(2026, 11, 22),
                                           repetitions=5, spread=0.1235)
    assert figure.fields() == {"value": 1e9, "source": "measured", "tool": "stream", "date": "2026-11-22",
                               "repetitions": 5, "spread": 0.1235}
    assert Figure.estimated(2.0, "2 x 1").provenance.describe() == "2 x 1"
    assert Provenance.measured("probe").date == datetime.date.today()
    assert device_slug("NVIDIA H100 80GB HBM3", "cuda") == "cuda-nvidia-h100-80gb-hbm3"
    assert device_slug("  ***  ") == "device"
    assert len(device_slug("x" * 200, "opencl")) == 60


def test_fp32_issue_share_is_a_gpus_fraction_with_its_provenance(tmp_path):
    line = 'fp32_issue_share: {value: 0.5, source: estimated, method: "64 lanes over 4 x 32 issued per clock"}\n'
    text = VALID.replace("memory:\n", line + "memory:\n", 1)
    device = parse_device_text(text)
    assert device.fp32_issue_share.value == 0.5
    assert device.fp32_issue_share.provenance.method.startswith("64 lanes")
    assert parse_device_text(device_to_yaml(device)) == device
    assert "fp32_issue_share" in problems(text.replace("value: 0.5", "value: 1.5"), tmp_path)
    assert "greater than 0" in problems(text.replace("value: 0.5", "value: 0"), tmp_path)
    assert "plain number" in problems(text.replace("value: 0.5", "value: 50 %"), tmp_path)
