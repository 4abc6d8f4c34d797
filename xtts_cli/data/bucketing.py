"""Length buckets: few distinct batch shapes (one compiled step each) and little padding.

Boundaries come from the scanned length distribution (quantiles), so each bucket holds about the
same number of clips whatever the dataset's durations. The scan's frame counts are exact (see
audio_headers.py / audio.py) and silence trimming only shortens a clip, so each item's bucket is
known before any audio is decoded. The pipeline therefore keeps one source per bucket and pads
every batch of bucket k to (text_pads[k], length_pads[k]).

Why not `Dataset.bucket_by_sequence_length` (or its `group_by_window`)? It decides the bucket
after decoding, builds a small dataset per batch, and pads every variable dimension (text too)
to the mel boundary. Measured on cached features (2-core CPU, batch 16, 4 buckets, steady state):
group_by_window 6,300 clips/s, per-bucket sources 9,300, plain padded_batch (no bucketing) 10,000.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BucketPlan:
    boundaries: list[int]  # exclusive upper bound of each bucket's length; the last is max + 1
    length_pads: list[int]  # per bucket: the length every batch in it is padded to (boundary - 1)
    text_pads: list[int]  # per bucket: the longest text in it
    sizes: list[int]  # items per bucket

    @property
    def num_buckets(self) -> int:
        return len(self.boundaries)

    def bucket_of(self, lengths: Sequence[int] | np.ndarray) -> np.ndarray:
        return np.searchsorted(self.boundaries, np.asarray(lengths), side="right")

    def padding_efficiency(self, lengths: Sequence[int] | np.ndarray) -> float:
        """Real frames / padded frames when each item is padded to its bucket's length."""
        frames = np.asarray(lengths)
        return float(frames.sum() / np.asarray(self.length_pads)[self.bucket_of(frames)].sum())


def plan_buckets(
    lengths: Sequence[int], text_lengths: Sequence[int], num_buckets: int, *, min_size: int = 1
) -> BucketPlan:
    """Boundaries at the `num_buckets` quantiles of `lengths`, merged so each bucket holds at least
    `min_size` items (with drop_remainder a smaller bucket would never yield a batch)."""
    frames = np.asarray(lengths, dtype=np.int64)
    texts = np.asarray(text_lengths, dtype=np.int64)
    if frames.size == 0:
        raise ValueError("no items to plan buckets for")
    cuts = (
        np.quantile(frames, np.arange(1, num_buckets) / num_buckets, method="higher").tolist()
        if num_buckets > 1
        else []
    )
    # A boundary b holds lengths < b; cutting just above each quantile keeps the quantile item in
    # the lower bucket instead of opening a bucket for it.
    boundaries = sorted({int(c) + 1 for c in cuts} | {int(frames.max()) + 1})
    boundaries = _merge_small(boundaries, frames, min(min_size, frames.size))
    bucket_of = np.searchsorted(boundaries, frames, side="right")
    sizes = [int((bucket_of == k).sum()) for k in range(len(boundaries))]
    text_pads = [int(texts[bucket_of == k].max()) for k in range(len(boundaries))]
    return BucketPlan(boundaries, [b - 1 for b in boundaries], text_pads, sizes)


def _merge_small(boundaries: list[int], lengths: np.ndarray, min_size: int) -> list[int]:
    boundaries = list(boundaries)
    while len(boundaries) > 1:
        counts = np.bincount(np.searchsorted(boundaries, lengths, side="right"), minlength=len(boundaries))
        small = [k for k, n in enumerate(counts) if n < min_size]
        if not small:
            break
        k = small[0]
        # Merge upward (drop this bucket's upper boundary); the last bucket merges downward.
        boundaries.pop(k if k < len(boundaries) - 1 else k - 1)
    return boundaries
