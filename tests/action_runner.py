"""Run a composite GitHub Action's steps here, as the runner would, since GitHub is out of reach.

Each `run:` step runs as `shell: bash` runs it on a runner (`bash --noprofile --norc -eo pipefail
FILE`), with its `env:` evaluated, a fresh GITHUB_OUTPUT and GITHUB_STEP_SUMMARY file, and the
runner's variables (GITHUB_ACTION_PATH, GITHUB_WORKSPACE, RUNNER_TEMP); `if:` conditions are
evaluated the way the runner does (an implicit `success()`, `always()`, `&&`, `||`, `!`, `==`,
`!=`, case-insensitive string comparison). A `uses:` step cannot run here: it is kept with its
evaluated `with:` so a test can check what it would have been given. Expressions other than these
are refused (ExpressionError), so a step the runner would read differently cannot pass here.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml


class ExpressionError(ValueError):
    """An expression this runner does not read the way GitHub does."""


_TOKEN = re.compile(r"\s*(?:('(?:[^']|'')*')|(&&|\|\||==|!=|!|\(|\))|([A-Za-z_][\w.-]*)(\(\))?)")


class _Expression:
    """A small recursive-descent reader of GitHub's expression syntax, over a dict of contexts."""

    def __init__(self, text: str, contexts: dict, status: dict) -> None:
        self.tokens = []
        position = 0
        text = text.strip()
        while position < len(text):
            match = _TOKEN.match(text, position)
            if not match or match.end() == position:
                raise ExpressionError(f"cannot read {text[position:]!r} in {text!r}")
            self.tokens.append(match.groups())
            position = match.end()
        self.text, self.contexts, self.status, self.at = text, contexts, status, 0
        self.uses_status = False

    def value(self):
        result = self._or()
        if self.at != len(self.tokens):
            raise ExpressionError(f"unexpected {self.tokens[self.at]} in {self.text!r}")
        return result

    def _peek(self, operator: str) -> bool:
        return self.at < len(self.tokens) and self.tokens[self.at][1] == operator

    def _or(self):
        left = self._and()
        while self._peek("||"):
            self.at += 1
            right = self._and()
            left = left if _truthy(left) else right
        return left

    def _and(self):
        left = self._compare()
        while self._peek("&&"):
            self.at += 1
            right = self._compare()
            left = right if _truthy(left) else left
        return left

    def _compare(self):
        left = self._unary()
        if self._peek("==") or self._peek("!="):
            operator = self.tokens[self.at][1]
            self.at += 1
            right = self._unary()
            same = _comparable(left) == _comparable(right)
            return same if operator == "==" else not same
        return left

    def _unary(self):
        if self._peek("!"):
            self.at += 1
            return not _truthy(self._unary())
        return self._primary()

    def _primary(self):
        if self.at >= len(self.tokens):
            raise ExpressionError(f"{self.text!r} ends too soon")
        string, operator, name, call = self.tokens[self.at]
        self.at += 1
        if operator == "(":
            inner = self._or()
            if not self._peek(")"):
                raise ExpressionError(f"unclosed ( in {self.text!r}")
            self.at += 1
            return inner
        if string is not None:
            return string[1:-1].replace("''", "'")
        if call:
            if name not in self.status:
                raise ExpressionError(f"unknown function {name}() in {self.text!r}")
            self.uses_status = True
            return self.status[name]
        if name in ("true", "false"):
            return name == "true"
        if name is None:
            raise ExpressionError(f"unexpected {operator!r} in {self.text!r}")
        head, *rest = name.split(".")
        if head not in self.contexts:
            raise ExpressionError(f"unknown context {head!r} in {self.text!r}")
        value = self.contexts[head]
        for part in rest:
            value = value.get(part, "") if isinstance(value, dict) else ""
        return value


def _truthy(value) -> bool:
    return bool(value) and value != "0"


def _comparable(value):
    return value.lower() if isinstance(value, str) else value


def evaluate(text: str, contexts: dict, status: dict | None = None):
    return _Expression(text, contexts, status or {}).value()


def substitute(text: str, contexts: dict) -> str:
    """A value with `${{ ... }}` in it, as the runner fills it in."""
    return re.sub(r"\$\{\{(.*?)\}\}", lambda match: _text(evaluate(match.group(1), contexts)), str(text))


def _text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def condition(text: str | None, contexts: dict, failed: bool) -> bool:
    """Whether a step runs: its `if:`, with the runner's implicit success() when it names no status."""
    status = {"always": True, "success": not failed, "failure": failed, "cancelled": False}
    if text is None:
        return not failed
    text = text.strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    expression = _Expression(text, contexts, status)
    result = _truthy(expression.value())
    return result if expression.uses_status else result and not failed


