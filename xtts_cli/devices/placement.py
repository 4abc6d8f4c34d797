"""Map the config's device request onto TensorFlow devices, before TensorFlow touches a GPU.

- Indices mean what `nvidia-smi` shows: CUDA_DEVICE_ORDER=PCI_BUS_ID is set before TensorFlow
  initialises CUDA (CUDA's default order is "fastest first", which differs on mixed machines).
  Every physical GPU keeps exactly one logical device, so TF's `/GPU:i` is physical GPU i, also
  when the data GPU's index is above the model GPU's.
- Memory isolation gives the data and model GPUs a fixed memory limit through a logical device
  configuration and never also turns on memory growth on those GPUs (TensorFlow refuses the two
  together; the old trainer hit exactly that). Other GPUs get memory growth.
- The CPU twin (`devices.logical_cpu_devices: N`) splits the CPU into N logical devices and uses
  them where GPUs would be, so the two-device and mirrored code paths run on any machine.
- Multi-worker (`devices.strategy: multi_worker`): the cluster comes from TF_CONFIG (or from
  `xtts train --worker-hosts/--task-index`, which write the same TF_CONFIG), checked here so a
  malformed one fails with one line instead of a TensorFlow traceback or a hang. TensorFlow's
  MultiWorkerMirroredStrategy must exist before any other TF op in the process (it starts the
  gRPC server and the collective ops), so `configure_devices` creates it and hands it over in
  the plan. Each worker uses all its visible GPUs (restrict them with CUDA_VISIBLE_DEVICES), or
  its CPU when it has none.

A request the machine cannot meet fails here, before any work, saying what is available.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Optional

from xtts_cli.config.schema import DevicesConfig
from xtts_cli.devices.gpu_info import GpuInfo, MachineInfo, query_nvml
from xtts_cli.errors import DeviceError, UsageError, XttsError
from xtts_cli.host import ThreadPlan, apply_threads, plan_threads
from xtts_cli.ports import why_port_is_taken

StrategyKind = Literal["single", "split", "mirrored", "multi_worker"]

# The TF_CONFIG layout, quoted in every cluster error so the fix is on the screen.
TF_CONFIG_EXAMPLE = '{"cluster": {"worker": ["host1:port", "host2:port"]}, "task": {"type": "worker", "index": 0}}'
FLAGS_EXAMPLE = "--worker-hosts host1:port,host2:port --task-index I"
# The jobs MultiWorkerMirroredStrategy trains with; "ps" belongs to ParameterServerStrategy and
# "evaluator" to a side-car evaluation loop, neither of which `xtts train` runs.
_JOBS = ("chief", "worker")
MIRRORED_WITHOUT_GPUS = "devices.strategy mirrored: no effect without GPUs, one replica on the CPU"


@dataclass(frozen=True)
class Cluster:
    """A multi-worker cluster, validated: every task's address and which one this process is."""

    tasks: tuple[str, ...]  # host:port of every task, in TensorFlow's order: the chief (if any) first
    task_type: str  # "chief" or "worker"
    task_index: int  # index within its job, as in TF_CONFIG
    has_chief_job: bool = False

    @property
    def num_workers(self) -> int:
        return len(self.tasks)

    @property
    def worker_index(self) -> int:
        """Position among all tasks (TensorFlow's `id_in_cluster`): the chief is 0, then the workers."""
        if self.task_type == "chief":
            return 0
        return self.task_index + (1 if self.has_chief_job else 0)

    @property
    def is_chief(self) -> bool:
        # TensorFlow's rule (multi_worker_util.is_chief): the chief task, else worker 0.
        return self.worker_index == 0

    def to_tf_config(self) -> str:
        cluster: dict[str, list[str]] = {}
        if self.has_chief_job:
            cluster["chief"] = [self.tasks[0]]
        cluster["worker"] = list(self.tasks[1:] if self.has_chief_job else self.tasks)
        return json.dumps({"cluster": cluster, "task": {"type": self.task_type, "index": self.task_index}})

    def describe(self) -> str:
        role = "chief" if self.is_chief else "worker"
        return f"task {self.worker_index} of {self.num_workers} ({role}, {self.tasks[self.worker_index]})"


