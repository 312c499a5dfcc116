"""A session's files on this machine: local paths as they are, URLs copied to a temporary folder.

The analyzer reads local files; a worker on a cluster reads captures from object storage by
copying them first (under their own paths, so messages and settings that name a file still read
right) and then puts the URLs back wherever the results name a copy.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from a2a_capture.batch.sessions import filesystem, is_url


@contextmanager
def local_copies(files: list[str]) -> Iterator[tuple[list[str], dict[str, str]]]:
    """The files to read, and what each copy's path stands for (empty when none are URLs)."""
    if not any(is_url(file) for file in files):
        yield files, {}
        return
    with tempfile.TemporaryDirectory(prefix="a2a-capture-") as folder:
        local, originals = [], {}
        for index, file in enumerate(files):
            if not is_url(file):
                local.append(file)
                continue
            fs, path = filesystem(file)
            # the URL's path kept under the copy, so per-file-ignores patterns match it as they would the URL
            copy = os.path.join(folder, str(index), path.lstrip("/"))
            os.makedirs(os.path.dirname(copy), exist_ok=True)
            fs.get_file(path, copy)
            local.append(copy)
            originals[copy] = file
        yield local, originals


def renamed(data: Any, names: dict[str, str]) -> Any:
    """Plain data with every string that is a copy's path replaced by the URL it stands for."""
    if not names:
        return data
    if isinstance(data, str):
        return names.get(data, data)
    if isinstance(data, dict):
        return {key: renamed(value, names) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return type(data)(renamed(item, names) for item in data)
    return data