def read_outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT's two forms: `name=value` lines and `name<<DELIMITER` blocks."""
    outputs, lines = {}, path.read_text().splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, index + 1)
            outputs[name] = "\n".join(lines[index + 1:end])
            index = end + 1
            continue
        if line:
            name, value = line.split("=", 1)
            outputs[name] = value
        index += 1
    return outputs


@dataclass
class StepRun:
    id: str | None
    name: str
    ran: bool
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""
    outputs: dict = field(default_factory=dict)
    uses: str | None = None
    given: dict = field(default_factory=dict)


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict
    summary: str
    failed: bool

    def step(self, id_or_name: str) -> StepRun:
        return next(s for s in self.steps if id_or_name in (s.id, s.name, s.uses))

    def used(self, action: str) -> StepRun:
        """The `uses:` step of this action (owner/name, any version)."""
        return next(s for s in self.steps if s.uses and s.uses.split("@")[0] == action)

    @property
    def log(self) -> str:
        return "\n".join(f"--- {s.name}\n{s.stdout}{s.stderr}" for s in self.steps if s.ran)


def load(action_yml: Path) -> dict:
    return yaml.safe_load(action_yml.read_text())


def run_action(action_yml: Path, inputs: dict[str, str], workspace: Path, env: dict[str, str] | None = None,
               timeout: float = 600) -> ActionRun:
    """Runs the action's steps in ``workspace`` with ``inputs`` (the defaults fill the rest)."""
    action = load(action_yml)
    unknown = set(inputs) - set(action["inputs"])
    if unknown:
        raise ExpressionError(f"the action has no inputs {sorted(unknown)}")
    given = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    given.update({name: _text(value) for name, value in inputs.items()})
    scratch = Path(tempfile.mkdtemp(prefix="action-run-"))
    runner = {"temp": str(scratch / "temp"), "os": "Linux"}
    Path(runner["temp"]).mkdir()
    github = {"action_path": str(action_yml.parent), "workspace": str(workspace)}
    contexts = {"inputs": given, "steps": {}, "runner": runner, "github": github, "env": {}}
    base_env = {**os.environ, **(env or {}), "GITHUB_ACTION_PATH": github["action_path"], "GITHUB_ACTIONS": "true",
                "GITHUB_WORKSPACE": str(workspace), "RUNNER_TEMP": runner["temp"], "CI": "true"}
    runs, summaries, failed = [], [], False
    for index, step in enumerate(action["runs"]["steps"]):
        name = step.get("name") or step.get("uses") or f"step {index + 1}"
        record = StepRun(id=step.get("id"), name=name, ran=condition(step.get("if"), contexts, failed),
                         uses=step.get("uses"))
        runs.append(record)
        if record.uses:
            record.given = {key: substitute(value, contexts) for key, value in (step.get("with") or {}).items()}
            continue  # cannot run here: the test reads record.given
        if not record.ran:
            continue
        if step.get("shell") != "bash":
            raise ExpressionError(f"{name}: only `shell: bash` steps run here, not {step.get('shell')!r}")
        if "${{" in step["run"]:
            raise ExpressionError(f"{name}: an expression inside run: (pass it through env: instead)")
        script = scratch / f"step-{index + 1}.sh"
        script.write_text(step["run"])
        output, summary = scratch / f"output-{index + 1}", scratch / f"summary-{index + 1}"
        output.touch()
        summary.touch()
        step_env = {key: substitute(value, contexts) for key, value in (step.get("env") or {}).items()}
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=workspace,
                              env={**base_env, **step_env, "GITHUB_OUTPUT": str(output),
                                   "GITHUB_STEP_SUMMARY": str(summary)},
                              capture_output=True, text=True, timeout=timeout)
        record.returncode, record.stdout, record.stderr = done.returncode, done.stdout, done.stderr
        record.outputs = read_outputs(output)
        summaries.append(summary.read_text())
        if record.id:
            contexts["steps"][record.id] = {"outputs": record.outputs,
                                            "outcome": "success" if done.returncode == 0 else "failure"}
        if done.returncode != 0 and not step.get("continue-on-error"):
            failed = True
    outputs = {name: substitute(spec["value"], contexts) for name, spec in (action.get("outputs") or {}).items()}
    return ActionRun(steps=runs, outputs=outputs, summary="".join(summaries), failed=failed)
