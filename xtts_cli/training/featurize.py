"""Mel features on the data device, for the data/model split.

The pipeline hands over padded audio (`output="audio"`); this computes the log-mel and the frame
lengths with the pipeline's own feature function, placed on the data device, so the model's step
sees the same kind of batch whichever side computed the features (the step crops the speaker
reference itself).
"""

from __future__ import annotations

import tensorflow as tf

from xtts_cli.config.schema import DataConfig


def make_featurizer(data: DataConfig, device: str, *, graph: bool = True):

    from xtts_cli.data.features import as_values, log_mel_batch

    def featurize(batch):
        with tf.device(device):
            # Cache and precompute modes hand the audio over as 16-bit samples: scaled here.
            mel, lengths = log_mel_batch(as_values(batch)["audio"], batch["audio_lengths"], data)
            out = {k: v for k, v in batch.items() if k not in ("audio", "audio_lengths")}
            out.update(mel=mel, mel_lengths=lengths)
            return out

    compiled = tf.function(featurize) if graph else featurize

    def on_data_device(batch):
        # The call is placed too, so the features it returns live on the data device until the
        # model's step reads them (the hand-over copy happens there, overlapped on GPUs).
        with tf.device(device):
            return compiled(batch)

    if graph:
        on_data_device.get_concrete_function = compiled.get_concrete_function  # type: ignore[attr-defined,union-attr]
    return on_data_device
