"""The CPU cores this process may use, and the threads TensorFlow is given on them.

TensorFlow sizes its thread pools from the cores in the affinity mask and does not count a
cgroup's CPU quota: in a container limited to 2 CPUs (`docker run --cpus 2`) the mask still holds
every host core, and a pool of that many threads spends the quota preempting itself. So the cores
are counted here from both (`os.sched_getaffinity`; the cgroup v2 `cpu.max` or v1
`cpu.cfs_quota_us` of this process's group and its parents), TensorFlow's pools are sized to
them, and the run records and prints the count. `TF_NUM_INTRAOP_THREADS` and
`TF_NUM_INTEROP_THREADS`, when set, win.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from xtts_cli.errors import XttsError

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_STAT = Path("/proc/stat")
# The shortest stretch CPU use is averaged over: os.times() and /proc/stat count in 10 ms clock ticks.
MIN_CPU_WINDOW_SECONDS = 1.0


@dataclass(frozen=True)
class CpuBudget:
    """Cores this process may use: its affinity mask, capped by its cgroup's CPU quota."""

    affinity: int
    online: int
    quota: Optional[float] = None  # in cores (quota / period); None: no quota

    @property
    def cores(self) -> int:
        if self.quota is None:
            return self.affinity
        return max(1, min(self.affinity, math.ceil(self.quota - 1e-9)))

    def describe(self) -> str:
        limits = [f"affinity {self.affinity} of {self.online}"]
        limits.append(f"cgroup quota {self.quota:g} CPUs" if self.quota is not None else "no cgroup quota")
        return f"{self.cores} CPU core{'s' if self.cores != 1 else ''} usable ({', '.join(limits)})"


@dataclass(frozen=True)
class ThreadPlan:
    """TensorFlow's two pools: intra-op (inside one kernel) and inter-op (kernels side by side)."""

    budget: CpuBudget
    intra_op: int
    inter_op: int
    from_environment: bool = False

    def describe(self) -> str:
        source = " (from TF_NUM_*_THREADS)" if self.from_environment else ""
        return f"{self.intra_op}+{self.inter_op} CPU threads{source} on {self.budget.describe()}"

    def record(self) -> dict:
        return {"cores": self.budget.cores, **asdict(self.budget), "intra_op": self.intra_op, "inter_op": self.inter_op}


def _affinity() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _quota_v2(text: str) -> Optional[float]:
    quota, _, period = text.strip().partition(" ")
    if quota == "max" or not period:
        return None
    return int(quota) / int(period)


def _quota_v1(directory: Path) -> Optional[float]:
    quota = int((directory / "cpu.cfs_quota_us").read_text().strip())
    period = int((directory / "cpu.cfs_period_us").read_text().strip())
    return quota / period if quota > 0 and period > 0 else None


def _groups(proc_cgroup: str) -> list[tuple[str, str]]:
    """(controllers, path) per line of /proc/self/cgroup ("0::/user.slice", "4:cpu,cpuacct:/docker/x")."""
    groups = []
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            groups.append((parts[1], parts[2]))
    return groups


def cgroup_cpu_quota(root: Path = CGROUP_ROOT, proc_cgroup: Optional[str] = None) -> Optional[float]:
    """The tightest CPU quota, in cores, over this process's cgroup and its parents (v2 or v1); a
    container sees its own group mounted at the root, so the root's files count too."""
    if proc_cgroup is None:
        try:
            proc_cgroup = Path("/proc/self/cgroup").read_text()
        except OSError:
            proc_cgroup = ""
    found: list[float] = []
    for controllers, path in _groups(proc_cgroup) or [("", "/")]:
        version2 = controllers == ""
        if version2:
            base = root
        elif "cpu" in controllers.split(","):
            base = next((root / n for n in (controllers, "cpu", "cpu,cpuacct") if (root / n).is_dir()), root / "cpu")
        else:
            continue
        directory = base / path.strip("/")
        for candidate in (directory, *directory.parents):
            if candidate != base and base not in candidate.parents:
                break  # above the hierarchy's mount
            try:
                quota = _quota_v2((candidate / "cpu.max").read_text()) if version2 else _quota_v1(candidate)
            except (OSError, ValueError):
                continue
            if quota is not None:
                found.append(quota)
    return min(found) if found else None


def cpu_budget() -> CpuBudget:
    return CpuBudget(affinity=_affinity(), online=os.cpu_count() or 1, quota=cgroup_cpu_quota())


def usable_cpu_count() -> int:
    return cpu_budget().cores


