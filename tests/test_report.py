"""`xtts report`: one archive with every section, with the home path, the dataset's file names and
planted secrets kept out; and the redaction on its own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml
from training_support import lock_held_elsewhere, subprocess_env

from xtts_cli.diagnosis.report import Section, redactor, speaker_names


def _an_earlier_report() -> bytes:
    """An earlier report as `xtts report` writes one: a gzip tar, its README.txt first (a file of another
    kind, a user's own backup.tar.gz among them, is refused as --out)."""
    import io

    buffer, data = io.BytesIO(), b"an earlier report\n"
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("xtts-report/README.txt")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


EARLIER = _an_earlier_report()

REPO = Path(__file__).resolve().parents[1]
SECRETS = {"HF_TOKEN": "hf_plantedTokenValue42", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMIplantedKEY"}


def test_redaction_replaces_home_dataset_names_and_always_secrets(tmp_path: Path) -> None:
    home, data = "/home/ana", "/home/ana/corpora/voice"
    text = f"read {data}/wavs/ana-0001.wav from {home}/runs/x with token hf_plantedTokenValue42"
    clean = redactor(home=home, datasets=[data], environ=SECRETS, redact=True)(text)
    assert "ana-0001" not in clean and home not in clean and "hf_planted" not in clean
    assert clean.startswith("read <dataset>/") and clean.endswith(".wav from ~/runs/x with token <secret>")
    # The same file name hashes the same way each time, so two sections still agree.
    assert clean.split()[1] == redactor(home=home, datasets=[data], environ={}, redact=True)(
        f"{data}/wavs/ana-0001.wav"
    )
    # A folder that only begins like the home or the dataset is another one: not "~ice", nor "<dataset>2".
    near = redactor(home="/home/an", datasets=[data], environ={}, redact=True)(f"{home}/x {data}2/a.wav {home}")
    assert near == f"{home}/x {data}2/a.wav {home}"
    assert redactor(home=home, datasets=[], environ={}, redact=True)(f"{home}. {home}") == "~. ~"
    kept = redactor(home=home, datasets=[data], environ=SECRETS, redact=False)(text)
    assert f"{data}/wavs/ana-0001.wav" in kept and "hf_planted" not in kept
    # What the JSON reports name relative to the dataset, and the dataset's own (folder) name.
    report = (
        '{"bad_files": [{"path": "wavs/ana-0002.wav", "dataset": "voice"}], "datasets": [{"name": "voice", '
        '"language": "en", "unlisted_example": "wavs/ana-0003.FLAC", "unnamed_speaker_example": "ana-0004", '
        '"unknown_speaker_rows_example": "ana-0005", "lone_transcript_example": "wavs/ana-0006.lab", '
        '"speaker_minutes": {"voice": 1.5, "ana": 2.0}}]}'  # clips that name no speaker: the folder's
    )
    hidden = redactor(home=home, datasets=[data], environ={}, redact=True, speakers=["voice", "ana"])(report)
    assert "ana-" not in hidden and '"voice"' not in hidden and '"language": "en"' in hidden
    assert '"dataset": "<dataset-name>"' in hidden and hidden.count(".wav") == 1 and ".FLAC" in hidden
    # A speaker's name is often a person's (it had been kept, beside the files' hidden names).
    assert '"speaker_minutes": {"<dataset-name>": 1.5, "<speaker-1>": 2.0}' in hidden
    assert speaker_names([Section("validate.json", report), Section("x.yaml", "{")]) == ["voice", "ana"]
    # Where a finding's message names it, and the others of its list; "voice" as a word stays.
    message = (
        "speaker names 'ana' in voice and extra, 'bo' in extra, voice and more: each name's clips train as one "
        "voice; 3 transcripts of dataset voice hold digits"
    )
    hidden = redactor(
        home=home, datasets=[data, "/data/extra", "/data/more"], environ={}, redact=True, speakers=["bo", "ana"]
    )(message)
    assert hidden == (
        "speaker names '<speaker-2>' in <dataset-name> and <dataset-name>, '<speaker-1>' in <dataset-name>, "
        "<dataset-name> and "
        "<dataset-name>: each name's clips train as one voice; 3 transcripts of dataset <dataset-name> hold digits"
    ), hidden


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One `xtts report` (five processes) for both slow tests: a run under HOME given alone (no -c,
    so the report takes the run's own config), the dataset under HOME, secrets planted in its
    environment. Returns the archive's files by name, the command's stdout, home, run and archive."""
    home = tmp_path_factory.mktemp("report") / "home"
    data = home / "corpora" / "voice"
    shutil.copytree(REPO / "xtts_cli" / "data" / "sample", data)
    run = home / "runs" / "voice"
    shutil.copytree(REPO / "tests" / "data" / "run_before_run_data", run)
    # Trained on a dataset outside HOME that --data does not name: its file names are redacted too.
    # Named through a link, as the config keeps it: redacted as the disk has it alone, it had been kept.
    (home.parent / "elsewhere").mkdir()
    (home.parent / "linked").symlink_to(home.parent / "elsewhere")
    trained_on = home.parent / "linked" / "voz-jane"
    config = run / "config.yaml"
    config.write_text(config.read_text().replace("  dataset_path: null", f"  dataset_path: {trained_on}", 1))
    out = home.parent / "reports" / "report.tar.gz"  # a folder not yet there is made, as export's is
    env = {**subprocess_env(), **SECRETS, "HOME": str(home)}
    args = ["report", "--data", "corpora/voice", "-r", str(run), "-o", str(out), "--quick"]  # as typed in HOME
    done = subprocess.run(
        [sys.executable, "-m", "xtts_cli", *args], capture_output=True, text=True, env=env, cwd=home, timeout=900
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with tarfile.open(out) as archive:
        files = {m.name.split("/", 1)[1]: archive.extractfile(m).read().decode() for m in archive.getmembers()}
    return {"files": files, "stdout": done.stdout, "home": home, "run": run, "out": out}


@pytest.mark.slow
def test_the_archive_holds_every_section_and_nothing_private(reported: dict) -> None:
    files, home, out = reported["files"], reported["home"], reported["out"]
    assert f"wrote {out} (" in reported["stdout"] and "KiB" in reported["stdout"]
    assert set(files) == {
        "README.txt",
        "environment.json",
        "config.yaml",
        "validate.json",
        "diagnose.json",
        "profile-pipeline.json",
        "profile-step.json",
        "run/config.yaml",
        "run/run.json",
        "run/metrics-last.jsonl",
        "run/watch.jsonl",
    }
    assert json.loads(files["run/run.json"])["history"]  # the versions and starts the run was made with
    for name in ("validate.json", "diagnose.json", "profile-pipeline.json", "profile-step.json"):
        assert "error" not in json.loads(files[name]), files[name][:500]
    environment = json.loads(files["environment.json"])
    assert environment["packages"]["tensorflow"] and "cpu_budget" in environment
    assert environment["packages"]["xtts-cli"]  # which xtts made it (it had been looked up as "xtts": none)
    everything = "\n".join(files.values())
    assert str(home) not in everything and "corpora/voice" not in everything
    assert not any(value in everything for value in SECRETS.values())
    assert "XTTS001-0001" not in everything and "<dataset>" in everything
    assert "voz-jane" not in files["run/config.yaml"] and "<dataset>" in files["run/config.yaml"]
    assert os.path.getsize(out) < 1_000_000


@pytest.mark.slow
def test_a_report_on_a_dataset_that_is_not_there_says_which_parts_failed_and_keeps_the_earlier_archive(
    tmp_path: Path,
) -> None:
    out = tmp_path / "report.tar.gz"
    out.write_bytes(EARLIER)
    args = ["report", "-c", "tiny-cpu", "--data", str(tmp_path / "no-such-voice"), "-o", str(out), "--quick"]
    done = subprocess.run(
        [sys.executable, "-m", "xtts_cli", *args], capture_output=True, text=True, env=subprocess_env(), timeout=600
    )
    # validate and diagnose wrote whole reports of the errors they found: the archive is what a user
    # stuck on them attaches, not "every command the report ran failed" and exit 1.
    assert done.returncode == 0, done.stderr[-2000:]
    assert "validate.json: " in done.stdout and "(exit 1: its report lists the errors it found)" in done.stdout
    # The user's own terminal names their path; the archive's copy is redacted.
    missing = tmp_path / "no-such-voice"
    assert "profile-step.json: " in done.stdout and f"(exit 1: data.dataset_path: '{missing}' is not" in done.stdout
    assert (tmp_path / "report.tar.gz.bak").read_bytes() == EARLIER  # kept, and said so
    assert f"the earlier one is {out}.bak" in done.stdout
    assert tarfile.is_tarfile(out)  # what each part said is still there to read
    with tarfile.open(out) as archive:
        said = [archive.extractfile(m).read().decode() for m in archive.getmembers() if m.isfile()]
    assert str(missing) not in "".join(said) and "'<dataset>' is not a directory" in "".join(said)
    # Its README.txt gives the terminal's reasons: it had kept stderr's last line, a progress line or a hint.
    with tarfile.open(out) as archive:
        readme = archive.extractfile("xtts-report/README.txt").read().decode()
    assert "validate.json: " in readme and "    its report lists the errors it found" in readme, readme
    assert "    data.dataset_path: '<dataset>' is not a directory" in readme, readme


def test_an_archive_that_cannot_be_written_is_refused_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a file, where a folder would go")
    done = subprocess.run(
        [sys.executable, "-m", "xtts_cli", "report", "-o", str(tmp_path / "notes.txt" / "r.tar.gz")],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
    )
    assert done.returncode != 0 and f"{tmp_path / 'notes.txt'} is a file, not a folder" in done.stderr
    assert "Traceback" not in done.stderr and "validate" not in done.stdout

    def report_into(out: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "xtts_cli", "report", "-o", out]
        return subprocess.run(command, capture_output=True, text=True, env=subprocess_env(), cwd=tmp_path, timeout=60)

    dash = report_into("-")
    assert dash.returncode != 0 and "--out -: the report is an archive" in dash.stderr
    assert not (tmp_path / "-").exists()
    # A file of the user's: a report had replaced it, its one copy then the .bak a second report replaced.
    (tmp_path / "mine.yaml").write_text("data:\n  batch_size: 4\n", encoding="utf-8")
    mine = report_into("mine.yaml")
    assert mine.returncode == 1 and "--out mine.yaml is a file of yours, not an earlier xtts report" in mine.stderr
    assert "hint: pass -o mine.tar.gz, or move it" in mine.stderr and "validate" not in mine.stdout
    assert (tmp_path / "mine.yaml").read_text(encoding="utf-8") == "data:\n  batch_size: 4\n"
    assert not (tmp_path / "mine.yaml.bak").exists()
    # ... so is a gzip archive of the user's (any gzip file had been taken for an earlier report, moved to .bak,
    # and a second report wrote over that .bak).
    backup = __import__("gzip").compress(b"precious", mtime=0)
    (tmp_path / "backup.tar.gz").write_bytes(backup)
    theirs = report_into("backup.tar.gz")
    assert (
        theirs.returncode == 1 and "--out backup.tar.gz is a file of yours, not an earlier xtts report" in theirs.stderr
    )
    assert (tmp_path / "backup.tar.gz").read_bytes() == backup and not (tmp_path / "backup.tar.gz.bak").exists()


def test_an_earlier_report_goes_to_a_bak_name_no_file_of_the_users_holds(tmp_path: Path) -> None:
    from xtts_cli.cli.report import _kept_old

    out = tmp_path / "r.tar.gz"
    assert _kept_old(out) is None
    out.write_bytes(EARLIER)
    assert _kept_old(out) == tmp_path / "r.tar.gz.bak"
    (tmp_path / "r.tar.gz.bak").write_text("the user's own", encoding="utf-8")
    assert _kept_old(out) == tmp_path / "r.tar.gz.bak.1"
    (tmp_path / "r.tar.gz.bak.1").write_bytes(EARLIER)  # an earlier report's .bak: the one to replace
    assert _kept_old(out) == tmp_path / "r.tar.gz.bak.1"


def test_a_urls_user_and_password_are_kept_out_whatever_the_options() -> None:
    # data.service_address grpc://user:pass@host had gone into six files of the archive, the password in each.
    text = "service_address: grpc://svcuser:svcFAKEpass@host.example.com:5050; host name 'svcuser:svcFAKEpass@host'"
    for redact in (True, False):
        clean = redactor(home=None, datasets=[], environ={}, redact=redact)(text)
        assert "svcFAKEpass" not in clean and "svcuser" not in clean, clean
        assert "grpc://<credentials>@host.example.com:5050" in clean and "'<credentials>@host'" in clean
    clean = redactor(home=None, datasets=[], environ={}, redact=True)
    assert clean("ana@example.com") == "ana@example.com"
    # A password holding "@" goes whole; an option's name and a bracket stay; a time, a digest, mailto: and git@ are
    # no credentials.
    assert clean("http://user:p@ss@host/x --proxy=user:pass@host:3128 (u:p@h)") == (
        "http://<credentials>@host/x --proxy=<credentials>@host:3128 (<credentials>@h)"
    )
    kept = "at 12:30@noon, python:3.11@sha256:abc, mailto:bob@example.com, ssh://git@github.com, ratio 3:2@hz"
    assert clean(kept) == kept


def test_a_run_still_training_is_said_to_be(tmp_path: Path) -> None:
    # Its record has no end yet and the report's profiles share the CPU with it: it had said nothing.
    from xtts_cli.diagnosis.report import _run_sections

    run = tmp_path / "run"
    shutil.copytree(REPO / "tests" / "data" / "run_before_run_data", run)
    with lock_held_elsewhere(run) as pid:
        (record,) = [s for s in _run_sections(run) if s.name == "run/run.json"]
    assert any(note.startswith(f"{run} is still training (process {pid} on ") for note in record.notes)
    (quiet,) = [s for s in _run_sections(run) if s.name == "run/run.json"]
    assert not any("still training" in note for note in quiet.notes)


def test_a_runs_watch_records_are_capped_and_its_metrics_read_line_by_line(tmp_path: Path) -> None:
    from xtts_cli.diagnosis.report import METRICS_KEPT, WATCH_KEPT, _run_sections

    run = tmp_path / "run"
    shutil.copytree(REPO / "tests" / "data" / "run_before_run_data", run)
    with (run / "metrics.jsonl").open("a", encoding="utf-8") as metrics:
        for step in range(WATCH_KEPT + 500):  # a week of warnings: all had gone into the archive, read whole
            metrics.write(json.dumps({"step": step, "watch": {"id": "input-bound"}}) + "\n")
    sections = {s.name: s for s in _run_sections(run)}
    watched = sections["run/watch.jsonl"]
    assert (
        len(watched.text.splitlines()) == WATCH_KEPT
        and json.loads(watched.text.splitlines()[-1])["step"] == WATCH_KEPT + 499
    )
    assert watched.notes == [f"the 500 watch records before the last {WATCH_KEPT:,} are left out"]
    assert len(sections["run/metrics-last.jsonl"].text.splitlines()) == METRICS_KEPT


def test_the_commands_a_report_runs_write_utf8_whatever_the_terminal_takes(tmp_path: Path) -> None:
    # PYTHONIOENCODING=ascii: their JSON had named the dataset in \\u escapes, which the redaction missed.
    from xtts_cli.diagnosis.report import _command

    data = tmp_path / "données élodie"
    environ = {**subprocess_env(), "PYTHONIOENCODING": "ascii"}
    section = _command("validate.json", ["validate", "--data", str(data), "--json"], environ, 120)
    assert str(data) in section.text and "\\u00e9" not in section.text, section.text[:500]


def test_a_runs_record_that_cannot_be_read_is_said_in_the_report(tmp_path: Path, capsys) -> None:
    from xtts_cli.diagnosis.report import _run_sections

    run = tmp_path / "run"
    shutil.copytree(REPO / "tests" / "data" / "run_before_run_data", run)
    (run / "run.json").write_text('{"broken": ', encoding="utf-8")  # cut short: train refuses the run
    (section,) = [s for s in _run_sections(run) if s.name == "run/run.json"]
    assert section.text == '{"broken": ' and section.notes == [
        f"{run / 'run.json'} is not the JSON record xtts writes: `xtts train` refuses to resume the run"
    ]
    # A metrics line cut by a kill is said; and both on the terminal, where they had been in README.txt only.
    with (run / "metrics.jsonl").open("a", encoding="utf-8") as metrics:
        metrics.write('{"step": 3, "loss": 1')
    sections = _run_sections(run)
    (last,) = [s for s in sections if s.name == "run/metrics-last.jsonl"]
    assert last.notes == [
        f"1 of the last {len(last.text.splitlines())} lines of {run / 'metrics.jsonl'} is not "
        "a whole JSON record (a kill mid-write)"
    ]
    from xtts_cli.cli.report import _said

    _said(sections)
    said = capsys.readouterr().out
    assert "note: " + section.notes[0] in " ".join(said.split()) and "is not a whole JSON record" in said


def test_a_damaged_run_is_reported_on_the_defaults_and_what_cannot_be_read_or_started_is_a_section(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """A run whose config no longer loads (what a bug report is for) had been refused, and its
    dataset left unredacted; a file the user may not read, or a command the machine cannot start,
    had ended the report in a traceback."""
    from xtts_cli.cli.report import _runs_config, _written_datasets
    from xtts_cli.diagnosis.report import _command

    run = tmp_path / "run"
    shutil.copytree(REPO / "tests" / "data" / "run_before_run_data", run)
    (tmp_path / "linked").symlink_to(tmp_path / "elsewhere")
    config = run / "config.yaml"
    written = config.read_text().replace("  dataset_path: null", f"  dataset_path: {tmp_path / 'linked' / 'voz'}", 1)
    config.write_text(written.replace("\ntraining:\n", "\ntraining:\n  bogus_key: 1\n", 1))
    assert _runs_config(run)[0] is None
    assert f"note: {config} does not load (training.bogus_key" in capsys.readouterr().err
    assert _written_datasets(config) == [str(tmp_path / "linked" / "voz"), str(tmp_path / "elsewhere" / "voz")]
    plain = tmp_path / "python"  # no execute permission: the interpreter cannot start again
    plain.write_text("")
    monkeypatch.setattr(sys, "executable", str(plain))
    started = _command("validate.json", ["validate", "--json"], dict(os.environ), 30)
    assert started.exit_code == 126 and started.error == f"xtts validate could not start ({plain}: Permission denied)"
    monkeypatch.undo()
    for name in ("run.json", "metrics.jsonl"):
        (run / name).chmod(0)
    code = (
        "import json, pathlib\nfrom xtts_cli.diagnosis.report import _run_sections\n"
        f"print(json.dumps({{s.name: s.notes for s in _run_sections(pathlib.Path({str(run)!r}))}}))"
    )
    # As a user: root reads past a file's mode unless setpriv drops that power.
    user = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    if user and shutil.which("setpriv") is None:
        pytest.skip("running as root without util-linux's setpriv to drop the capabilities")
    done = subprocess.run([*user, sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env())
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {
        "run/config.yaml": [],
        "run/run.json": [f"{run / 'run.json'}: cannot read it (Permission denied)"],
        "run/metrics-last.jsonl": [f"{run / 'metrics.jsonl'}: cannot read it (Permission denied)"],
    }


@pytest.mark.slow  # trains (or waits on the fixture that trains): the whole suite runs it
def test_a_run_alone_is_reported_with_its_own_config_not_the_defaults(reported: dict) -> None:
    # The shared report names the run and the dataset, no -c: its config.yaml is the run's.
    shown = yaml.safe_load(reported["files"]["config.yaml"])
    trained = yaml.safe_load((reported["run"] / "config.yaml").read_text(encoding="utf-8"))
    assert shown["data"]["batch_size"] == trained["data"]["batch_size"] == 4  # the defaults' is 16


def test_only_the_variables_that_shape_a_run_are_copied_and_tf_config_without_its_hosts() -> None:
    from xtts_cli.diagnosis.report import environment

    planted = {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "XTTS_DEBUG": "1",
        "TF_CONFIG": '{"cluster": {"worker": ["gpu-a.lab:2222", "10.0.0.7:2222"]}, "task": {"index": 1}}',
        # Under names no secret filter catches: Terraform's variables and a tool's webhook.
        "TF_VAR_db_admin": "plantedValue1",
        "TF_CLI_CONFIG_FILE": "/home/me/.terraformrc",
        "XTTS_WEBHOOK": "https://hooks.example/planted",
    }
    shown = environment(planted)["variables"]
    assert set(shown) == {"CUDA_VISIBLE_DEVICES", "TF_CPP_MIN_LOG_LEVEL", "XTTS_DEBUG", "TF_CONFIG"}
    assert shown["TF_CONFIG"] == '{"cluster": {"worker": ["<host>:2222", "<host>:2222"]}, "task": {"index": 1}}'


def test_the_log_level_xtts_sets_itself_is_not_reported_as_the_users(tmp_path: Path) -> None:
    # Its own quiet TF_CPP_MIN_LOG_LEVEL=3 had read, in a bug report, as the user hiding TensorFlow's logs.
    env = {name: value for name, value in os.environ.items() if name != "TF_CPP_MIN_LOG_LEVEL"}
    script = (
        "from xtts_cli.quiet import quiet_tensorflow_logs\n"
        "quiet_tensorflow_logs()\n"
        "import os, json\n"
        "from xtts_cli.diagnosis.report import environment\n"
        "print(json.dumps(environment(dict(os.environ))['variables']))\n"
    )
    unset = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert "TF_CPP_MIN_LOG_LEVEL" not in json.loads(unset.stdout)
    own = subprocess.run(
        [sys.executable, "-c", script], env={**env, "TF_CPP_MIN_LOG_LEVEL": "3"}, capture_output=True, text=True
    )
    assert json.loads(own.stdout)["TF_CPP_MIN_LOG_LEVEL"] == "3"  # the user's own, the same value: shown


def test_a_report_none_of_whose_commands_wrote_a_report_exits_1_naming_why() -> None:
    from xtts_cli.cli.report import _refuse_all_failed
    from xtts_cli.diagnosis.report import Section
    from xtts_cli.errors import XttsError

    failed = [
        Section("validate.json", json.dumps({"error": "data.dataset_path: 'x' is not a directory"}), 1.0, 1),
        Section("diagnose.json", json.dumps({"error": "xtts diagnose ran past 600 s"}), 600.0, None),
    ]
    with pytest.raises(XttsError, match=r"every command the report ran failed \(validate.json: data.dataset_path"):
        _refuse_all_failed(failed)
    _refuse_all_failed([*failed, Section("profile-step.json", json.dumps({"findings": []}), 1.0, 1)])


def test_ctrl_c_while_the_report_gathers_says_no_report_was_written_and_keeps_the_earlier(tmp_path: Path) -> None:
    import signal
    import time

    from training_support import start_xtts

    out = tmp_path / "report.tar.gz"
    out.write_bytes(EARLIER)
    process = start_xtts(["report", "-c", "tiny-cpu", "--quick", "-o", str(out)], tmp_path, ctrl_c=True)
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None and not children.read_text().strip():
        time.sleep(0.1)  # until its first command runs
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert f"note: no report written; {out} is the earlier report, as it was" in stderr
    assert out.read_bytes() == EARLIER and not Path(f"{out}.bak").exists()


@pytest.mark.slow  # waits for validate's process to end
def test_each_part_is_said_as_it_ends_so_a_ctrl_c_leaves_what_ended_said(tmp_path: Path) -> None:
    import signal
    import time

    from training_support import start_xtts

    # Said only once every part had ended, a report was silent for minutes, and a Ctrl-C said nothing of them.
    process = start_xtts(
        ["report", "-c", "tiny-cpu", "--quick", "-o", str(tmp_path / "r.tar.gz")], tmp_path, ctrl_c=True
    )
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")

    def running(command: str) -> bool:
        for child in children.read_text().split():
            try:
                if command in Path(f"/proc/{child}/cmdline").read_bytes().decode().split("\0"):
                    return True
            except OSError:
                pass
        return False

    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None and not running("diagnose"):
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert [line.split(":")[0] for line in stdout.splitlines()] == ["environment.json", "config.yaml", "validate.json"]
    assert "note: no report written" in stderr and not (tmp_path / "r.tar.gz").exists()
