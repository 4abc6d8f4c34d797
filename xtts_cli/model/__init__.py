"""The XTTS-style acoustic model, its size presets and Griffin-Lim.

- `presets`: `ModelDims`, the `tiny`/`small`/`normal`/`big` presets, `resolve_dims(model_cfg)` and
  `estimate_param_count` (no TensorFlow import);
- `xtts`: `AcousticModel` (Keras 3: text and speaker encoders, postnet, losses, `generate`) and
  `XttsModel`, its autoregressive decoder;
- `duration`: `DurationModel`, the duration decoder: a learnt aligner and a duration predictor;
- `build`: `build_model(model_cfg, data_cfg, vocab_size, languages=, speakers=)`, whichever of the two
  `model.decoder` names, with a language embedding and speaker centroids for a run that lists them;
- `vocoder`: `griffin_lim(log_mel, mel_basis, ...)`.

The neural vocoder's networks are its model kind's (`xtts_cli/kinds/vocoder.py`).

Nothing is imported here: `xtts_cli.model.presets` stays free of TensorFlow, and the command layer
imports `build` and `vocoder` inside the functions that need them.
"""
