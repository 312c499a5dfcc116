"""The `# ` notes a person writes among a stream's frames, taken out of its bytes.

A documentation capture explains a stream as it goes: a note before a frame is about that frame. The
body keeps the frames alone (what went over the wire); the notes are kept by the frame they precede,
so the writer puts each back where it stood.
"""

from __future__ import annotations

import io
import re

from a2a_capture.capture import syntax
from a2a_capture.capture.body import FileBody, contains, starts_with, whole
from a2a_capture.capture.source import Error

#: a line an SSE frame may hold
FRAME_LINE = re.compile(syntax._FRAME_START)


def split_notes(region: bytes | FileBody) -> tuple[bytes | FileBody, dict[int, list[str]], list[str]]:
    """Take `# ` paragraphs out of a run of SSE frames.

    Returns the frames' bytes, the notes by the index of the frame they precede, and the
    notes after the last frame. A run with no line that starts with `#` is its frames as they are
    (one left in the file stays there).
    """
    if not (contains(region, b"\n#") or starts_with(region, b"#")):
        return region, {}, []
    region = whole(region)
    kept: list[bytes] = []
    notes: dict[int, list[str]] = {}
    pending: list[str] = []
    frames = 0
    in_frame = False
    skipping_blank = False
    for line in io.BytesIO(region):
        if syntax.is_blank(line):
            if in_frame:
                frames += 1
                in_frame = False
                kept.append(line)
            elif not skipping_blank:
                kept.append(line)
            skipping_blank = False
            continue
        if not in_frame and syntax.is_note(line):
            pending.append(syntax.note_text(line))
            skipping_blank = True
            continue
        if pending:
            notes.setdefault(frames, []).extend(pending)
            pending = []
        in_frame = True
        skipping_blank = False
        kept.append(line)
    body = b"".join(kept)
    if pending:
        body = syntax.without_trailing_line_ends(body)
    return body, notes, pending


def check_frames(region: bytes, first_line: int, error: Error) -> None:
    """Every line of ``region`` (from line ``first_line``) a frame's, a note's or blank."""
    for offset, line in enumerate(region.split(b"\n")):
        line = line.rstrip(b"\r")
        if line and not (syntax.is_note(line) or FRAME_LINE.match(line)):
            raise error("SSE frames (data: …), # notes or the next block",
                              line=first_line + offset, found=line)
