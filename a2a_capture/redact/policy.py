"""What is secret: the built-in vocabulary and shapes, and what a user adds or keeps.

Users extend the policy in `pyproject.toml` and on the command line; the defaults always stay
on:

    [tool.a2a-capture.redact]
    names = ["x-tenant-pin", "ssn"]               # more secret names (matched by their last words)
    patterns = ["acme_[A-Za-z0-9]{32}"]           # more value shapes (or a table: kind = "regex")
    keep = ["x-request-signature"]                # names that are not secret here

One policy is in force for a command (`active`, set once by the command line with `use`); the
recorder builds its own from the addon's options.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from a2a_capture.errors import PolicyError
from a2a_capture.redact import names, shapes


@dataclass(frozen=True)
class Policy:
    #: more secret names, in normal form (words joined by `-`)
    names: tuple[str, ...] = ()
    #: more value shapes: (kind, regex)
    patterns: tuple[tuple[str, str], ...] = ()
    #: names that are not secret, in normal form
    keep: tuple[str, ...] = ()
    source: str | None = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False, hash=False)

    def __post_init__(self) -> None:
        for kind, pattern in self.patterns:
            try:
                re.compile(pattern)
            except re.error as error:
                raise PolicyError(f"{self.source or 'redact settings'}: pattern {kind} ({pattern!r}) "
                                  f"is no regular expression: {error}") from None
        object.__setattr__(self, "names", tuple(names.normal(n) for n in self.names if names.normal(n)))
        object.__setattr__(self, "keep", tuple(names.normal(n) for n in self.keep if names.normal(n)))

    def secret_name(self, name: str, place: str = "json") -> bool:
        """Whether a header, parameter or member called ``name`` holds a secret in ``place``
        (header, query, form, json; oauth: a JSON object with OAuth's members)."""
        key = (name, place)
        known = self._cache.get(key)
        if known is None:
            known = self._judge(name, place)
            if len(self._cache) > 4096:  # names repeat; a hostile capture's endless new ones cannot grow it
                self._cache.clear()
            self._cache[key] = known
        return known

    def _judge(self, name: str, place: str) -> bool:
        normal = names.normal(name)
        if not normal or normal in self.keep:
            return False
        if any(normal == extra or normal.endswith("-" + extra) or normal.replace("-", "") == extra.replace("-", "")
               for extra in self.names):
            return True
        return names.default_kind(name, place)

    @property
    def shapes(self) -> list[tuple[str, re.Pattern]]:
        found = self._cache.get("shapes")
        if found is None:
            found = self._cache["shapes"] = shapes.compiled(self.patterns)
        return found

    def extended(self, names_: tuple[str, ...] = (), patterns: tuple[str, ...] = (),
                 keep: tuple[str, ...] = ()) -> Policy:
        """This policy with more names, patterns (regexes, kind `pattern`) and names to keep."""
        if not (names_ or patterns or keep):
            return self
        return Policy(self.names + tuple(names_), self.patterns + tuple(("pattern", p) for p in patterns),
                      self.keep + tuple(keep), self.source)


    def to_json(self) -> str:
        """What this policy adds to the defaults, for another process (the recorder's mitmdump)."""
        import json

        return json.dumps({"names": list(self.names), "patterns": [list(p) for p in self.patterns],
                           "keep": list(self.keep)})

    @classmethod
    def from_json(cls, text: str, source: str = "a2a_redact_policy") -> Policy:
        import json

        try:
            data = json.loads(text)
            return cls(tuple(data["names"]), tuple((kind, regex) for kind, regex in data["patterns"]),
                       tuple(data["keep"]), source)
        except (ValueError, KeyError, TypeError) as error:
            raise PolicyError(f"{source}: not a redaction policy ({error})") from None


DEFAULT = Policy()


def from_settings(section: dict, source: str) -> Policy:
    """A policy from `[tool.a2a-capture.redact]`, checked member by member."""
    unknown = set(section) - {"names", "patterns", "keep"}
    if unknown:
        raise PolicyError(f"{source}: [tool.a2a-capture.redact] has unknown setting(s) {', '.join(sorted(unknown))}; "
                          "known: names, patterns, keep")
    listed = {}
    for key in ("names", "keep"):
        value = section.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise PolicyError(f"{source}: [tool.a2a-capture.redact] {key} should be a list of strings")
        listed[key] = tuple(value)
    patterns = section.get("patterns", [])
    if isinstance(patterns, dict):
        pairs = tuple(patterns.items())
    elif isinstance(patterns, list):
        pairs = tuple(("pattern", item) for item in patterns)
    else:
        pairs = None
    if pairs is None or not all(isinstance(k, str) and isinstance(v, str) for k, v in pairs):
        raise PolicyError(f"{source}: [tool.a2a-capture.redact] patterns should be a list of regular expressions "
                          "or a table of kind = regular expression")
    return Policy(listed["names"], pairs, listed["keep"], source)


def load(start: Path | None = None) -> Policy:
    """The defaults with `[tool.a2a-capture.redact]` of the nearest pyproject.toml above ``start``."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text())
            except (OSError, tomllib.TOMLDecodeError):
                return DEFAULT  # analyze's own settings say what is wrong with the file
            section = data.get("tool", {}).get("a2a-capture", {}).get("redact")
            if section is None:
                return DEFAULT
            if not isinstance(section, dict):
                raise PolicyError(f"{candidate}: [tool.a2a-capture.redact] should be a table")
            return from_settings(section, str(candidate))
    return DEFAULT


_active: list[Policy] = []


@lru_cache(maxsize=1)
def _loaded() -> Policy:
    return load()


def active() -> Policy:
    """The policy in force: what the command line set with `use`, else the defaults with pyproject.toml's."""
    return _active[-1] if _active else _loaded()


def use(policy: Policy) -> None:
    """Make ``policy`` the one in force for the rest of this process (the command line, once)."""
    _active[:] = [policy]
