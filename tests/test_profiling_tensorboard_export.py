import math

import pytest
import tensorflow as tf

from xtts_cli.profiling.tensorboard_export import write_scalars


def read_scalars(logdir):
    """(tag, step) -> value from every event file under `logdir`, read with TF's own reader."""
    found = {}
    for path in tf.io.gfile.glob(str(logdir / "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                # TF2 writes scalars as tensors tagged for the scalars plugin.
                assert value.metadata.plugin_data.plugin_name == "scalars"
                found[(value.tag, event.step)] = float(tf.make_ndarray(value.tensor))
    return found


def test_series_are_written_as_step_indexed_scalars(tmp_path):
    logdir = tmp_path / "run" / "profile"
    export = write_scalars(
        logdir,
        {
            "profile/data_wait_ms": [1.5, 2.5, None, 4.0],
            "gpu0/utilization": {100: 90.0, 110: 10.0, 120: math.nan},
        },
        first_step=7,
    )
    assert export.points == 5 and export.skipped == 2
    assert export.tags == ["profile/data_wait_ms", "gpu0/utilization"]
    assert read_scalars(logdir) == {
        ("profile/data_wait_ms", 7): 1.5,
        ("profile/data_wait_ms", 8): 2.5,
        ("profile/data_wait_ms", 10): 4.0,
        ("gpu0/utilization", 100): 90.0,
        ("gpu0/utilization", 110): 10.0,
    }


def test_empty_name_is_refused(tmp_path):
    with pytest.raises(ValueError, match="scalar name"):
        write_scalars(tmp_path, {"": [1.0]})
