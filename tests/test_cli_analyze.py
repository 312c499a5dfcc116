"""`a2a-capture analyze` and `rules` as a user runs them: formats, exit status, settings."""

from __future__ import annotations

import json
import subprocess
from xml.etree import ElementTree

import jsonschema

from a2a_capture.analyze.docs import rules_markdown
from a2a_capture.analyze.findings import RULES
from tests.cli import COMMAND, process_env, run
from tests.conftest import ROOT


def kit_args(kit, scenario):
    return [str(kit / "01-agent-cards.http"), str(kit / f"{scenario}.http")]


def test_text_output_and_exit_status(kit):
    result = run("analyze", *kit_args(kit, "11-errors"))
    assert result.returncode == 1
    lines = result.stdout.decode().splitlines()
    block = next(number for number, text in enumerate((kit / "11-errors.http").read_text().splitlines(), 1)
                 if text.startswith("### 1 "))
    assert lines[0] == (f"{kit / '11-errors.http'}:{block}: warning task-unknown [wasted] GetTask on task "
                        "00000000-0000-4000-8000-000000000000, which the agent did not know (exchange 1)")
    assert any(line.startswith("findings: 7 (6 error, 1 warning)") for line in lines)
    assert lines[-1] == "wasted round trips: 7"


def test_clean_session_exits_0(kit):
    result = run("analyze", *kit_args(kit, "05-streaming"))
    assert result.returncode == 0, result.stdout
    assert b"findings: none" in result.stdout


def test_fail_on_thresholds(kit):
    args = kit_args(kit, "16-rest-binding")  # warnings only
    assert run("analyze", *args).returncode == 1
    assert run("analyze", "--fail-on", "error", *args).returncode == 0
    assert run("analyze", "--fail-on", "never", *kit_args(kit, "11-errors")).returncode == 0
    info_only = kit_args(kit, "04-polling")
    assert run("analyze", *info_only).returncode == 0
    assert run("analyze", "--fail-on", "info", *info_only).returncode == 1


def test_select_and_ignore(kit):
    args = kit_args(kit, "11-errors")
    only = json.loads(run("analyze", "--format", "json", "--select", "input-mode", *args).stdout)
    assert [f["rule"] for f in only["findings"]] == ["input-mode"]
    without = json.loads(run("analyze", "--format", "json", "--ignore", "malformed-request", *args).stdout)
    assert "malformed-request" not in {f["rule"] for f in without["findings"]}
    unknown = run("analyze", "--select", "no-such-rule", *args)
    assert unknown.returncode == 2 and b"unknown rule" in unknown.stderr


def test_json_output(kit):
    data = json.loads(run("analyze", "--format", "json", *kit_args(kit, "11-errors")).stdout)
    finding = next(f for f in data["findings"] if f["rule"] == "capability-push")
    assert {"rule", "severity", "file", "exchange", "message", "related", "spec"} <= finding.keys()
    assert finding["exchange"] == "6" and finding["related"] == ["2"] and finding["severity"] == "error"
    assert data["summary"]["exchanges"] == 10
    call = next(c for c in data["calls"] if c["operation"] == "CreateTaskPushNotificationConfig")
    assert call["card"]["exchange"] == "2"


def test_sarif_validates_against_the_official_schema(kit, sarif_schema, tmp_path):
    out = tmp_path / "findings.sarif"
    result = run("analyze", "--format", "sarif", "-o", str(out), *kit_args(kit, "11-errors"))
    assert result.returncode == 1
    log = json.loads(out.read_text())
    jsonschema.validate(log, sarif_schema)
    results = log["runs"][0]["results"]
    assert len(results) == 7
    location = results[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("11-errors.http")
    assert location["region"]["startLine"] == 1
    push = next(r for r in results if r["ruleId"] == "capability-push")
    assert push["locations"][0]["physicalLocation"]["region"]["startLine"] == 209  # `### 6 ·` in 11-errors
    assert push["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 57
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert results[0]["ruleId"] == rules[results[0]["ruleIndex"]]["id"]


def test_junit_has_one_case_per_rule(kit):
    xml = run("analyze", "--format", "junit", *kit_args(kit, "10-cancel")).stdout
    root = ElementTree.fromstring(xml)
    cases = root.findall("./testsuite/testcase")
    assert sorted(case.get("name") for case in cases) == sorted(RULES)
    failed = sorted(case.get("name") for case in cases if case.find("failure") is not None)
    assert failed == ["cancel-terminal", "message-terminal"]
    assert root.get("failures") == "2"


def test_pyproject_settings_and_their_errors(kit, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.a2a-capture]\nignore = ["malformed-request"]\n'
                                             'per-file-ignores = { "11-*.http" = ["input-mode"] }\n')
    exe = COMMAND
    env = process_env()
    result = subprocess.run([*exe, "analyze", "--format", "json", *kit_args(kit, "11-errors")], cwd=tmp_path,
                            capture_output=True, env=env)
    rules = {f["rule"] for f in json.loads(result.stdout)["findings"]}
    assert "malformed-request" not in rules and "input-mode" not in rules and "capability-push" in rules
    (tmp_path / "pyproject.toml").write_text('[tool.a2a-capture]\nignore = ["capabilty-push"]\n')
    broken = subprocess.run([*exe, "analyze", *kit_args(kit, "11-errors")], cwd=tmp_path, capture_output=True,
                            env=env)
    assert broken.returncode == 2
    assert b"pyproject.toml [tool.a2a-capture] names unknown rule(s) capabilty-push" in broken.stderr


def test_a_broken_capture_exits_2(tmp_path):
    path = tmp_path / "broken.http"
    path.write_bytes(b"### 1\nHTTP/1.1 200 OK\n\n")
    result = run("analyze", str(path))
    assert result.returncode == 2 and b"broken.http:2:1" in result.stderr and b"Traceback" not in result.stderr


def test_docs_rules_md_is_current():
    """docs/rules.md is generated from the rules; regenerate with `a2a-capture rules --format markdown`."""
    assert (ROOT / "docs" / "rules.md").read_text() == rules_markdown()
    assert run("rules", "--format", "markdown").stdout.decode() == rules_markdown()
