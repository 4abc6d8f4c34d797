"""Speaking with a built network: what synthesis, the model kinds and the trainer's test sentences share.

- `synthesis`: `synthesize_speech` (text to mel by the run's decoder, to a waveform, a `Speech`),
  voices (a reference clip or a training speaker's centroid) and WAV writing;
- `vocoding`: `Vocoder`, log-mel to samples by Griffin-Lim or a trained generator, and the audio
  and log-mel of a whole file as the training pipeline computes them;
- `samples`: the test sentences a run renders as it trains.

What a run directory keeps and where, and loading a run (building its network and restoring its
checkpoint), are `xtts_cli.run`'s.
"""
