"""Model kinds, by the name a config gives (`model.kind`, and `model.decoder` for acoustic models).

A new kind is one module here implementing `base.ModelKind` (its network, its training step, how
it generates) and its `model` section in `config/model_kinds.py`, which names the module; the
training engine and synthesis need nothing else.

The section names its kind as "module:attribute" (`IMPLEMENTATIONS`), imported on first use (the
entry-point form packaging uses): a kind's module may define Keras networks, which import
TensorFlow, and reading what a config's kind needs (`xtts validate`, `xtts diagnose`) should not
cost that.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Optional

from xtts_cli.kinds.base import KindContext, KindModels, ModelKind

if TYPE_CHECKING:
    from pathlib import Path

    from xtts_cli.config.schema import DataConfig, XttsConfig
    from xtts_cli.data.run_data import RunData
    from xtts_cli.data.scan import ScanReport

__all__ = [
    "KindContext",
    "KindModels",
    "ModelKind",
    "kind_for",
    "kind_name",
    "registered",
    "run_data_of",
    "speaking_run",
]


def registered() -> dict[str, str]:
    """Every kind by name, as "module:attribute": what the config's model sections name
    (`config.model_kinds`, each section's `IMPLEMENTATIONS`)."""
    from xtts_cli.config.model_kinds import MODEL_SECTIONS

    return {name: entry for section in MODEL_SECTIONS.values() for name, entry in section.IMPLEMENTATIONS.items()}


def kind_name(config: XttsConfig) -> str:
    """`model.kind`, or for an acoustic model its decoder."""
    return config.model.kind_name


def kind_for(config: XttsConfig) -> ModelKind:
    module, _, attribute = config.model.IMPLEMENTATIONS[config.model.kind_name].partition(":")
    kind: ModelKind = getattr(importlib.import_module(module), attribute)
    return kind


def run_data_of(config: XttsConfig, scan: Optional[ScanReport] = None) -> RunData:
    """The run's data as `xtts train` prepares it (`data.run_data.prepare`), for the pipeline the
    config's model kind reads; no TensorFlow."""
    from xtts_cli.data.run_data import prepare

    return prepare(config, kind_for(config).reads, scan=scan)


def speaking_run(run_dir: Path):
    """(config, run) of `run_dir`, a run that reads text: a vocoder run is refused, naming where it goes."""
    import shlex

    from xtts_cli.errors import XttsError
    from xtts_cli.run.files import read_run

    config, run = read_run(run_dir)
    kind = kind_for(config)
    if not kind.speaks:
        raise XttsError(
            f"{run_dir} is a {config.model.kind} run, not an acoustic model: it reads no text",
            hint="pass the acoustic model's run as --run-dir"
            + (f" and this one as --vocoder {shlex.quote(str(run_dir))}" if kind.vocodes else ""),
        )
    return config, run


def vocoding_run(path: Path, data: DataConfig, *, acoustic_run: str, named: str):
    """(config, run) of `path`, a vocoder run whose mel transform is `data`'s; a run of another kind,
    or one trained on other features, is refused with both named. No TensorFlow: the commands check
    a --vocoder before the model loads (it had been refused after those seconds)."""
    from xtts_cli.config.model_kinds import VocoderConfig
    from xtts_cli.data.features import MelFeatures
    from xtts_cli.errors import XttsError
    from xtts_cli.run.directory import checkpoints_to_restore, is_run_dir
    from xtts_cli.run.files import GRIFFIN_LIM, read_run

    config, run = read_run(path, "--vocoder")
    if not is_run_dir(path):  # configs/, an `xtts init` folder: it had been "not a vocoder", or "train first"
        raise XttsError(
            f"{named}: a folder with a config.yaml but no run (xtts train writes run.json and checkpoints beside it)",
            hint=f"pass the directory of an `xtts train -c vocoder-cpu` run, e.g. runs/vocoder-cpu, or {GRIFFIN_LIM}",
        )
    # Told by its config's section: importing the vocoder kind's module imports TensorFlow.
    if not isinstance(config.model, VocoderConfig):
        raise XttsError(
            f"{named}: that run is not a vocoder (model.kind {config.model.kind})",
            hint=f"pass a run trained with model.kind: vocoder (configs/vocoder-cpu.yaml), or {GRIFFIN_LIM}",
        )
    differ = MelFeatures.of(data).transform_mismatch(MelFeatures.of(config.data))
    if differ:
        raise XttsError(
            f"{named} was trained on other features than {acoustic_run}: {'; '.join(differ)} ({acoustic_run} first)",
            hint="train the vocoder with the acoustic run's data section (rate, hop, mels), or use "
            f"--vocoder {GRIFFIN_LIM}",
        )
    checkpoints_to_restore(run, path, save_step=config.training.save_step)  # one to restore: said now
    return config, run
