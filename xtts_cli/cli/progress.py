"""Training progress on stderr: a live rich display on a terminal, one plain line per log step
otherwise (`train | step: 1200 | steps/sec: 8.1 | loss: 0.412 | ...`). Work the user waits for
before the steps (the scan, building the pipeline and the model, tracing the step) shows as a
spinner on a terminal and as one line each otherwise; nothing is silent for long."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Optional

from rich.markup import escape

from xtts_cli.cli.output import console, dataset_notes, span, weight_words

if TYPE_CHECKING:
    from xtts_cli.training.events import Event, ScanFinished, StepLogged

SKIPPED_SHOWN = 10  # skipped files listed at start-up; `xtts validate --json` lists every one
# A first batch this late is said beside the trace it is left out with (a tf.data service's worker
# not yet up had waited 108 s, and the summary said data wait 0.0 %).
TOLD_WAIT_SECONDS = 1.0


class TrainingProgress:
    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.err = console(stderr=True)
        self.live = enabled and self.err.is_terminal
        # rich's Progress and its task id, made when the bar starts (rich is imported then).
        self._progress: Any = None
        self._task: Any = None
        self.total: Optional[int] = None
        self.gpu_line = ""
        self._status: Any = None  # rich's spinner of the phase under way, on a terminal
        self._phase: Optional[str] = None
        self._bar_from: Optional[tuple[int, int]] = None  # (start, total) once the run starts

    def __enter__(self) -> TrainingProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        from xtts_cli.cli.output import quiet_streams, stream_gone

        try:
            self._end_phase()
            if self._progress is not None:
                self._progress.stop()
        except OSError as error:
            if not stream_gone(error):
                raise
            quiet_streams()

    def _begin_phase(self, name: str) -> None:
        self._end_phase()
        self._phase = name
        if self._progress is not None:  # the bar is live: the phase goes in its info column
            self._progress.update(self._task, info=f"{name} ...")
        elif self.live:
            self._status = self.err.status(f"{name} ...")
            self._status.start()
        else:
            sys.stderr.write(f"{name} ...\n")
            sys.stderr.flush()

    def _end_phase(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
        if self._phase is not None and self._progress is not None:
            self._progress.update(self._task, info="")
        self._phase = None

    def _start_bar(self, start: int, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self._progress = Progress(
            TextColumn("train"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[info]}"),
            console=self.err,
            transient=False,
        )
        self._progress.start()
        self._task = self._progress.add_task("train", total=total, completed=start, info="")

    def update(self, event: Event) -> None:
        """Render one training event (training/events.py). A terminal closed or a pipe's reader gone
        (`| tee` ended by the same Ctrl-C) silences it: the write's error had ended the run unsaved."""
        from xtts_cli.cli.output import quiet_streams, stream_gone

        try:
            self._render(event)
        except OSError as exc:
            if not stream_gone(exc):
                raise
            quiet_streams()

    def _render(self, event: Event) -> None:
        from xtts_cli.training.events import (
            Noted,
            PhaseEnded,
            PhaseStarted,
            RunEnded,
            RunStarted,
            ScanFinished,
            StepLogged,
            Validated,
            Watched,
        )

        if not self.enabled:  # --json: the result alone on stdout, and what the user must hear of on stderr
            self._plain(event)
            return
        if isinstance(event, PhaseStarted):
            self._begin_phase(event.name)
            return
        if not isinstance(event, (Noted, Watched)):  # a note is printed above the spinner, which goes on
            self._end_phase()
        if isinstance(event, PhaseEnded):
            if self.live:
                self.err.print(f"[dim]{event.name}: {event.seconds:.1f} s[/]")
            if self._bar_from is not None and self._progress is None:
                self._start_bar(*self._bar_from)
        elif isinstance(event, RunEnded):
            return
        elif isinstance(event, ScanFinished):
            self._scan(event)
        elif isinstance(event, RunStarted):
            result = event.result
            verb = "resuming at step" if result.resumed else "starting at step"
            self.err.print(f"run {result.run_dir}: {verb} {result.start_step}; {result.device_plan}", markup=False)
            for note in result.notes:
                self.err.print(f"[yellow]note[/]: {escape(note)}")
            self.total = event.total_steps
            if self.live:  # after the first step's trace, which shows as a spinner until then
                self._bar_from = (result.start_step, self.total)
        elif isinstance(event, StepLogged):
            self._logged(event)
        elif isinstance(event, Noted):
            self.err.print(f"[yellow]{event.label}[/]: {escape(event.message)}")
        elif isinstance(event, Watched):
            colour = "yellow" if event.state == "warning" else "green"
            self.err.print(f"[{colour}]watch[/]: {escape(_watched(event))}")
        elif isinstance(event, Validated):
            message = f"val   | step: {event.step} | val_loss: {event.val_loss:.4f}"
            if event.alignment_score is not None:
                message += f" | alignment_score: {event.alignment_score:.3f}"
            if self._progress is not None:
                self._progress.console.print(message)
            else:
                sys.stderr.write(message + "\n")

    def _scan(self, event: ScanFinished) -> None:
        scan = event.scan
        for bad in scan.bad[:SKIPPED_SHOWN]:
            where = f"{bad.dataset}: " if bad.dataset else ""
            self.err.print(f"[yellow]skipped[/] {where}{bad.place}: {bad.reason} ({bad.detail})")
        if len(scan.bad) > SKIPPED_SHOWN:
            self.err.print(
                f"[yellow]skipped[/] ... and {len(scan.bad) - SKIPPED_SHOWN} more (`xtts validate --json` lists all)"
            )
        for dataset in scan.datasets:
            speakers = len(dataset.speaker_minutes)
            repeats = f", {words}" if (words := weight_words(dataset, scan.datasets)) else ""
            self.err.print(
                f"dataset {dataset.path} ({dataset.format}, language {dataset.language}): {dataset.train_items:,} train + {dataset.eval_items:,} "
                f"validation items, {span(dataset.hours * 60)}, {speakers:,} speaker{'' if speakers == 1 else 's'}, "
                f"{dataset.bad_items:,} skipped{repeats}"
            )
            for note in dataset_notes(dataset):  # markup, its values escaped
                self.err.print(f"[yellow]note[/]: {note}")
        shared = scan.shared_speakers()
        if shared:
            from xtts_cli.diagnosis.checkup import shared_speakers_line

            self.err.print(f"[yellow]note[/]: {escape(shared_speakers_line(shared))} (xtts validate says more)")
        self._transcript_warnings(event, plain=False)

    def _plain(self, event: Event) -> None:
        """Under --json: what the user must hear of, as plain lines on stderr."""
        from xtts_cli.training.events import Noted, RunStarted, ScanFinished, Watched

        if isinstance(event, Noted):
            self.err.print(f"{event.label}: {event.message}", markup=False, highlight=False)
        elif isinstance(event, Watched):  # a warning, as a Noted one is; also in metrics.jsonl
            self.err.print(f"watch: {_watched(event)}", markup=False, highlight=False)
        elif isinstance(event, ScanFinished):
            self._transcript_warnings(event, plain=True)
        elif isinstance(event, RunStarted):  # also in the result's "notes", but said as they are known
            for note in event.result.notes:
                self.err.print(f"note: {note}", markup=False, highlight=False)

    def _transcript_warnings(self, event: ScanFinished, *, plain: bool) -> None:
        """What validate warns of in the transcripts (digits read as signs, markup, emoji, another
        language's script or letters), said as the run starts too: it had said nothing, and the run
        learnt them as sounds."""
        if event.data is None:
            return
        from xtts_cli.diagnosis import checkup

        said = (
            checkup.unread_digits_findings,
            checkup.unspoken_text_findings,
            checkup.script_findings,  # transcripts of another language: said before it trains them as this one
            checkup.letter_findings,
        )
        for found in [finding for findings in said for finding in findings(event.scan, event.data)]:
            if plain:
                self.err.print(f"warning: {found.message}", markup=False, highlight=False)
            else:
                self.err.print(f"[yellow]warning[/]: {escape(found.message)}")

    def _logged(self, event: StepLogged) -> None:
        if self._bar_from is not None and self._progress is None:
            self._start_bar(*self._bar_from)
        gpu = f" | gpu: {event.gpu_util:.0f} %" if event.gpu_util is not None else ""
        if len(event.gpus) > 1:  # each card on its own: an idle one is not hidden in the mean
            gpu = "".join(
                f" | gpu{index} ({reading.role}): {reading.util:.0f} %"
                for index, reading in sorted(event.gpus.items())
                if reading.util is not None
            )
        if self._progress is not None:
            info = f"loss {event.loss:.4f} | {event.samples_per_sec:.1f} samples/s | data wait {event.data_wait_percent:.1f} %"
            info += gpu.replace(": ", " ")
            self._progress.update(self._task, completed=event.step, info=info)
            return
        line = (
            f"train | step: {event.step} | steps/sec: {1000.0 / max(event.step_ms, 1e-9):.2f} | "
            f"loss: {event.loss:.4f} | samples/sec: {event.samples_per_sec:.1f} | "
            f"data wait: {event.data_wait_percent:.1f} % | lr: {event.lr:.2e} | traces: {event.traces}{gpu}"
        )
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def summary(self, result: Any) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        out = console()
        loss = f"{result.first_loss:.4f} -> {result.last_loss:.4f}" if result.first_loss is not None else "n/a"
        out.print(f"run: {result.run_dir}", markup=False)
        out.print(f"steps: {result.start_step} -> {result.final_step}   loss: {loss}")
        if result.last_val_loss is not None:
            score = result.last_alignment_score
            best = ""
            if result.early_stopped and result.best_val_loss is not None:
                best = (
                    f"; the best {result.best_val_loss:.4f} at step {result.best_val_step}, whose weights it ends with"
                )
            out.print(
                f"validation loss: {result.last_val_loss:.4f} at step {result.last_val_step}{best}"
                + (f"   alignment score: {score:.3f}" if score is not None else "")
            )
        speed = _speed(result)
        if speed:
            out.print(speed)
        if result.loop_seconds > 0 and result.final_step > result.start_step:  # no step, no first to the last
            late = result.trace_wait_seconds >= TOLD_WAIT_SECONDS  # counted in steps, it had read "100 %"
            out.print(
                f"wall clock: {result.loop_seconds:,.1f} s from the first step to the last, "
                f"{result.step_time_percent:.0f} % of it in steps (the rest: validation, checkpoints, samples"
                + (f", and the {result.trace_wait_seconds:,.1f} s wait for the first batch)" if late else ")")
            )
        if result.stopped_waiting_seconds >= 1:
            out.print(
                # Not "never came": a Ctrl-C a second into a slow pipeline's wait had read as a stall.
                f"then waited {result.stopped_waiting_seconds:,.1f} s for the next batch, which had not come when "
                f"{result.interrupted} stopped the run"
            )
        if result.traces:  # none in eager mode: every step runs op by op
            shapes = "batch shape" if result.shape_bound == 1 else "batch shapes"
            bound = f"{result.shape_bound} {shapes}" if result.shape_bound else "none, unbucketed"
            out.print(f"step traces: {result.traces} (bound: {bound})")
        # A cluster's other worker writes nothing: where it was given a run directory the chief did not
        # write (not on a filesystem they share), there is nothing there to listen to.
        if result.final_step > 0 and result.run_dir.is_dir():
            from xtts_cli.errors import quoted

            out.print(f"listen:      {result.listen}")
            out.print(f"tensorboard: tensorboard --logdir {quoted(result.run_dir / 'tensorboard')}")


