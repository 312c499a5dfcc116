"""Which rules run, and which findings are silenced: from the command line, pyproject.toml
(`[tool.a2a-capture]`) and `# a2a-capture: ignore[rule]` notes inside a capture."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from a2a_capture.analyze.findings import RULES
from a2a_capture.errors import ConfigError

_IGNORE_NOTE = re.compile(r"a2a-capture:\s*ignore(?:\[([^\]]*)\])?")


@dataclass
class Config:
    select: set[str] = field(default_factory=set)  # empty: every rule
    ignore: set[str] = field(default_factory=set)
    #: file name pattern -> rules silenced in files that match it
    per_file_ignores: dict[str, set[str]] = field(default_factory=dict)
    source: str | None = None

    def active(self, file: str) -> list:
        silenced = set(self.ignore)
        for pattern, rules in self.per_file_ignores.items():
            if Path(file).match(pattern):
                silenced |= rules
        return [r for rid, r in RULES.items() if (not self.select or rid in self.select) and rid not in silenced]

    def merged(self, select: tuple[str, ...], ignore: tuple[str, ...]) -> Config:
        check_rules([*select, *ignore], "the command line")
        return Config(select=set(select) or self.select, ignore=self.ignore | set(ignore),
                      per_file_ignores=self.per_file_ignores, source=self.source)


def check_rules(ids, where: str) -> None:
    unknown = [rid for rid in ids if rid not in RULES]
    if unknown:
        raise ConfigError(f"{where} names unknown rule(s) {', '.join(sorted(unknown))}; "
                          f"known: {', '.join(sorted(RULES))}")


def load(start: Path | None = None) -> Config:
    """`[tool.a2a-capture]` from the nearest pyproject.toml above ``start`` (default: here)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text())
            except (OSError, tomllib.TOMLDecodeError) as error:
                raise ConfigError(f"{candidate}: cannot read it ({error})") from None
            section = data.get("tool", {}).get("a2a-capture")
            if section is None:
                return Config()
            return _from_section(section, str(candidate))
    return Config()


def _from_section(section: dict, source: str) -> Config:
    where = f"{source} [tool.a2a-capture]"
    select, ignore = section.get("select", []), section.get("ignore", [])
    per_file = section.get("per-file-ignores", {})
    if not isinstance(select, list) or not isinstance(ignore, list) or not isinstance(per_file, dict):
        raise ConfigError(f"{where}: select and ignore are lists of rule ids, per-file-ignores a table")
    check_rules([*select, *ignore, *(r for rules in per_file.values() for r in rules)], where)
    return Config(select=set(select), ignore=set(ignore),
                  per_file_ignores={pattern: set(rules) for pattern, rules in per_file.items()}, source=source)


def ignored_in_notes(notes: list[str]) -> set[str] | None:
    """Rules a capture silences for one exchange: a set, or None for 'every rule'."""
    silenced: set[str] = set()
    for note in notes:
        for match in _IGNORE_NOTE.finditer(note):
            if match.group(1) is None:
                return None
            silenced |= {part.strip() for part in match.group(1).split(",") if part.strip()}
    return silenced