def _check_address(address: object, where: str, fix: str, error: type[XttsError] = XttsError) -> str:
    host, sep, port = str(address).strip().rpartition(":") if isinstance(address, str) else ("", "", "")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536 or " " in host:
        raise error(f"{where} has {address!r}, which is not HOST:PORT (e.g. 10.0.0.5:12345)", hint=fix)
    return f"{host}:{int(port)}"


def unresolved_hosts(tasks: tuple[str, ...]) -> list[str]:
    """The host names among `tasks` (HOST:PORT) that do not resolve here: TensorFlow waits for such a
    worker forever, as for one not started yet (a misspelt 127.0.0.l had waited unsaid)."""
    import socket

    missing = []
    for host in dict.fromkeys(task.rpartition(":")[0].strip("[]") for task in tasks):
        try:
            socket.getaddrinfo(host, None)
        except (socket.gaierror, UnicodeError):
            missing.append(host)
    return missing


def unresolved_note(hosts: list[str]) -> str:
    named = ", ".join(repr(host) for host in hosts)
    return (
        f"the host name{'s' if len(hosts) > 1 else ''} {named} {'do' if len(hosts) > 1 else 'does'} not resolve "
        "here: training waits for a worker there until its name resolves (a misspelt one, forever); check "
        "--worker-hosts (or TF_CONFIG) on every worker"
    )


def _check_unique(tasks: tuple[str, ...], where: str, fix: str, error: type[XttsError] = XttsError) -> None:
    repeated = sorted({t for t in tasks if tasks.count(t) > 1})
    if repeated:
        raise error(f"{where} lists {', '.join(repeated)} more than once; every worker needs its own port", hint=fix)


def parse_tf_config(value: str) -> Cluster:
    """The cluster TF_CONFIG describes; XttsError naming the problem when it is malformed."""
    fix = (
        f"set TF_CONFIG like {TF_CONFIG_EXAMPLE} (the same cluster on every worker, each with its own task), "
        f"or pass {FLAGS_EXAMPLE}"
    )
    shown = value if len(value) <= 120 else value[:117] + "..."
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise XttsError(f"TF_CONFIG is not JSON ({exc.msg} at character {exc.pos}): {shown}", hint=fix) from None
    if (
        not isinstance(parsed, dict)
        or not isinstance(parsed.get("cluster"), dict)
        or not isinstance(parsed.get("task"), dict)
    ):
        raise XttsError(f'TF_CONFIG needs a "cluster" object and a "task" object: {shown}', hint=fix)
    cluster, task = parsed["cluster"], parsed["task"]
    others = sorted(set(cluster) - set(_JOBS))
    if others:
        raise XttsError(
            f'TF_CONFIG\'s cluster has job {others[0]!r}; multi_worker training runs only "chief" and "worker" tasks',
            hint=f"remove {others[0]!r} from the cluster; {fix}",
        )
    jobs: dict[str, tuple[str, ...]] = {}
    for job in _JOBS:
        if job not in cluster:
            continue
        addresses = cluster[job]
        if not isinstance(addresses, list) or not addresses:
            raise XttsError(
                f"TF_CONFIG's cluster.{job} is {addresses!r}; it must be a non-empty list of HOST:PORT", hint=fix
            )
        jobs[job] = tuple(_check_address(a, f"TF_CONFIG's cluster.{job}", fix) for a in addresses)
    if "worker" not in jobs and "chief" not in jobs:
        raise XttsError(f'TF_CONFIG\'s cluster has no "worker" list: {shown}', hint=fix)
    if len(jobs.get("chief", ())) > 1:
        raise XttsError(f"TF_CONFIG's cluster.chief lists {len(jobs['chief'])} tasks; there is one chief", hint=fix)
    task_type, index = task.get("type"), task.get("index")
    if task_type not in jobs:
        raise XttsError(
            f"TF_CONFIG's task.type is {task_type!r}; it must be one of the cluster's jobs ({', '.join(jobs)})",
            hint=fix,
        )
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(jobs[task_type]):
        raise XttsError(
            f"TF_CONFIG's task.index is {index!r} but cluster.{task_type} has {len(jobs[task_type])} "
            f"task(s) (indices 0-{len(jobs[task_type]) - 1})",
            hint=f"give each worker its own index in that range; {fix}",
        )
    tasks = jobs.get("chief", ()) + jobs.get("worker", ())
    _check_unique(tasks, "TF_CONFIG's cluster", fix)
    return Cluster(tasks=tasks, task_type=task_type, task_index=index, has_chief_job="chief" in jobs)


