"""The validated bands ship as the committed reports give them, never set by hand."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

import perfcast.choose
from perfcast.choose.bands import (
    ACROSS_VENDORS,
    SAME_VENDOR,
    _ape_band,
    _ratio_band,
    band_for,
    bands_document,
    load_bands,
)
from perfcast.errors import NotFound

ROOT = Path(__file__).parents[2]
SHIPPED = Path(perfcast.choose.__file__).parent / "error_bands.json"


def test_shipped_bands_are_recomputed_from_the_committed_reports():
    """Regenerate with: python -c 'import json; from perfcast.choose.bands import bands_document as b;
    print(json.dumps(b("."), indent=1))' > src/perfcast/choose/error_bands.json"""
    assert json.loads(SHIPPED.read_text()) == bands_document(ROOT)


def test_every_model_and_scope_choose_uses_has_a_band():
    bands = load_bands()
    for key in [("quantitative", "gpu"), ("quantitative", "cpu"), ("boat hull", "gpu"), ("boat hull", "cpu"),
                ("projection", SAME_VENDOR), ("projection", ACROSS_VENDORS)]:
        band = bands[key]
        assert 0 < band.low <= band.high and band.n >= 10 and band.coverage == 0.8


def test_quantitative_gpu_band_agrees_with_the_campaign_report():
    # docs/validation/campaign-h200/report.md and campaign-h100/report.md: quantitative MAPE 34.0 % and 34.5 %
    # over 12 kernels each; the band's MAPE is over the 24.
    band = load_bands()[("quantitative", "gpu")]
    assert band.n == 24 and band.mape == pytest.approx((0.340 + 0.345) / 2, abs=0.001)
    assert band.devices == ("h100-sxm5-cuda", "h200-cuda")  # two Hopper GPUs: the band says so where it is applied


def test_ratio_band_by_hand():
    ratios = [0.5, 1.0, 1.0, 2.0, 4.0]
    band = _ratio_band("m", "s", ratios, ["a", "a"], ["gpu-b", "gpu-a", "gpu-b"])
    assert band.low == pytest.approx(np.quantile(ratios, 0.1)) and band.high == pytest.approx(np.quantile(ratios, 0.9))
    # APE of each: |1/r - 1| = 1, 0, 0, 0.5, 0.75
    assert band.mape == pytest.approx(0.45) and band.source == "a" and band.n == 5
    assert band.devices == ("gpu-a", "gpu-b") and "on 2 device(s): gpu-a, gpu-b" in band.describe()


def test_ape_band_by_hand_and_without_upper_limit():
    band = _ape_band("projection", "same vendor", [0.1, 0.2, 0.5], "c", ["x"])
    a = np.quantile([0.1, 0.2, 0.5], 0.8)
    assert band.low == pytest.approx(1 / (1 + a), abs=1e-4) and band.high == pytest.approx(1 / (1 - a), abs=1e-4)
    assert math.isinf(_ape_band("projection", "x", [0.5, 1.5, 3.0], "c", ["x"]).high)


def test_band_for_unknown_model_and_scope():
    bands = load_bands()
    with pytest.raises(NotFound, match="no validated band for the model"):
        band_for(bands, "astrology", "gpu")
    assert band_for(bands, "quantitative", "fpga") is None
