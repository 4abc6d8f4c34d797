"""The CPU cores a run may use (affinity and cgroup quota) and the threads planned on them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from training_support import subprocess_env, tiny_config

from xtts_cli.errors import XttsError
from xtts_cli.host import CpuBudget, cgroup_cpu_quota, plan_threads


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_cgroup_v2_quota_is_the_tightest_of_the_group_and_its_parents(tmp_path: Path) -> None:
    _write(tmp_path / "cpu.max", "max 100000\n")
    _write(tmp_path / "docker" / "cpu.max", "300000 100000\n")
    _write(tmp_path / "docker" / "abc" / "cpu.max", "150000 100000\n")
    assert cgroup_cpu_quota(tmp_path, "0::/docker/abc\n") == 1.5
    _write(tmp_path / "docker" / "cpu.max", "100000 100000\n")
    assert cgroup_cpu_quota(tmp_path, "0::/docker/abc\n") == 1.0
    # Inside a container the group is mounted at the root: "0::/" and the root's own cpu.max.
    _write(tmp_path / "cpu.max", "200000 100000\n")
    assert cgroup_cpu_quota(tmp_path, "0::/\n") == 2.0
    assert cgroup_cpu_quota(tmp_path / "nothing-mounted", "0::/\n") is None


def test_cgroup_v1_quota_and_no_quota(tmp_path: Path) -> None:
    group = tmp_path / "cpu,cpuacct" / "docker" / "abc"
    _write(group / "cpu.cfs_quota_us", "250000\n")
    _write(group / "cpu.cfs_period_us", "100000\n")
    assert cgroup_cpu_quota(tmp_path, "4:cpu,cpuacct:/docker/abc\n2:memory:/docker/abc\n") == 2.5
    _write(group / "cpu.cfs_quota_us", "-1\n")
    assert cgroup_cpu_quota(tmp_path, "4:cpu,cpuacct:/docker/abc\n") is None


def test_cores_are_the_affinity_capped_by_the_quota_and_the_environment_wins() -> None:
    assert CpuBudget(affinity=64, online=64, quota=2.0).cores == 2
    assert CpuBudget(affinity=64, online=64, quota=1.5).cores == 2  # a share of a core still runs a thread
    assert CpuBudget(affinity=1, online=8, quota=4.0).cores == 1
    assert CpuBudget(affinity=3, online=8).cores == 3
    plan = plan_threads(CpuBudget(affinity=64, online=64, quota=2.0), environ={})
    assert (plan.intra_op, plan.inter_op, plan.from_environment) == (2, 2, False)
    assert plan.describe() == "2+2 CPU threads on 2 CPU cores usable (affinity 64 of 64, cgroup quota 2 CPUs)"
    plan = plan_threads(CpuBudget(affinity=4, online=4), environ={"TF_NUM_INTRAOP_THREADS": "3"})
    assert (plan.intra_op, plan.inter_op, plan.from_environment) == (3, 4, True)


@pytest.mark.parametrize("value", ["-5", "two", "1.5", "\u00b2"])
def test_a_thread_count_that_is_no_count_is_refused_naming_the_variable(value: str) -> None:
    with pytest.raises(XttsError) as raised:
        plan_threads(CpuBudget(affinity=4, online=4), environ={"TF_NUM_INTEROP_THREADS": value})
    assert raised.value.lines == [f"TF_NUM_INTEROP_THREADS={value!r} is not a thread count"]
    assert "unset it" in (raised.value.hint or "")
    plan = plan_threads(CpuBudget(affinity=4, online=4), environ={"TF_NUM_INTEROP_THREADS": " "})
    assert (plan.inter_op, plan.from_environment) == (4, False)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("taskset") is None, reason="taskset (util-linux) is not installed")
def test_a_run_on_one_core_plans_one_thread_says_so_and_records_it(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = subprocess.run(
        ["taskset", "-c", "0", sys.executable, "-m", "xtts_cli", "train", "-c", str(tiny_config(tmp_path))]
        + ["--run-dir", str(run_dir), "--steps", "2"],
        cwd=tmp_path,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1+1 CPU threads on 1 CPU core usable (affinity 1 of " in done.stderr
    recorded = json.loads((run_dir / "run.json").read_text())["history"][-1]["cpu_threads"]
    assert recorded["affinity"] == recorded["cores"] == recorded["intra_op"] == recorded["inter_op"] == 1
