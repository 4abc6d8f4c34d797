"""What the training engine needs from a model kind.

A kind (the autoregressive decoder, the duration decoder, the vocoder) says what its step reads
from the input pipeline, writes what its runs need besides checkpoints, builds the network that
synthesis restores from a run (`build_network`), and builds its models for training into a
`KindModels`: what is saved, the per-replica train and eval steps (a step that updates two
optimizers, a GAN's, is just a step), its TensorBoard pictures and the samples it renders. The
engine (`xtts_cli.training`) owns everything else: devices, data, the loop, checkpoints, signals
and the time budget, alike for every kind; `xtts_cli.inference` loads any kind's run through
`build_network`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Optional, Protocol

if TYPE_CHECKING:
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.data.scan import DatasetItem, ScanReport
    from xtts_cli.data.text import Tokenizer
    from xtts_cli.model.transfer import Transferred
    from xtts_cli.run.files import RunDir

__all__ = ["KindContext", "KindModels", "ModelKind"]


@dataclass(frozen=True)
class KindContext:
    """The run as the engine has set it up, for a kind to build from."""

    config: XttsConfig
    tokenizer: Tokenizer
    scan: ScanReport
    run_dir: RunDir
    is_chief: bool  # only the chief writes into the run directory
    first_item: DatasetItem  # the first validation clip (else training clip): the samples' voice and text
    resumed: bool  # the run goes on from its checkpoint, which restores what `build` sets
    total_steps: int
    mixed_precision: bool
    xla_step: bool  # the train step is compiled by XLA as one cluster (not distributed)
    replicas: int
    # The share of training.max_minutes spent (a float32 variable the loop sets), or None.
    budget_used: Any
    note: Callable[[str], None]


class KindModels(Protocol):
    """A kind's models once built (inside the strategy's scope), with their optimizers."""

    model: Any  # what synthesis loads and the checkpoint saves as "model"
    optimizer: Any  # the first optimizer: its learning rate is logged, its `iterations` count the steps

    def trackables(self) -> dict[str, Any]:
        """What the checkpoint saves, by name (besides the engine's step and epoch)."""

    def train_step(self, batch: dict, phase: Any = None) -> dict[str, Any]:
        """One training step on one replica's batch (forward, backward, every optimizer's update);
        its losses, scalar tensors, "loss" among them. Summed gradients of several replicas are
        a global mean: each replica's loss is divided by the replica count. `phase`: what
        `phase(step)` said of this step."""

    def phase(self, step: int) -> Any:
        """What the step after `step` steps trains, for a kind whose step changes during a run (the
        vocoder's discriminators join at model.adversarial_start_step), hashable; each phase is a
        step compiled of its own. None: the same step throughout."""

    def eval_step(self, batch: dict) -> dict[str, Any]:
        """Validation losses of one replica's batch: the keys of `ModelKind.validation`."""

    def summaries(self, batch: Any, val_batch: Any, step: int) -> None:
        """TensorBoard pictures or audio of a training batch and the first validation batch."""

    def render_samples(self, step: int) -> None:
        """Samples into the run's samples folder (chief only)."""

    @property
    def listen(self) -> str:
        """A command that lets a user hear the run, on the run's own text or audio ({run}: its
        directory), so that it works as printed whatever the run's language."""


class ModelKind(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def speaks(self) -> bool:
        """It turns text into mel frames: synthesis, export and `--run-dir` take its runs."""

    @property
    def vocodes(self) -> bool:
        """It turns mel frames into audio: `--vocoder` takes its runs."""

    @property
    def paced(self) -> bool:
        """Its sentences' lengths come from predicted durations, so `--speed` can set their pace."""

    @property
    def ignored_keys(self) -> tuple[str, ...]:
        """Config keys ("section.field") other kinds read and this one does not: `validate` says
        so when a config writes one."""

    @property
    def reads(self) -> Literal["mel", "audio"]:
        """What its step reads from the input pipeline: mel frames, or the audio (the vocoder's
        segments; a data/model split also hands audio to the data device, which computes the mels)."""

    @property
    def validation(self) -> Mapping[str, str]:
        """Validation: the eval step's key -> the name it is reported under ("val_loss" among them)."""

    @property
    def logged(self) -> tuple[str, ...]:
        """Losses worth a TensorBoard curve (train/<key>) when the step returns them."""

    @property
    def samples_phase(self) -> str:
        """What rendering its samples is called in the progress."""

    def prepare_run(self, context: KindContext) -> None:
        """Write what the run needs besides checkpoints (chief only; once per run)."""

    def build_network(self, config: XttsConfig, tokenizer: Optional[Tokenizer]) -> Any:
        """The network a run of this kind saves as "model", with its weights built (the run's
        vocabulary `tokenizer` for a kind that reads text, else None)."""

    def build(self, context: KindContext) -> KindModels:
        """The models and optimizers, built (weights and optimizer variables made), with the parts
        `training.freeze` names kept out of training."""

    def transfer(self, models: KindModels, checkpoint: str) -> Transferred:
        """Start `models` from another run's `checkpoint` (`training.init_from`): every weight the
        checkpoint holds under the same name and shape (`model.transfer.transfer_weights`)."""
