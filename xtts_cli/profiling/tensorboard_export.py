"""Write profiler series as TensorBoard scalars, so step timings and GPU samples sit next to the loss
curves of the run they came from (`tensorboard --logdir <run dir>`)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Optional, Union

import tensorflow as tf
from pydantic import BaseModel, ConfigDict

# Either values for consecutive steps (the first at `first_step`), or an explicit {step: value}.
Series = Union[Sequence[Optional[float]], Mapping[int, Optional[float]]]


class ScalarExport(BaseModel):
    model_config = ConfigDict(frozen=True)

    logdir: str
    tags: list[str]
    points: int
    # Missing (None) and non-finite values are not written: TensorBoard would draw NaN as a gap
    # only in some views and break the y-axis range in others.
    skipped: int


def _points(series: Series, first_step: int) -> list[tuple[int, Optional[float]]]:
    if isinstance(series, Mapping):
        return sorted((int(step), value) for step, value in series.items())
    return [(first_step + offset, value) for offset, value in enumerate(series)]


def write_scalars(
    logdir: Union[str, os.PathLike], series: Mapping[str, Series], *, first_step: int = 0
) -> ScalarExport:
    """Write each named series under its name as tag (`profile/data_wait_ms`, ...) into an event file
    in `logdir` (created if needed)."""

    for name in series:
        if not name or not isinstance(name, str):
            raise ValueError(f"scalar name ({name!r}) must be a non-empty string")
    Path(logdir).mkdir(parents=True, exist_ok=True)
    written = skipped = 0
    writer = tf.summary.create_file_writer(str(logdir))
    try:
        with writer.as_default():
            for name, values in series.items():
                for step, value in _points(values, first_step):
                    if value is None or not math.isfinite(float(value)):
                        skipped += 1
                        continue
                    tf.summary.scalar(name, float(value), step=step)
                    written += 1
        writer.flush()
    finally:
        writer.close()
    return ScalarExport(logdir=str(logdir), tags=list(series), points=written, skipped=skipped)
