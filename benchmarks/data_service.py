"""Training-pipeline throughput through the tf.data service vs the local pipeline, side by side in one
run on the same clips: local, 1 service worker, 2 service workers (dynamic sharding), and 2 workers
with sharding off.

Run: python benchmarks/data_service.py [--data-path DIR] [--repeat N] [--batch-size 16] [--rounds 5]
Default data: the bundled sample repeated x30 (1,170 training clips), runtime features (the work the
service takes off the trainer). About 3 minutes on 2 cores.

Method: the servers (a dispatcher with one worker, another with two) run in this process, on
loopback, and every pipeline is built by `RunData.pipeline` (xtts_cli/data/run_data.py) exactly as
`xtts train` builds it. A draw is one training epoch on a fresh iterator, as the trainer reads it:
we record when the first batch arrives (epoch start: for the service, a new job iteration reaching
the workers), when the last one does, and when the iterator ends. "steady" is samples/s from the
first batch to the last, "epoch" samples/s over the whole draw. One untimed round warms everything
(tracing, page cache), then `--rounds` rounds draw every case in turn; figures are medians. Read the
ratios with care: here the workers share this machine's cores with the consumer, so they measure
what the service costs, not what other machines' cores would add; on separate machines each worker
brings its own cores and the service's rate grows with them until the consumer or the network is
the limit.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from data_pipeline import cpu_model, versions  # noqa: E402  (same machine and version lines)


@dataclass
class Case:
    name: str
    address: Optional[str] = None
    sharding: str = "dynamic"
    dataset: object = None
    steady: list[float] = field(default_factory=list)  # samples/s, first batch to last
    epoch: list[float] = field(default_factory=list)  # samples/s, iter() to the end
    first: list[float] = field(default_factory=list)  # seconds to the first batch
    tail: list[float] = field(default_factory=list)  # seconds from the last batch to the end
    samples: list[int] = field(default_factory=list)


def draw(case: Case) -> None:
    """One epoch on a fresh iterator: when the first batch came, when the last did, when it ended."""
    start = time.perf_counter()
    iterator = iter(case.dataset)
    sizes, arrivals = [], []
    for batch in iterator:
        arrivals.append(time.perf_counter())
        sizes.append(int(batch["mel_lengths"].shape[0]))
    end = time.perf_counter()
    del iterator
    if len(sizes) < 2:
        sys.exit(f"{case.name}: the epoch gave {len(sizes)} batch(es); lower --batch-size or raise --repeat")
    case.first.append(arrivals[0] - start)
    case.tail.append(end - arrivals[-1])
    case.steady.append(sum(sizes[1:]) / (arrivals[-1] - arrivals[0]))
    case.epoch.append(sum(sizes) / (end - start))
    case.samples.append(sum(sizes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-path", help="Dataset root (default: the bundled sample).")
    parser.add_argument(
        "--repeat", type=int, help="Use the clips this many times (default: 30 for the bundled sample, else 1)."
    )
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.data.run_data import prepare
    from xtts_cli.data.service import bound_port, start_dispatcher, start_worker

    repeat = args.repeat or (30 if args.data_path is None else 1)
    base = XttsConfig(
        data={"dataset_path": args.data_path, "batch_size": args.batch_size, "preprocessing_mode": "runtime"}
    )
    run_data = prepare(base)
    scan = run_data.scan
    items = list(scan.train) * repeat  # the scan's training share, `repeat` times: the timed clips

    servers = []
    addresses = []
    for workers in (1, 2):
        dispatcher = start_dispatcher(0)
        address = f"localhost:{bound_port(dispatcher)}"
        servers.append((dispatcher, [start_worker(address) for _ in range(workers)]))
        addresses.append(address)
    cases = [
        Case("local pipeline"),
        Case("service, 1 worker (dynamic sharding)", addresses[0]),
        Case("service, 2 workers (dynamic sharding)", addresses[1]),
        Case("service, 2 workers (sharding off)", addresses[1], "off"),
    ]

    print(f"machine: {cpu_model()}, {os.cpu_count()} cores ({len(os.sched_getaffinity(0))} usable)")
    print(f"versions: {versions()}")
    seconds = sum(item.audio.duration for item in items)
    print(
        f"data: {scan.dataset_path} x{repeat} = {len(items)} training clips, {seconds / 60:.1f} min of audio; batch "
        f"{base.data.batch_size}, runtime features, num_workers {base.data.num_workers}; servers in this process on loopback"
    )
    print(
        f"method: one untimed round, then {args.rounds} rounds of one epoch per case (fresh iterator, as the "
        "trainer reads it); medians",
        flush=True,
    )

    for case in cases:
        data = {"service_address": case.address, "service_sharding": case.sharding} if case.address else {}
        config = base.model_copy(update={"data": base.data.model_copy(update=data)})
        case.dataset, _ = run_data.with_config(config).pipeline(items=items)
        draw(case)  # warm-up: tracing, page cache, the job's registration
        print(f"  warm: {case.name} ({case.samples[0]} samples per epoch)", file=sys.stderr, flush=True)
        for series in (case.steady, case.epoch, case.first, case.tail, case.samples):
            series.clear()
    for _ in range(args.rounds):
        for case in cases:
            draw(case)

    local = cases[0]
    steady0, epoch0 = statistics.median(local.steady), statistics.median(local.epoch)
    print(
        f"\n{'training pipeline, samples/s (medians)':42} {'steady':>8} {'vs local':>9} {'epoch':>8} {'vs local':>9} "
        f"{'1st batch':>10} {'end tail':>9} {'samples':>8}"
    )
    for case in cases:
        steady, epoch = statistics.median(case.steady), statistics.median(case.epoch)
        print(
            f"  {case.name:40} {steady:8,.0f} {steady / steady0:8.2f}x {epoch:8,.0f} {epoch / epoch0:8.2f}x "
            f"{statistics.median(case.first):9.2f}s {statistics.median(case.tail):8.2f}s "
            f"{statistics.median(case.samples):8,.0f}"
        )
    two, one = cases[2], cases[1]
    print("\nratios (same run, same clips)")
    print(
        f"  {'2 workers / 1 worker, steady (dynamic sharding)':58} "
        f"{statistics.median(two.steady) / statistics.median(one.steady):6.2f}x"
    )
    print(f"  {'1 worker / local pipeline, steady':58} {statistics.median(one.steady) / steady0:6.2f}x")
    print(f"  {'1 worker / local pipeline, whole epoch':58} {statistics.median(one.epoch) / epoch0:6.2f}x")
    print(
        "\nsteady: first batch to last; epoch: iter() to the end, so it includes the epoch start (a new job "
        "iteration) and the end tail (the client learning that every worker is done); 'samples' is per epoch "
        "(sharding off: every worker makes the whole epoch). The workers here share the consumer's cores."
    )

    # Iterators and datasets first: a client left over after its dispatcher stopped logs a warning at exit.
    for case in cases:
        case.dataset = None
    gc.collect()
    for dispatcher, workers in servers:
        for worker in workers:
            worker.stop()
        dispatcher.stop()
    sys.stdout.flush()


if __name__ == "__main__":
    from results_page import publish

    sys.exit(publish(main, "scaling.md"))
