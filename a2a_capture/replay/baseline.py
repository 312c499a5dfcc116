"""The CI gate's memory: which findings a project has accepted.

A baseline keys findings by what survives re-recording (rule, operation, the agent's card
name, the capture's file name) and counts them; ids, ports and line numbers do not enter it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass

from a2a_capture.analyze.findings import Finding
from a2a_capture.errors import BaselineError, write_text

VERSION = 1
#: the file name `check --nearest-baseline` looks for
NAME = "a2a-baseline.json"


def key(finding: Finding, with_file: bool = True) -> tuple[str, str, str, str]:
    return (finding.rule, finding.operation or "-", finding.agent_name or finding.agent or "-",
            os.path.basename(finding.file) if with_file else "-")


def nearest(capture: str, name: str = NAME) -> str:
    """The baseline called ``name`` in the capture's folder or the closest folder above it, up to
    the repository's top (the folder holding .git); none there: ``name`` in the current folder.

    A pre-commit hook is given changed files from anywhere in a repository; each is judged
    by the baseline kept beside the captures it belongs to (captures/a2a-baseline.json)."""
    folder = os.path.dirname(os.path.abspath(capture))
    while True:
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate):
            return os.path.relpath(candidate) if not os.path.isabs(capture) else candidate
        parent = os.path.dirname(folder)
        if parent == folder or os.path.exists(os.path.join(folder, ".git")):
            return name
        folder = parent


def load(path: str) -> Counter:
    try:
        with open(path, encoding="utf-8") as stream:
            data = json.load(stream)
        return Counter({(item["rule"], item["operation"], item["agent"], item["file"]): int(item["count"])
                        for item in data["findings"]})
    except FileNotFoundError:
        return Counter()
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise BaselineError(f"{path}: not an a2a-capture baseline ({error}); "
                            "write one with --update-baseline") from None


def dump(findings: list[Finding], path: str, keep: Counter | None = None) -> None:
    """Write the findings as accepted, with the entries ``keep`` holds (other captures' ones)."""
    counts = Counter(key(f) for f in findings) + (keep or Counter())
    items = [{"rule": rule, "operation": operation, "agent": agent, "file": file, "count": count}
             for (rule, operation, agent, file), count in sorted(counts.items())]
    write_text(path, json.dumps({"version": VERSION, "tool": "a2a-capture", "findings": items}, indent=2) + "\n")


@dataclass
class Verdict:
    new: list[Finding]
    gone: list[tuple[str, str, str, str]]

    @property
    def ok(self) -> bool:
        return not self.new


def judge(findings: list[Finding], accepted: Counter, with_file: bool = True) -> Verdict:
    """Findings beyond what the baseline accepts (per key, by count), and accepted ones now gone."""
    remaining = Counter(accepted)
    new = []
    for finding in findings:
        k = key(finding, with_file)
        if remaining[k] > 0:
            remaining[k] -= 1
        else:
            new.append(finding)
    gone = sorted(k for k, count in remaining.items() if count > 0)
    return Verdict(new=new, gone=gone)
