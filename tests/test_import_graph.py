"""The import graph: no cycle between modules and no arrow back up between layers (protocol below
analysis below outputs; helpers shared by two packages below both). Imports inside functions count.
The few that remain are listed by name (KNOWN_*): a new one fails, and so does one that is gone but
still listed, so the lists only shrink."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "a2a_capture"

#: packages (a2a_capture.X) from the bottom up; a module may import its own layer and those below
LAYERS = [
    {"errors", "nesting", "resources", "address", "shortcuts", "terminal"},
    {"capture"},
    {"a2a", "redact", "sources", "flow_exchange", "convert"},
    {"analyze"},
    {"report", "replay", "batch", "show", "tidy", "scan", "view", "otel", "record"},
    {"cli", "pytest_plugin", "pytest_capture", "__main__"},
]
#: cycles between modules that remain (each as its sorted modules)
KNOWN_CYCLES: set[tuple[str, ...]] = set()
#: arrows back up that remain: (importing module, imported module)
KNOWN_BACK: set[tuple[str, str]] = set()


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):  # inside functions too
            if isinstance(node, ast.Import):
                imported |= {known(alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    imported.add(known(full) if full in modules else known(base))
        graph[name] = {other for other in imported if other and other != name and other.startswith("a2a_capture")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> set[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan's, iteratively)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), set(), [0]

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.add(tuple(sorted(component)))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) == 1:
        return None  # the package's own __init__: the public face, above nothing in particular
    for number, layer in enumerate(LAYERS):
        if parts[1] in layer:
            return number
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS")


def test_every_package_is_in_a_layer():
    for module in _graph():
        _layer(module)


def test_no_new_cycle_and_no_known_one_left_listed():
    cycles = _cycles(_graph())
    assert cycles - KNOWN_CYCLES == set(), "a new import cycle"
    assert KNOWN_CYCLES - cycles == set(), "a cycle is gone: take it off KNOWN_CYCLES"


def test_no_new_arrow_back_up_and_no_known_one_left_listed():
    back = set()
    for module, imported in _graph().items():
        for other in imported:
            mine, theirs = _layer(module), _layer(other)
            if mine is not None and theirs is not None and theirs > mine:
                back.add((module, other))
    assert back - KNOWN_BACK == set(), "a new import that runs back up the layers"
    assert KNOWN_BACK - back == set(), "an arrow back up is gone: take it off KNOWN_BACK"


def test_the_graph_sees_imports_inside_functions():
    """sources.py imports the HAR reader inside a function only: the graph has that arrow."""
    assert "a2a_capture.convert.har_stream" in _graph()["a2a_capture.sources"]


def test_every_error_a_user_can_meet_is_declared_in_errors_py():
    """The tree of errors in one module, as httpx keeps its own: a module that raises one imports it
    from there, so no two modules need each other for an error class."""
    elsewhere = []
    for name, path in _modules().items():
        if name == "a2a_capture.errors":
            continue
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.ClassDef) and any(
                    isinstance(base, ast.Name) and base.id == "A2ACaptureError" for base in node.bases):
                elsewhere.append(f"{name}.{node.name}")
    assert elsewhere == []