def cluster_from_flags(worker_hosts: Optional[str], task_index: Optional[int], tf_config: Optional[str]) -> Cluster:
    """The cluster `--worker-hosts H1:P1,H2:P2 --task-index I` describe (worker I of that list;
    worker 0 is the chief). `tf_config` is the environment's TF_CONFIG: when set, it must describe
    the same cluster and task, or the flags and the environment would disagree about who is who."""
    fix = f"pass both, the same host list on every worker: {FLAGS_EXAMPLE} (0 on the first host, 1 on the next, ...)"
    if worker_hosts is None or task_index is None:
        given, missing = (
            ("--worker-hosts", "--task-index") if task_index is None else ("--task-index", "--worker-hosts")
        )
        raise UsageError(f"{given} is given without {missing}", hint=fix)
    where = f"--worker-hosts {worker_hosts!r}"
    tasks = tuple(_check_address(h, where, fix, UsageError) for h in worker_hosts.split(","))
    _check_unique(tasks, where, fix, UsageError)
    if not 0 <= task_index < len(tasks):
        raise UsageError(
            f"--task-index is {task_index} but --worker-hosts lists {len(tasks)} worker(s) (indices 0-{len(tasks) - 1})",
            hint=fix,
        )
    cluster = Cluster(tasks=tasks, task_type="worker", task_index=task_index)
    if tf_config and tf_config.strip():
        existing = parse_tf_config(tf_config)
        if (existing.tasks, existing.worker_index) != (cluster.tasks, cluster.worker_index):
            raise UsageError(
                f"--worker-hosts/--task-index say task {cluster.worker_index} of {','.join(cluster.tasks)} but "
                f"TF_CONFIG says task {existing.worker_index} of {','.join(existing.tasks)}",
                hint="use one of them: unset TF_CONFIG, or drop the flags",
            )
    return cluster


def cluster_from_environment(environ: Mapping[str, str]) -> Cluster:
    """The cluster of `devices.strategy: multi_worker`, from TF_CONFIG."""
    value = environ.get("TF_CONFIG", "")
    if not value.strip():
        raise XttsError(
            "devices.strategy is multi_worker but no cluster is given (TF_CONFIG is not set)",
            hint=f"pass {FLAGS_EXAMPLE} to xtts train, or set TF_CONFIG like {TF_CONFIG_EXAMPLE} (docs/scaling.md)",
        )
    return parse_tf_config(value)


def budget_on_a_cluster(config: Any) -> Optional[XttsError]:
    """The error for a time budget (training.max_minutes) under multi_worker: each worker's clock
    would stop it at a step of its own, and a collective step waits for ever. None where there is none."""
    if config.training.max_minutes is None or config.devices.strategy != "multi_worker":
        return None
    return XttsError(
        f"training.max_minutes is {config.training.max_minutes:g} with devices.strategy multi_worker: "
        "the workers' clocks would not agree on the step to stop at",
        hint="set training.max_steps instead",
    )


