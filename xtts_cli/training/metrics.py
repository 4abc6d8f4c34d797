"""metrics.jsonl: one JSON object per logged step, flushed as written so a crash loses nothing."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any


class MetricsWriter:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
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


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """All records; a torn last line (crash mid-write) is skipped."""
    records = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records
