"""What a resumed run drops of its TensorBoard event files: the steps it trains again, written by real
summary writers into real event files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tensorflow as tf

from xtts_cli.training.summaries import EVENT_FILES, drop_summaries_after


def _steps(directory: Path) -> list[int]:
    return sorted(
        event.step
        for path in directory.rglob(EVENT_FILES)
        for event in map(tf.compat.v1.Event.FromString, tf.data.TFRecordDataset(str(path)).as_numpy_iterator())
        if event.summary.value
    )


def _write(directory: Path, steps: range) -> None:
    writer = tf.summary.create_file_writer(str(directory))
    with writer.as_default():
        for step in steps:
            tf.summary.scalar("loss", 1.0 / step, step=step)
            if step % 4 == 0:
                tf.summary.audio("sample", np.zeros((1, 400, 1), np.float32), 8000, step=step)
    writer.close()


def test_a_resume_drops_the_summaries_after_its_checkpoint_and_a_torn_last_record(tmp_path) -> None:
    board = tmp_path / "tensorboard"
    _write(board, range(1, 11))  # the run's first start: steps 1-10, killed after the checkpoint of step 6
    (first,) = board.glob(EVENT_FILES)
    first.write_bytes(first.read_bytes()[:-7])  # the kill tore the last record
    notes: list[str] = []
    assert drop_summaries_after(board, 6, notes.append) == 4  # 7, 8 (a scalar and an audio clip), 9; 10 was torn
    assert _steps(board) == [1, 2, 3, 4, 4, 5, 6]
    _write(board, range(7, 9))  # the resumed run writes 7 and 8 again, into a file of its own
    assert _steps(board) == [1, 2, 3, 4, 4, 5, 6, 7, 8, 8]
    before = {path: path.stat().st_mtime_ns for path in board.glob(EVENT_FILES)}
    assert (
        drop_summaries_after(board, 8, notes.append) == 0 and notes == []
    )  # nothing after the step: no file is rewritten
    assert {path: path.stat().st_mtime_ns for path in board.glob(EVENT_FILES)} == before
    assert not list(board.glob(".*"))  # no temporary left beside them


def test_a_file_damaged_before_its_end_or_unreadable_is_left_as_it_is_and_named(tmp_path) -> None:
    board = tmp_path / "tensorboard"
    _write(board, range(1, 11))
    (events,) = board.glob(EVENT_FILES)
    damaged = bytearray(events.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF  # a flipped byte mid-file, whole records after it: not a kill's tear
    events.write_bytes(bytes(damaged))
    folder = board / "events.out.tfevents.0.folder"  # a name TensorBoard's glob matches, that no reader opens
    folder.mkdir()
    notes: list[str] = []
    assert drop_summaries_after(board, 6, notes.append) == 0
    assert events.read_bytes() == bytes(damaged)  # the records after the damage are not thrown away
    assert sorted(notes) == [
        f"{folder} cannot be read (Is a directory): left as it is",
        f"{events} is damaged before its end: left as it is (TensorBoard may draw steps after 6 twice)",
    ]
    assert folder.is_dir()