def cluster_left_out(devices: DevicesConfig, environ: Mapping[str, str]) -> Optional[XttsError]:
    """The error for a TF_CONFIG naming a cluster of several workers under a strategy other than
    multi_worker, which would train on this machine alone (None: nothing left out). Under a cluster
    scheduler each machine would then train a model of its own into the same run directory."""
    if devices.strategy == "multi_worker" or not environ.get("TF_CONFIG", "").strip():
        return None
    try:
        cluster = parse_tf_config(environ["TF_CONFIG"])
    except XttsError as error:
        # One that names no cluster is not this machine's part in one; one that cannot be read may
        # be (a trailing comma): passed over, each machine of the cluster would train alone.
        try:
            # JSON that is no object (`[1,2]`) is no scheduler's TF_CONFIG either: passed over, it had been unsaid.
            named = not isinstance(parsed := json.loads(environ["TF_CONFIG"]), dict) or "cluster" in parsed
        except json.JSONDecodeError:
            named = True
        if not named:
            return None
        return XttsError(
            f"{error.lines[0]}; under devices.strategy {devices.strategy} it would be passed over and this machine "
            "train alone",
            hint="mend TF_CONFIG and set devices.strategy: multi_worker to train with the cluster, or unset TF_CONFIG "
            "to train here alone",
        )
    if cluster.num_workers < 2:
        return None
    return XttsError(
        f"TF_CONFIG names a cluster of {cluster.num_workers} workers ({', '.join(cluster.tasks)}) but "
        f"devices.strategy is {devices.strategy}, which trains on this machine alone",
        hint="set devices.strategy: multi_worker (or --set devices.strategy=multi_worker) to train with the "
        "cluster, or unset TF_CONFIG to train here alone",
    )


def check_listening_port(cluster: Cluster, reason: Optional[str] = None) -> None:
    """An XttsError when this worker cannot listen on its port of the cluster: asked before the
    scan and TensorFlow (xtts_cli/ports.py), or `reason`, TensorFlow's own refusal, as one line."""
    address = cluster.tasks[cluster.worker_index]
    port = int(address.rpartition(":")[2])
    reason = reason or why_port_is_taken(port)
    if reason is not None:
        raise XttsError(
            f"this worker, {cluster.describe()}, cannot listen on port {port}: {reason}",
            hint=f"give this worker a free port in the cluster's list ({address} in --worker-hosts or TF_CONFIG), "
            "the same list on every worker",
        )


