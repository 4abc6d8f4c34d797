"""A run directory, in one place: what it holds, making it, and reading it back.

- `files`: every name a run may hold (`LAYOUT`, `RunDir`, described in docs/run-directory.md) and
  the records beside its checkpoints (speakers, the reference voice, the speaking rate);
  `read_run` opens one read-only (its config and paths);
- `directory`: create or resume a run for training (`prepare_run_dir`): what must match to resume
  (`model_identity`), the marker, the writer's lock, `--fresh` moving the old run aside;
- `restore`: a built network's weights from the run's checkpoint (`restore_run`); building the
  network is its model kind's (`xtts_cli.inference.loading`: `load_run`, `load_vocoder`).

It reads the config, the data's features and checkpoints, never a model kind, so
everything from synthesis up can read and restore a run.
"""
