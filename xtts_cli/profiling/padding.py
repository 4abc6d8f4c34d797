"""Padding waste: the share of a step's mel work spent on padding, planned from the scanned lengths,
and the change that fits the data (`diagnose`, `profile-step` and `profile-pipeline` say the same)."""

from __future__ import annotations

import math
from typing import Any, Optional

from xtts_cli.config.schema import XttsConfig
from xtts_cli.findings import ConfigChange, Finding

# PERFORMANCE.md: bucketing must keep padding efficiency (real / padded mel frames) >= 85 %.
MIN_PADDING_EFFICIENCY = 0.85


def shown_efficiency(share: float) -> str:
    """A padding efficiency as every command prints it, rounded down to a tenth of a point: 84.96 %
    is not "85 %" under a bar of 85 %, and the table and the finding beside it had said 64 % and 63 %."""
    return f"{math.floor(round(1000 * share, 6)) / 10:.1f} %"


# Batches a length bucket should hold at least for finer buckets to be advised.
BATCHES_PER_BUCKET = 4


def _outlier_cap(config: XttsConfig, items: list, now: float) -> Optional[tuple[float, int, float, float]]:
    """(a data.max_audio_duration, the clips it leaves out, the longest, the padding efficiency then)
    where leaving out the longest clips, 1 % of them at most (or 2), lifts the planned efficiency
    (`now`) to the bar, or by 20 points or more: a few very long clips among short ones set their
    bucket's length, and every clip of it is padded to theirs."""
    import numpy as np

    from xtts_cli.data.bucketing import plan_buckets
    from xtts_cli.data.plan import mel_frames

    data = config.data
    frames = np.asarray([mel_frames(item, data) for item in items])
    durations = np.asarray([item.audio.duration for item in items])
    seconds = np.sort(durations)
    best: Optional[tuple[float, int, float, float]] = None
    for left in range(1, min(max(2, len(items) // 100), len(items) - data.batch_size) + 1):
        cap = math.ceil(seconds[-left - 1] * 10) / 10  # tenths of a second, upward
        kept = frames[durations <= cap]
        if cap >= seconds[-1] or len(kept) < data.batch_size:
            continue
        buckets = plan_buckets(kept, [0] * len(kept), data.num_buckets, min_size=data.batch_size)
        efficiency = buckets.padding_efficiency(kept)
        if best is None or efficiency > best[3] + 0.01:
            best = (cap, len(items) - len(kept), float(seconds[-1]), efficiency)
        if efficiency >= MIN_PADDING_EFFICIENCY:
            break
    return best if best is not None and best[3] >= min(MIN_PADDING_EFFICIENCY, now + 0.2) else None


def padding_finding(config: XttsConfig, info: Any, xla: bool, scan: Any = None) -> Optional[Finding]:
    """Padding waste, with the fix that fits the data: a step that reads mels computes on the
    padding; one that crops segments (a vocoder) does not."""
    # No batch at all: dataset-no-batch says what matters; padding is a share of no batches.
    if info.padding_efficiency >= MIN_PADDING_EFFICIENCY or info.output != "mel" or not info.batches_per_epoch:
        return None
    # Finer buckets only while each still holds a few batches: a bucket's partial last batch
    # is dropped in training, and a bucket of one batch repeats the same clips together.
    most = max(1, info.num_items // (config.data.batch_size * BATCHES_PER_BUCKET))
    finer = min(config.data.num_buckets * 2, 64, most)
    small = ""
    if config.data.pad_to_fixed_length:
        # Every batch padded to the longest clip allowed: buckets pad each only to its own length, with
        # as few shapes as they have buckets.
        fix = ConfigChange(key="data.pad_to_fixed_length", value=False)
        small = (
            f"; data.pad_to_fixed_length pads every batch to data.max_mel_frames ({config.data.max_mel_frames} "
            "frames); length buckets pad each batch to its bucket's length"
        )
    elif not config.data.bucket_by_length:
        fix = ConfigChange(key="data.bucket_by_length", value=True)
        if xla:  # what validate's variable-shapes says, which this finding stands in for
            small = "; and XLA compiles the step again for every new batch shape, seconds each"
    elif (capped := _outlier_cap(config, scan.train, info.padding_efficiency) if scan else None) is not None:
        cap, left, longest, then = capped
        fix = ConfigChange(key="data.max_audio_duration", value=cap)
        small = (
            f"; the {left:,} longest clip{'' if left == 1 else 's'} (up to {longest:.1f} s) set "
            f"{'its' if left == 1 else 'their'} bucket's length, and every clip of it is padded to it: "
            f"data.max_audio_duration {cap:g} leaves {'it' if left == 1 else 'them'} out, {100 * then:.0f} % then"
        )
    elif finer > config.data.num_buckets:
        fix = ConfigChange(key="data.num_buckets", value=finer)
    else:
        fix = None
        batches = info.batches_per_epoch
        small = (
            f"; {info.num_items:,} clips at batch {config.data.batch_size} make {batches:,} batch"
            f"{'' if batches == 1 else 'es'}, too few for finer buckets (each should hold {BATCHES_PER_BUCKET} "
            "batches or more): more data would help, more buckets would not"
        )
    return Finding(
        id="padding-waste",
        severity="warning",
        message=f"padding efficiency is {shown_efficiency(info.padding_efficiency)} (real / padded mel frames, "
        f"planned from the scan): the rest of the step's mel work is on "
        f"padding (bar: >= {100 * MIN_PADDING_EFFICIENCY:.0f} %){small}",
        fix=fix,
    )