@dataclass(frozen=True)
class DevicePlan:
    kind: StrategyKind
    # Where input-side feature work runs (None: inside tf.data on the host CPU).
    data_device: Optional[str]
    # Where the model runs ("single"/"split"); the replica devices for "mirrored".
    model_device: str
    replica_devices: tuple[str, ...] = field(default_factory=tuple)
    device_type: Literal["GPU", "CPU"] = "CPU"
    gpus: tuple[GpuInfo, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = field(default_factory=tuple)
    # multi_worker only: the cluster, and the MultiWorkerMirroredStrategy created for it (the
    # trainer must use this one: a second one cannot be made in the same process).
    cluster: Optional[Cluster] = None
    strategy: Any = field(default=None, compare=False, repr=False)
    # TensorFlow's CPU thread pools, sized to the cores this process may use (xtts_cli/host.py).
    threads: Optional[ThreadPlan] = None

    @property
    def distributed(self) -> bool:
        """The step runs under a distribution strategy (replicas on this machine or a cluster's)."""
        return self.kind in ("mirrored", "multi_worker")

    @property
    def worker_cluster(self) -> Optional[Cluster]:
        """The cluster this process is one worker of; None unless multi-worker."""
        return self.cluster if self.kind == "multi_worker" else None

    @property
    def is_chief(self) -> bool:
        """This process writes the run directory: any run but a non-chief worker of a cluster's."""
        return self.worker_cluster is None or self.worker_cluster.is_chief

    @property
    def num_replicas(self) -> int:
        """Replicas on this machine (`replica_devices`); across a cluster see `strategy.num_replicas_in_sync`."""
        return max(1, len(self.replica_devices))

    def describe(self) -> str:
        threads = f"; {self.threads.describe()}" if self.threads is not None else ""
        return self._layout() + threads

    def _layout(self) -> str:
        if self.kind == "split":
            return f"data on {self.data_device}, model on {self.model_device}"
        if self.kind == "mirrored":
            return f"mirrored over {', '.join(self.replica_devices)}"
        if self.kind == "multi_worker" and self.cluster is not None:
            in_sync = self.strategy.num_replicas_in_sync if self.strategy is not None else "?"
            return (
                f"multi-worker {self.cluster.describe()}: {in_sync} replicas in sync, here on "
                f"{', '.join(self.replica_devices)}"
            )
        return f"one device: {self.model_device}"


_configured: Optional[tuple[DevicesConfig, DevicePlan]] = None


def _check_split(devices: DevicesConfig, count: int, kind: str) -> None:
    """A DeviceError naming every index of the data/model split this machine lacks (one edit fixes both)."""
    missing = [
        f"devices.{what} is {getattr(devices, what)}"
        for what in ("data_gpu", "model_gpu")
        if getattr(devices, what) is not None and getattr(devices, what) >= count
    ]
    if missing:
        raise _device_error(" and ".join(missing), count, kind)


def _device_error(what: str, count: int, kind: str) -> XttsError:
    available = f"indices 0-{count - 1}" if count else "none"
    # Logical CPU devices are made to order: one more of them, where the split stands on them.
    twin = (
        f"or raise devices.logical_cpu_devices past {count}"
        if "logical CPU" in kind
        else "on a machine without GPUs, devices.logical_cpu_devices: 2 runs the same split on CPU"
    )
    return DeviceError(  # exit code 4: a device that does not exist
        f"{what} but this machine has {count} {kind} (available: {available})",
        hint=f"pick an existing index, or leave data_gpu/model_gpu unset to train on one device; {twin}",
    )


def configure_devices(
    devices: DevicesConfig, *, join_cluster: bool = False, say: Optional[Callable[[str], None]] = None
) -> DevicePlan:
    """Set up TensorFlow's devices for this request and say where things run.

    TensorFlow allows device configuration only once per process; a second call with the same
    request returns the same plan, a different one is an error.

    `devices.strategy: multi_worker` joins the TF_CONFIG cluster only with `join_cluster` (the
    trainer); other commands (diagnose) plan this machine's devices alone, as `auto` would, rather
    than block until every worker of the cluster has started. `say`: what it waits for, meanwhile.
    """
    global _configured
    if _configured is not None:
        if _configured[0] == devices:
            return _configured[1]
        raise XttsError(
            "TensorFlow's devices are already set up for another device request in this process",
            hint="run each device layout in its own process",
        )
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    threads = plan_threads()
    if devices.strategy == "multi_worker" and join_cluster:
        cluster = cluster_from_environment(os.environ)  # before TensorFlow loads: a bad TF_CONFIG costs nothing
        import tensorflow as tf

        apply_threads(tf, threads)
        plan = _plan_multi_worker(tf, devices, cluster, say or (lambda line: None))
    else:
        import tensorflow as tf

        apply_threads(tf, threads)

        local = (
            DevicesConfig.model_validate({**devices.model_dump(), "strategy": "auto"})
            if devices.strategy == "multi_worker"
            else devices
        )
        plan = _plan_cpu_twin(tf, local) if devices.logical_cpu_devices else _plan_gpus(tf, local)
        if devices.strategy == "multi_worker":
            plan = replace(
                plan, notes=plan.notes + ("devices.strategy multi_worker: this command plans this machine alone",)
            )
    plan = replace(plan, threads=threads)
    _configured = (devices.model_copy(), plan)
    return plan


def plan_from_machine(devices: DevicesConfig, machine: MachineInfo) -> DevicePlan:
    """The plan `configure_devices` makes, from the machine probe (NVML's GPUs) without TensorFlow,
    for `xtts validate` to report; a multi-worker config is planned for this machine alone."""
    local = devices
    if devices.strategy == "multi_worker":
        local = DevicesConfig.model_validate({**devices.model_dump(), "strategy": "auto"})
    if devices.logical_cpu_devices:
        names = tuple(f"/device:CPU:{i}" for i in range(devices.logical_cpu_devices))
        plan = _plan_from_names(local, names, "CPU", "logical CPU devices", ())
    elif machine.gpus:
        names = tuple(f"/device:GPU:{i}" for i in range(len(machine.gpus)))
        plan = _plan_from_names(local, names, "GPU", "GPUs NVML lists", tuple(machine.gpus))
    elif local.splits_data_and_model:  # a split of GPUs this machine lacks: refused, as training refuses it
        _check_split(local, 0, "GPUs NVML lists")
        raise AssertionError("a data/model split fits no machine without GPUs")
    else:
        notes = (MIRRORED_WITHOUT_GPUS,) if devices.strategy == "mirrored" else ()
        plan = DevicePlan(kind="single", data_device=None, model_device="/device:CPU:0", device_type="CPU", notes=notes)
    return replace(plan, threads=plan_threads())


def _plan_multi_worker(tf, devices: DevicesConfig, cluster: Cluster, say: Callable[[str], None]) -> DevicePlan:
    # The config refuses a data/model split or logical CPU devices with multi_worker (schema.py).
    port = cluster.tasks[cluster.worker_index].rpartition(":")[2]
    notes = [
        # TensorFlow's server binds every interface and has no option for one (nor authentication).
        f"this worker listens on every network interface at port {port} (TensorFlow's collective server, no "
        'authentication): keep the cluster on a trusted network (docs/scaling.md, "Who can reach the servers")'
    ]
    gpus = tf.config.list_physical_devices("GPU")  # lists without initialising the runtime
    try:
        for gpu in gpus:
            tf.config.experimental.set_memory_growth(gpu, True)
    except RuntimeError as exc:
        notes.append(f"GPU memory growth not set: {exc}")
    others = [task for index, task in enumerate(cluster.tasks) if index != cluster.worker_index]
    # TFConfigClusterResolver reads TF_CONFIG; it is what the strategy was given to parse, checked above.
    # The strategy blocks in TensorFlow's C++ until every task has started and connected, where no
    # Python signal handler runs: Ctrl-C ends the process at once meanwhile (nothing of the run is
    # written yet), then its handler is back. Said once it does: a Ctrl-C after the line must not meet
    # the old handler, which only asks the loop to stop and would leave it waiting. SIGTERM cannot be
    # kept so: TensorFlow's preemption notifier sets a C++ handler of its own as the strategy starts,
    # which only notes it, and no Python thread runs to set it back (the wait holds the interpreter lock).
    with _signals_end_the_process():
        if others:  # a cluster of one has nobody to wait for
            say(
                f"waiting for the cluster's other worker{'s' if len(others) > 1 else ''} to start and connect "
                f"({', '.join(others)}); Ctrl-C stops this one (SIGTERM does not until they connect: use kill -INT)"
            )
        try:
            strategy = tf.distribute.MultiWorkerMirroredStrategy(
                cluster_resolver=tf.distribute.cluster_resolver.TFConfigClusterResolver()
            )
        except tf.errors.UnknownError as exc:  # the port was taken after the check before the scan
            if "gRPC server" not in str(exc):
                raise
            check_listening_port(cluster, "TensorFlow could not start its gRPC server there (the port is in use?)")
            raise
    nvml_gpus = tuple(query_nvml()[0]) if gpus else ()
    replicas = tuple(strategy.extended.worker_devices)
    return DevicePlan(
        kind="multi_worker",
        data_device=None,
        model_device=replicas[0],
        replica_devices=replicas,
        device_type="GPU" if gpus else "CPU",
        gpus=nvml_gpus,
        notes=tuple(notes),
        cluster=cluster,
        strategy=strategy,
    )


@contextlib.contextmanager
def _signals_end_the_process() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    kept = {number: signal.signal(number, signal.SIG_DFL) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in kept.items():
            if handler is not None:  # None: a handler not set from Python, which cannot be set back
                signal.signal(number, handler)


def _plan_cpu_twin(tf, devices: DevicesConfig) -> DevicePlan:
    count = devices.logical_cpu_devices
    cpu = tf.config.list_physical_devices("CPU")[0]
    try:
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * count)
    except RuntimeError as exc:  # TF already initialised in this process with another layout
        existing = len(tf.config.list_logical_devices("CPU"))
        if existing < count:
            raise XttsError(f"cannot split the CPU into {count} logical devices: {exc}") from None
    names = tuple(f"/device:CPU:{i}" for i in range(count))
    return _plan_from_names(devices, names, "CPU", "logical CPU devices", ())


def _plan_gpus(tf, devices: DevicesConfig) -> DevicePlan:
    physical = tf.config.list_physical_devices("GPU")
    nvml_gpus, _, _ = query_nvml()
    split = devices.splits_data_and_model
    if split:
        _check_split(devices, len(physical), "GPUs visible to TensorFlow")
    isolated: dict[int, int] = {}
    if split and devices.enable_memory_isolation:
        for what in ("data_gpu", "model_gpu"):
            index, limit = getattr(devices, what), getattr(devices, f"{what}_memory")
            if limit is None:
                continue
            card = next((g for g in nvml_gpus if g.index == index), None)
            if card is not None and limit > card.memory_total_mib:
                raise XttsError(
                    f"devices.{what}_memory is {limit} MiB but GPU {index} ({card.name}) has "
                    f"{card.memory_total_mib} MiB",
                    hint=f"set it to at most {int(card.memory_total_mib * 0.9)}",
                )
            if index in isolated and isolated[index] != limit:
                raise XttsError(f"GPU {index} is both data and model GPU with different memory limits; give one limit")
            isolated[index] = limit
    notes = []
    try:
        for index, device in enumerate(physical):
            if index in isolated:
                tf.config.set_logical_device_configuration(
                    device, [tf.config.LogicalDeviceConfiguration(memory_limit=isolated[index])]
                )
            else:
                tf.config.experimental.set_memory_growth(device, True)
    except RuntimeError as exc:
        notes.append(f"GPU memory settings not applied: {exc}")
    notes += _unused_memory_settings(devices, split)
    names = tuple(f"/device:GPU:{i}" for i in range(len(physical)))
    if not names:
        if devices.strategy == "mirrored":
            notes.append(MIRRORED_WITHOUT_GPUS)
        return DevicePlan(
            kind="single",
            data_device=None,
            model_device="/device:CPU:0",
            device_type="CPU",
            notes=("no GPU visible to TensorFlow: training on the CPU", *notes),
        )
    return _plan_from_names(devices, names, "GPU", "GPUs visible to TensorFlow", tuple(nvml_gpus), tuple(notes))


def _unused_memory_settings(devices: DevicesConfig, split: bool) -> list[str]:
    """The memory settings given (--data-gpu-memory, --enable-memory-isolation, ...) that do nothing
    without a data/model split: said, not silently dropped."""
    limits = [f"devices.{name}" for name in ("data_gpu_memory", "model_gpu_memory") if getattr(devices, name)]
    if split:
        if limits and not devices.enable_memory_isolation:
            return [
                f"{', '.join(limits)}: no effect without devices.enable_memory_isolation (--enable-memory-isolation)"
            ]
        return []
    given = limits + (["devices.enable_memory_isolation"] if devices.enable_memory_isolation else [])
    if not given:
        return []
    return [
        f"{', '.join(given)}: no effect without a data/model split (devices.data_gpu and devices.model_gpu, "
        "--data-gpu / --model-gpu), which this run has not"
    ]


def _plan_from_names(
    devices: DevicesConfig,
    names: tuple[str, ...],
    device_type: Literal["GPU", "CPU"],
    kind_label: str,
    gpus: tuple[GpuInfo, ...],
    notes: tuple[str, ...] = (),
) -> DevicePlan:
    if devices.data_gpu is not None and devices.model_gpu is not None:  # spelled out: mypy narrows both
        _check_split(devices, len(names), kind_label)
        if devices.strategy == "mirrored":
            raise XttsError(
                "devices.strategy is mirrored but data_gpu/model_gpu ask for a data/model split",
                hint="use one: remove data_gpu/model_gpu for mirrored, or set strategy: single",
            )
        return DevicePlan(
            kind="split",
            data_device=names[devices.data_gpu],
            model_device=names[devices.model_gpu],
            replica_devices=(names[devices.model_gpu],),
            device_type=device_type,
            gpus=gpus,
            notes=notes,
        )
    mirrored = devices.strategy == "mirrored" or (
        devices.strategy == "auto" and len(names) > 1 and device_type == "GPU"
    )
    if mirrored:
        if len(names) < 2 and devices.strategy == "mirrored":
            notes = notes + (f"strategy mirrored over a single device ({names[0]})",)
        return DevicePlan(
            kind="mirrored",
            data_device=None,
            model_device=names[0],
            replica_devices=names,
            device_type=device_type,
            gpus=gpus,
            notes=notes,
        )
    return DevicePlan(
        kind="single",
        data_device=None,
        model_device=names[0],
        replica_devices=(names[0],),
        device_type=device_type,
        gpus=gpus,
        notes=notes,
    )
