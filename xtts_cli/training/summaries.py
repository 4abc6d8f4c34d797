"""TensorBoard's event files of a run: what a resumed run drops of them (the steps it trains again)."""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf

from xtts_cli.config.editing import write_atomically

EVENT_FILES = "events.out.tfevents.*"


def drop_summaries_after(directory: Path, step: int) -> int:
    """Rewrite each TensorBoard event file under `directory` that holds summaries of steps after `step`
    (written after the last checkpoint by a run that was killed) without them, and without a record
    torn by the kill: a resumed run writes those steps again, and TensorBoard would draw each twice.
    Each file is replaced whole or not at all; returns the number of events dropped."""
    dropped = 0
    for path in sorted(Path(directory).rglob(EVENT_FILES)):
        kept, later, torn = [], 0, False
        try:
            for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
                if tf.compat.v1.Event.FromString(record).step <= step:
                    kept.append(record)
                else:
                    later += 1
        except tf.errors.DataLossError:  # a record cut short by the kill: what came before it is kept
            torn = True
        dropped += later
        if torn or later:  # framed by TensorFlow's own writer, then written as every run file is
            framed = path.with_name(f".{path.name}.framed")
            with tf.io.TFRecordWriter(str(framed)) as out:
                for record in kept:
                    out.write(record)
            write_atomically(path, framed.read_bytes(), backup=False)
            framed.unlink()
    return dropped