def _speed(result: Any) -> str:
    """The summary's speed line ("" for a run of no step): steps a second, the steps that built a
    graph left out and said, with a first batch that came late."""
    if result.steps_per_sec is None:  # no step but the traced one
        steps = result.final_step - result.start_step
        if result.trace_seconds <= 0:
            return ""
        what = (
            "one step, {:.1f} s with its graph's trace"
            if steps == 1
            else f"{steps} steps, each the first of its batch shape, {{:.1f}} s with their graphs' traces"
        )
        return f"speed: {what.format(result.trace_seconds)} (more steps give a speed)"
    left_out = ""
    if result.trace_seconds > 0:
        late = result.trace_wait_seconds >= TOLD_WAIT_SECONDS
        several = result.trace_steps > 1  # under XLA, the first step of each batch shape: its compile
        left_out = (
            (
                f" (the {result.trace_steps} steps that built or compiled a graph, {result.trace_seconds:.1f} s, left out"
                if several
                else f" (the first step's {result.trace_seconds:.1f} s trace left out"
            )
            + (
                f", and {'their' if several else 'its'} {result.trace_wait_seconds:,.1f} s wait for "
                f"{'their batches' if several else 'its batch'}"
                if late
                else ""
            )
            + ")"
        )
    return (
        f"speed: {result.steps_per_sec:.2f} steps/s, {result.samples_per_sec:.1f} samples/s, "
        f"data wait {result.data_wait_percent:.1f} % of step time{left_out}"
    )


def _watched(event: Any) -> str:
    """A watch finding as its line says it, after "watch: " (the terminal colours that word)."""
    if event.state == "warning":
        fix = f" (fix: {event.fix})" if event.fix else ""
        return f"step {event.step}: {event.id}: {event.message}{fix}"
    return f"step {event.step}: {event.id} recovered: {event.message}"
