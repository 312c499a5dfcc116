"""Independent sessions on every core: --each-file, --each-folder and --jobs print what a serial run prints."""

from __future__ import annotations

import json
import os
import shutil

from a2a_capture.analyze.config import Config
from a2a_capture.analyze.engine import analyze
from a2a_capture.batch import engines
from a2a_capture.batch.analysis import analyze_many, join
from a2a_capture.report import machine
from tests.fleet import write_fleet
from tests.test_cli_show import run


def test_each_file_is_its_own_session_in_the_order_given(kit):
    files = sorted(str(path) for path in kit.glob("*.http"))
    parallel = analyze_many([str(kit)], grouping="file", jobs=2)
    alone = [analyze([file]) for file in files]
    assert parallel.findings == [finding for analysis in alone for finding in analysis.findings]
    assert parallel.calls == [call for analysis in alone for call in analysis.calls]
    assert parallel.summary.files == files
    assert parallel.summary.exchanges == sum(a.summary.exchanges for a in alone)
    assert parallel.summary.wasted_round_trips == sum(a.summary.wasted_round_trips for a in alone)
    assert parallel.summary.findings_by_rule["cancel-terminal"] == sum(
        a.summary.findings_by_rule.get("cancel-terminal", 0) for a in alone)
    # one session alone is the analysis itself
    assert join([alone[0]]) is alone[0]


def test_jobs_print_what_a_serial_run_prints(kit):
    for output_format in ("text", "json", "sarif", "junit"):
        outputs = [run("analyze", "--each-file", "--jobs", jobs, "--format", output_format, str(kit))
                   for jobs in ("1", "2")]
        assert outputs[0].returncode == outputs[1].returncode == 1
        assert outputs[0].stdout == outputs[1].stdout, output_format
        assert outputs[0].stdout  # not two empty outputs
        if output_format == "json":
            assert len(json.loads(outputs[0].stdout)["summary"]["files"]) == len(list(kit.glob("*.http")))


def test_each_folder_is_a_session(kit, tmp_path):
    runs = {"run-1": ["01-agent-cards.http", "11-errors.http"], "run-2": ["01-agent-cards.http", "04-polling.http"]}
    for name, files in runs.items():
        (tmp_path / "day" / name).mkdir(parents=True)
        for file in files:
            shutil.copy(kit / file, tmp_path / "day" / name / file)
    parallel = analyze_many([str(tmp_path / "day")], grouping="folder", jobs=2)
    serial = [analyze([str(tmp_path / "day" / name / file) for file in files]) for name, files in runs.items()]
    assert machine.to_json(parallel) == machine.to_json(join(serial))
    # the first folder's cards inform its own calls, and not the second folder's
    assert parallel.findings == serial[0].findings + serial[1].findings
    assert len(parallel.summary.files) == 4


def test_check_and_report_with_jobs(kit, tmp_path):
    baseline = tmp_path / "baseline.json"
    accepted = run("check", "--each-file", "-j", "2", str(kit), "--baseline", str(baseline), "--update-baseline")
    assert accepted.returncode == 0, accepted.stderr
    serial = run("check", "--each-file", "-j", "1", str(kit), "--baseline", str(baseline))
    parallel = run("check", "--each-file", "-j", "2", str(kit), "--baseline", str(baseline))
    assert serial.returncode == parallel.returncode == 0, parallel.stdout
    assert serial.stdout == parallel.stdout
    # as one session the kit finds more (cards fetched in one file inform the next): not accepted
    assert run("check", str(kit), "--baseline", str(baseline)).returncode == 1
    reports = []
    for jobs in ("1", "2"):
        out = tmp_path / f"report-{jobs}.md"
        result = run("report", "--each-file", "--jobs", jobs, str(kit), "-o", str(out))
        assert result.returncode == 0, result.stderr
        reports.append(out.read_text())
    assert reports[0] == reports[1]
    assert "cancel-terminal" in reports[0]


def test_a_broken_capture_fails_the_same_way_in_parallel(kit, tmp_path):
    for name in ("a.http", "c.http"):
        shutil.copy(kit / "02-message-reply.http", tmp_path / name)
    (tmp_path / "b.http").write_text("### 1 · broken\nGET\n")
    results = [run("analyze", "--each-file", "--jobs", jobs, str(tmp_path)) for jobs in ("1", "2")]
    assert results[0].returncode == results[1].returncode == 2
    assert results[0].stderr == results[1].stderr
    line = results[1].stderr.decode()
    assert line.startswith(f"a2a-capture: error: {tmp_path / 'b.http'}:2:") and line.count("\n") == 1
    assert b"Traceback" not in results[1].stderr


def test_urls_read_as_the_files_they_name(kit, tmp_path):
    """A URL's capture is copied to read it; results, messages and settings see the URL's path."""
    folder = tmp_path / "captures"
    folder.mkdir()
    for name in ("01-agent-cards.http", "11-errors.http"):
        shutil.copy(kit / name, folder / name)
    config = Config(per_file_ignores={"captures/11-*.http": {"task-unknown"}})
    local = analyze_many([str(folder)], config)
    remote = analyze_many([folder.as_uri()], config, jobs=1)
    assert {f.rule for f in remote.findings} == {f.rule for f in local.findings}
    assert "task-unknown" not in {f.rule for f in remote.findings}
    assert [f.file for f in remote.findings] == [f.file.replace(str(tmp_path), tmp_path.as_uri())
                                                 for f in local.findings]
    assert [f.message for f in remote.findings] == [f.message for f in local.findings]


def test_scheduler_needs_the_dask_engine(kit):
    result = run("analyze", "--scheduler", "tcp://127.0.0.1:1", str(kit))
    assert result.returncode == 2 and b"--scheduler goes with --engine dask" in result.stderr


def handed_over_in_turn(paths: list[str], watch=lambda: None, **engine) -> list:
    """Analyze each path alone, with the last capture written only when the first finding is handed
    over (a run that read every session before handing any over fails on it: no such file); the
    findings and summary are the serial run's. What ``watch()`` said at each finding."""
    with open(paths[-1], "rb") as file:
        last = file.read()
    os.remove(paths[-1])
    handed, watched = [], []

    def found(finding) -> None:
        if not handed:
            with open(paths[-1], "wb") as file:
                file.write(last)
        handed.append(finding)
        watched.append(watch())

    streamed = analyze_many(paths, grouping="file", on_finding=found, **engine)
    serial = analyze_many(paths, grouping="file", jobs=1)
    assert handed == serial.findings and handed[0].file != paths[-1]
    assert streamed.summary == serial.summary and streamed.summary.files[-1] == paths[-1]
    return watched


def test_jobs_hand_findings_over_as_sessions_come_back(tmp_path, monkeypatch):
    from concurrent.futures import ProcessPoolExecutor

    sent = []  # the sessions given to the pool so far, counted on their way to the real pool
    submit = ProcessPoolExecutor.submit
    monkeypatch.setattr(ProcessPoolExecutor, "submit",
                        lambda pool, function, *args: sent.extend(args[1]) or submit(pool, function, *args))
    window = engines.AHEAD_PER_THREAD * 2 * engines.CHUNK  # sessions the processes are sent ahead, at most
    paths = [str(path) for path in write_fleet(tmp_path, sessions=window + 40)]
    at_first_finding = handed_over_in_turn(paths, lambda: len(sent), jobs=2)[0]
    assert at_first_finding <= window < len(paths)
