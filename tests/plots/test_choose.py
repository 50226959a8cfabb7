"""The chart of `perfcast choose`: points, intervals (bounded or not), the Pareto front and devices not drawn."""

import math

from perfcast.plots.choose import ChoicePoint, choice_figure


def test_front_intervals_and_missing_values_are_drawn():
    points = [
        ChoicePoint("fast", 1e-3, (0.8e-3, 2e-3), 5e-6, True, measured=1.1e-3),
        ChoicePoint("cheap", 3e-3, (2e-3, math.inf), 1e-6, True),
        ChoicePoint("dominated", 4e-3, None, 6e-6, False),
        ChoicePoint("unpriced", 2e-3, (1e-3, 4e-3), None, False),
    ]
    figure = choice_figure(points, "title", "cost per run (USD)")
    ax = figure.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "unpriced" in ax.get_xlabel() and "fast" not in ax.get_xlabel()
    labels = {text.get_text() for text in ax.texts}
    assert labels == {"fast", "cheap", "dominated"}
    assert ax.get_legend() is not None  # the front joins two devices


def test_nothing_to_draw_still_makes_a_figure():
    figure = choice_figure([ChoicePoint("a", 1.0, None, None, False)], "t", "energy per run (J)")
    assert "a" in figure.axes[0].get_xlabel()
