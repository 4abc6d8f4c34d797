"""A run directory, in one place: what it holds, making it, and reading it back.

- `files`: every name a run may hold (`LAYOUT`, `RunDir`, described in docs/run-directory.md) and
  the records beside its checkpoints (speakers, the reference voice, the speaking rate);
  `read_run` opens one read-only (its config and paths);
- `directory`: create or resume a run for training (`prepare_run_dir`): what must match to resume
  (`model_identity`), the marker, the writer's lock, `--fresh` moving the old run aside;
- `restore`: a run's network built by its model kind and restored from a checkpoint, for
  synthesis, export and `--vocoder` (`load_run`, `load_vocoder`).

The three sit at different heights of the package's layers (pyproject.toml): `files` and
`directory` need only the config and the data's features, so synthesis can read a run's records;
`restore` builds networks, so it sits above the model kinds. This module imports none of them.
"""
