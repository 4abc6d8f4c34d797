"""TensorBoard's event files of a run: what a resumed run drops of them (the steps it trains again)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import tensorflow as tf

from xtts_cli.config.editing import write_atomically

EVENT_FILES = "events.out.tfevents.*"


def drop_summaries_after(directory: Path, step: int, note: Callable[[str], None]) -> int:
    """Rewrite each TensorBoard event file under `directory` that holds summaries of steps after `step`
    (written after the last checkpoint by a run that was killed) without them, and without a record
    torn by the kill: a resumed run writes those steps again, and TensorBoard would draw each twice.
    Each file is replaced whole or not at all; one that cannot be read, or is damaged before its end,
    is left as it is and named to `note`. Returns the number of events dropped."""
    dropped = 0
    for path in sorted(Path(directory).rglob(EVENT_FILES)):
        kept, later, torn, whole = [], 0, False, 0
        try:
            path.open("rb").close()  # TensorFlow's reader names a folder or a lack of permission less plainly
        except OSError as error:
            note(f"{path} cannot be read ({error.strerror}): left as it is")
            continue
        try:
            for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
                whole += _framed(record)
                if tf.compat.v1.Event.FromString(record).step <= step:
                    kept.append(record)
                else:
                    later += 1
        except tf.errors.DataLossError:
            torn = _torn_at_the_end(path, whole)
            if not torn:  # damaged before its end: records after the damage may be of any step
                note(f"{path} is damaged before its end: left as it is (TensorBoard may draw steps after {step} twice)")
                continue
        dropped += later
        if torn or later:  # framed by TensorFlow's own writer, then written as every run file is
            framed = path.with_name(f".{path.name}.framed")
            with tf.io.TFRecordWriter(str(framed)) as out:
                for record in kept:
                    out.write(record)
            write_atomically(path, framed.read_bytes(), backup=False)
            framed.unlink()
    return dropped


def _framed(record: bytes) -> int:
    # A TFRecord: an 8-byte length, its 4-byte CRC, the data, the data's 4-byte CRC.
    return 8 + 4 + len(record) + 4


def _torn_at_the_end(path: Path, good: int) -> bool:
    """Whether the bytes after the first `good` bytes of whole records are one record cut short (a
    write the kill stopped), not a damaged record with more of the file after it."""
    with path.open("rb") as file:
        file.seek(good)
        header = file.read(12)
        rest = len(file.read())
    if len(header) < 12:
        return True
    return rest < int.from_bytes(header[:8], "little") + 4
