"""The run's data, built once: what training, `validate`, `diagnose`, `benchmark` and the profilers
all read, so they agree by construction.

- `prepare(config, output)`: the scan, the epoch's clips, the validation clips and the vocabulary.
  No TensorFlow and no disk writes (the scan's own memo aside).
- `RunData.plan(...)`: the pipeline's plan (batching, where features are kept); no TensorFlow.
- `RunData.ensure_store(...)`: the precompute store written where the plan keeps features on disk;
  the one explicit disk step.
- `RunData.pipeline(...)`: the tf.data pipeline and what it will do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

from xtts_cli.config.loading import config_variant
from xtts_cli.config.schema import DataConfig, XttsConfig
from xtts_cli.data.plan import Output, PipelinePlan
from xtts_cli.data.scan import DatasetItem, ScanReport
from xtts_cli.data.text import Tokenizer
from xtts_cli.errors import XttsError

__all__ = ["RunData", "eval_items_of", "eval_scan_of", "prepare"]

Note = Optional[Callable[[str], None]]


@dataclass(frozen=True)
class RunData:
    config: XttsConfig
    scan: ScanReport
    train_items: list[DatasetItem]  # an epoch's clips: each dataset's repeated as its weight asks
    eval_items: list[DatasetItem]  # the scan's held-out share, or data.eval_dataset_path's clips
    tokenizer: Tokenizer
    output: Output  # what the step reads: log-mels, or audio it turns into features itself

    def data(self, batch_size: Optional[int] = None) -> DataConfig:
        """The data section, with the batch the pipeline makes (training's global batch) when given."""
        if batch_size is None or batch_size == self.config.data.batch_size:
            return self.config.data
        return self.config.data.model_copy(update={"batch_size": batch_size})

    def items(self, training: bool) -> list[DatasetItem]:
        return self.train_items if training else self.eval_items

    def plan(
        self, *, training: bool = True, items: Optional[Sequence[DatasetItem]] = None, batch_size: Optional[int] = None
    ) -> PipelinePlan:
        """The plan of the training (or validation) pipeline over `items` (default: all of them)."""
        from xtts_cli.data.plan import plan_pipeline

        chosen = self.items(training) if items is None else items
        return plan_pipeline(self.data(batch_size), chosen, self.tokenizer, training=training, output=self.output)

    def ensure_store(self, note: Note = None) -> int:
        """Write the precompute store of the training and validation clips where their plans keep
        features on disk (nothing otherwise), so no later pipeline pays the pass; returns how many
        stores it made sure of."""
        from xtts_cli.data.pipeline import write_store

        made = 0
        for training in (True, False):
            if self.items(training) and self.plan(training=training).mode == "precompute":
                write_store(self.config.data, self.items(training), self.output, training=training, note=note)
                made += 1
        return made

    def pipeline(
        self,
        *,
        training: bool = True,
        items: Optional[Sequence[DatasetItem]] = None,
        plan: Optional[PipelinePlan] = None,
        batch_size: Optional[int] = None,
        device: Optional[str] = None,
        note: Note = None,
    ) -> tuple[Any, Any]:
        """(tf.data.Dataset, PipelineInfo) of the training (or validation) clips, or of `items`;
        `plan`: the plan of those items when the caller made it already."""
        from xtts_cli.data.pipeline import build_pipeline

        chosen = list(plan.items) if plan is not None else self.items(training) if items is None else list(items)
        config = self.config.model_copy(update={"data": self.data(batch_size)})
        return build_pipeline(
            config, chosen, self.tokenizer, training=training, output=self.output, device=device, plan=plan, note=note
        )

    def with_config(self, config: XttsConfig) -> RunData:
        """The same clips and vocabulary read under other pipeline settings (a sweep's cell)."""
        return replace(self, config=config)


def eval_items_of(config: XttsConfig, scan: ScanReport) -> list[DatasetItem]:
    """The validation clips: the scan's held-out share, or data.eval_dataset_path's whole dataset."""
    held = eval_scan_of(config, scan)
    return list(scan.eval) if held is None else held.items


def eval_scan_of(config: XttsConfig, scan: ScanReport) -> Optional[ScanReport]:
    """data.eval_dataset_path's scan (None without one), in the training data's language where its
    datasets share one (`data.datasets[].language`: a Persian run's clips had been read as `en`)."""
    from xtts_cli.data.scan import DatasetScanError, scan_dataset

    if not config.data.eval_dataset_path:
        return None
    if not Path(config.data.eval_dataset_path).expanduser().is_dir():
        raise XttsError(
            f"data.eval_dataset_path: {config.data.eval_dataset_path!r} is not a directory",
            hint="point --val-data (data.eval_dataset_path) at the validation dataset's folder, or leave it empty to "
            "hold out data.eval_fraction of the training data",
        )
    eval_data = config_variant(
        config,
        {
            "data.dataset_path": config.data.eval_dataset_path,
            "data.datasets": [],
            "data.dataset_format": "auto",
            "data.eval_fraction": 0.0,
            **(
                {"data.language": languages.pop()} if len(languages := {d.language for d in scan.datasets}) == 1 else {}
            ),
        },
        where="data.eval_dataset_path",
    ).data
    try:
        return scan_dataset(eval_data)
    except DatasetScanError as exc:  # which dataset it is about: the training one scanned clean
        raise DatasetScanError(*_named(exc.lines), hint=exc.hint, report=exc.report) from None
    except XttsError as exc:
        raise XttsError(*_named(exc.lines), hint=exc.hint) from None


def _named(lines: list[str]) -> list[str]:
    """A validation dataset's error lines, each saying which dataset it is about."""
    lines = [line.replace("no usable training items", "no usable validation items", 1) for line in lines]
    return [line if line.startswith("data.eval_dataset_path") else f"data.eval_dataset_path: {line}" for line in lines]


def prepare(
    config: XttsConfig,
    output: Output = "mel",
    *,
    scan: Optional[ScanReport] = None,
    tokenizer: Optional[Tokenizer] = None,
) -> RunData:
    """The run's data for `config`: scanned here unless `scan` is given; the vocabulary built from
    it unless `tokenizer` is given (a resumed run's own). `output`: what the model kind reads."""
    from xtts_cli.data.plan import tokenizer_for
    from xtts_cli.data.scan import scan_dataset

    scan = scan_dataset(config.data) if scan is None else scan
    train_items, eval_items = scan.epoch_items(), eval_items_of(config, scan)
    if tokenizer is None:
        # A separate validation dataset's texts join the vocabulary (the scan's own items hold the held-out share).
        items = train_items + eval_items if config.data.eval_dataset_path else None
        tokenizer = tokenizer_for(scan, config.data, items=items)
    return RunData(config, scan, train_items, eval_items, tokenizer, output)
