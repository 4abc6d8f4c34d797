import math

import pytest

from xtts_cli.profiling.sparkline import BARS, sparkline, timeline


def test_ramp_uses_every_bar_in_order():
    assert sparkline(range(8)) == BARS


def test_long_series_is_averaged_into_width_buckets():
    line = sparkline([0, 10] * 100, width=4)
    assert len(line) == 4
    # Buckets of 50 values each average to 5: one level.
    assert len(set(line)) == 1
    assert sparkline([0] * 30 + [10] * 30, width=2) == "▁█"


def test_short_series_is_not_stretched():
    assert len(sparkline([1, 2, 3], width=60)) == 3


def test_missing_values_draw_as_space():
    assert sparkline([0, None, math.nan, 10]) == "▁  █"


def test_constant_series_draws_level():
    line = sparkline([7.0] * 5)
    assert len(line) == 5 and len(set(line)) == 1 and line[0] in BARS


def test_fixed_scale_clips():
    assert sparkline([-50, 50, 150], lo=0, hi=100) == "▁▅█"


def test_empty_and_bad_width():
    assert sparkline([]) == ""
    with pytest.raises(ValueError, match="width"):
        sparkline([1, 2], width=0)


def test_timeline_draws_busy_and_idle_like_the_users_sketch():
    assert timeline("GPU", [40, 40, 10, 10] * 2, lo=0, hi=100, busy_at=25) == "GPU: ██░░██░░"


def test_timeline_on_a_utilisation_scale_and_range_suffix():
    # On a 0-100 scale a 10-40 % cycle is idle all the time.
    line = timeline("GPU", [40, 10] * 4, lo=0, hi=100, unit="%", label_width=5)
    assert line == "GPU:   ░░░░░░░░  10-40 %"


def test_timeline_flat_and_missing():
    assert timeline("GPU", [0, 0, None]) == "GPU: ▒▒ "
