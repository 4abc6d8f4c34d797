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
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

CGROUP_ROOT = Path("/sys/fs/cgroup")


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
    intra, inter = given.get("TF_NUM_INTRAOP_THREADS", ""), given.get("TF_NUM_INTEROP_THREADS", "")
    return ThreadPlan(
        budget=budget,
        intra_op=int(intra) if intra.isdigit() else budget.cores,
        inter_op=int(inter) if inter.isdigit() else budget.cores,
        from_environment=intra.isdigit() or inter.isdigit(),
    )


def apply_threads(tf, plan: ThreadPlan) -> None:
    """Size TensorFlow's pools (before its runtime starts; afterwards TensorFlow keeps its own)."""
    try:
        tf.config.threading.set_intra_op_parallelism_threads(plan.intra_op)
        tf.config.threading.set_inter_op_parallelism_threads(plan.inter_op)
    except RuntimeError:  # the runtime is already up in this process (a test, a second command)
        pass
