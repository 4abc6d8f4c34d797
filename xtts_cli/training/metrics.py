"""metrics.jsonl: one JSON object per logged step, flushed as written so a crash loses nothing (a
resumed run drops the records of the steps it trains again; `summaries` does the same for TensorBoard)."""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path
from typing import Any, Optional


class MetricsWriter:
    """Appends to metrics.jsonl; `resumed_at`: the step a run restarts from (-1: from nothing), past
    which the records of the steps it will train again (logged before a kill, after the last
    checkpoint) are dropped first, so no step is recorded twice."""

    def __init__(self, path: Path, resumed_at: Optional[int] = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.dropped = 0  # records of steps it will log again
        if resumed_at is not None and self.path.is_file():
            self.dropped = _drop_after(self.path, resumed_at)
        if self.path.is_file() and self.path.stat().st_nlink > 1:
            _own_copy(self.path)
        self._handle = self.path.open("a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        clean = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in record.items()}
        self._handle.write(json.dumps(clean) + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> MetricsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _own_copy(path: Path) -> None:
    """`path` made a file of its own: a run copied with `cp -al` shares it with the run it was copied
    from, and appended to, it had logged the copy's steps into the original's record."""
    kept = path.with_name(f".{path.name}.tmp")
    shutil.copy2(path, kept)
    os.replace(kept, path)


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """All records; a torn last line (crash mid-write) is skipped."""
    records = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def _drop_after(path: Path, step: int) -> int:
    """metrics.jsonl without the records of steps after `step` (and a torn last line), rewritten
    whole or not at all; untouched when it has none. Returns the records dropped."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict) or not isinstance(record.get("step"), int) or record["step"] <= step:
            kept.append(line if line.endswith("\n") else line + "\n")
    if kept != lines:
        from xtts_cli.config.editing import write_atomically

        write_atomically(path, "".join(kept), backup=False)
    return len(lines) - len(kept)