def plan_threads(budget: Optional[CpuBudget] = None, environ: Optional[Mapping[str, str]] = None) -> ThreadPlan:
    """One thread per usable core in each pool (TensorFlow's own rule, with the quota counted)."""
    budget = budget or cpu_budget()
    given = os.environ if environ is None else environ
    intra, inter = (_thread_count(given, name) for name in ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"))
    return ThreadPlan(
        budget=budget,
        intra_op=budget.cores if intra is None else intra,
        inter_op=budget.cores if inter is None else inter,
        from_environment=intra is not None or inter is not None,
    )


def _thread_count(given: Mapping[str, str], name: str) -> Optional[int]:
    """The count a TF_NUM_*_THREADS variable sets (None: unset or empty). A value that is no count
    is refused: TensorFlow would log it and use its own, and the user's setting would be lost unsaid."""
    value = given.get(name, "").strip()
    if not value:
        return None
    if not (value.isascii() and value.isdigit()):  # "²" is a digit to str.isdigit, and no int
        raise XttsError(
            f"{name}={value!r} is not a thread count",
            hint=f"set {name} to a whole number (0: TensorFlow chooses) or unset it",
        )
    return int(value)


def apply_threads(tf, plan: ThreadPlan) -> None:
    """Size TensorFlow's pools (before its runtime starts; afterwards TensorFlow keeps its own)."""
    try:
        tf.config.threading.set_intra_op_parallelism_threads(plan.intra_op)
        tf.config.threading.set_inter_op_parallelism_threads(plan.inter_op)
    except RuntimeError:  # the runtime is already up in this process (a test, a second command)
        pass


def busy_cpu_seconds(cpus: set[int], stat: Optional[str] = None) -> Optional[float]:
    """CPU seconds the cores `cpus` have spent busy since boot, for every process (and, as steal,
    for other virtual machines on the host): user, nice, system, irq, softirq and steal of their
    /proc/stat lines (proc(5)). None where /proc/stat cannot be read (not Linux)."""
    try:
        text = PROC_STAT.read_text() if stat is None else stat
    except OSError:
        return None
    ticks = 0
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
            fields = [int(v) for v in rest.split()]
            ticks += sum(fields[i] for i in (0, 1, 2, 5, 6, 7) if i < len(fields))
    return ticks / os.sysconf("SC_CLK_TCK")


def counted_cores() -> Optional[set[int]]:
    """The cores whose busy time tells what other processes take from this one: its affinity mask,
    where no cgroup quota shares them with tenants that cannot be told apart; else None."""
    if cgroup_cpu_quota() is not None:
        return None
    try:
        return os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return None


def own_cpu_seconds() -> float:
    """This process's CPU seconds (user + system, every thread)."""
    times = os.times()
    return times.user + times.system


class CpuSampler:
    """CPU time on a background thread: this process's (os.times: user + system, all threads) and,
    where the cores it may run on are its alone to count (an affinity mask and no cgroup quota, so
    other tenants' cores are not read as its own), every process's on those cores. So a measurement
    can say how many cores it kept busy, and how many other processes took beside it."""

    def __init__(self, interval: float = 0.05):
        self.interval = interval
        self.samples: list[tuple[float, float]] = []  # (perf_counter, this process's CPU seconds)
        self.host: list[Optional[float]] = []  # the same instants: every process's busy seconds on our cores
        self._cpus = counted_cores()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="xtts-cpu-sampler", daemon=True)

    def _sample(self) -> None:
        self.host.append(busy_cpu_seconds(self._cpus) if self._cpus else None)
        self.samples.append((time.perf_counter(), own_cpu_seconds()))

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> CpuSampler:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _window(self, last_seconds: Optional[float]) -> tuple[int, int, float]:
        """(index before the start, index after it, the start's share between them) of the last
        `last_seconds` (at least MIN_CPU_WINDOW_SECONDS, at most the whole run; None: the whole run)."""
        end_t = self.samples[-1][0]
        wanted = end_t - self.samples[0][0] if last_seconds is None else max(last_seconds, MIN_CPU_WINDOW_SECONDS)
        start = max(end_t - wanted, self.samples[0][0])
        before = max(i for i, s in enumerate(self.samples) if s[0] <= start)
        after = min(i for i, s in enumerate(self.samples) if s[0] >= start)
        span = self.samples[after][0] - self.samples[before][0]
        return before, after, (start - self.samples[before][0]) / span if span > 0 else 0.0

    def _rate(self, series: list[float], last_seconds: Optional[float]) -> float:
        before, after, share = self._window(last_seconds)
        start_t = self.samples[before][0] + share * (self.samples[after][0] - self.samples[before][0])
        start_value = series[before] + share * (series[after] - series[before])
        end_t = self.samples[-1][0]
        return (series[-1] - start_value) / (end_t - start_t) if end_t > start_t else 0.0

    def cores_busy(self, last_seconds: Optional[float] = None) -> float:
        """This process's CPU seconds per wall second over the last `last_seconds`, interpolating
        between samples."""
        return self._rate([cpu for _, cpu in self.samples], last_seconds)

    def others_busy(self, last_seconds: Optional[float] = None) -> Optional[float]:
        """Cores other processes kept busy, on the cores this process may use, over the same window;
        None where that cannot be read (no /proc/stat, a cgroup quota)."""
        if any(value is None for value in self.host) or len(self.host) != len(self.samples):
            return None
        every = self._rate([float(value) for value in self.host if value is not None], last_seconds)
        return max(0.0, every - self.cores_busy(last_seconds))
