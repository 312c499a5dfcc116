"""Which capture files form a session: all given together, each file alone, or each folder.

Paths are local files and folders, or URLs an fsspec filesystem reads (``s3://bucket/day/``,
``gs://…``, ``file:///…``). A folder stands for the capture files under it, sorted.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal

from a2a_capture.errors import A2ACaptureError
from a2a_capture.sources import CONVERTED, capture_files

#: how files group into sessions: "all" (one session, in the order given), "file", "folder"
Grouping = Literal["all", "file", "folder"]

#: suffixes a folder is searched for
CAPTURE_SUFFIXES = (".http", *CONVERTED)


def is_url(path: str) -> bool:
    return "://" in path


def group(paths: Sequence[str], grouping: Grouping = "all") -> list[list[str]]:
    """Sessions as lists of files, in the order the paths give them.

    Alone a folder means its own .http files (as `analyze` always read it); for one session
    per file or per folder, folders are searched to any depth, so a tree of runs can be given
    as its root."""
    files: list[str] = []
    for path in paths:
        files += _expand(os.fspath(path), deep=grouping != "all")
    if not files:
        raise A2ACaptureError("no .http capture files in " + ", ".join(map(str, paths)))
    if grouping == "all":
        return [files]
    if grouping == "file":
        return [[file] for file in files]
    folders: dict[str, list[str]] = {}
    for file in files:
        folders.setdefault(_parent(file), []).append(file)
    return list(folders.values())


def _expand(path: str, deep: bool) -> list[str]:
    if is_url(path):
        return _expand_url(path, deep)
    if not os.path.isdir(path):
        return [path]
    if not deep:
        return capture_files([path])
    found = []
    for folder, _, names in os.walk(path):
        found += [os.path.join(folder, name) for name in names if name.lower().endswith(CAPTURE_SUFFIXES)]
    return sorted(found)


def _expand_url(url: str, deep: bool) -> list[str]:
    fs, root = filesystem(url)
    if not fs.isdir(root):
        return [url]
    listed = fs.find(root) if deep else fs.ls(root, detail=False)
    suffixes = CAPTURE_SUFFIXES if deep else (".http",)
    return sorted(fs.unstrip_protocol(name) for name in listed if name.lower().endswith(suffixes))


def _parent(file: str) -> str:
    return file.rsplit("/", 1)[0] if is_url(file) else os.path.dirname(file)


def filesystem(url: str):
    """The fsspec filesystem for a URL, and the path within it."""
    try:
        import fsspec
    except ImportError:
        raise A2ACaptureError(f"{url}: reading URLs needs fsspec: pip install 'a2a-capture[dask]'") from None
    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as error:
        raise A2ACaptureError(f"{url}: cannot open this URL ({error})") from None
