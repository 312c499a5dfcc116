"""Cuts shorter than the whole: arrays of alike items counted, a task's history and state
transitions left out unless a finding names them, no `…` standing for a brace, SSE frames laid
out like bodies with their arrival times; and no exchange's cut longer than its whole laid out."""

from __future__ import annotations

import json
import re

from a2a_capture.capture import read_capture
from a2a_capture.report import walkthrough
from a2a_capture.report.excerpt import CUT, listing
from tests.conftest import ROOT

CAPTURES = ROOT / "captures"


def _exchange(name: str, label: str):
    return next(e for e in read_capture(CAPTURES / name).exchanges if e.label == label)


def _laid_out_length(text: str) -> int:
    """The lines of a whole listing with each one-line JSON body (or SSE frame) laid out
    with json.dumps(indent=2), the reference a cut is measured against."""
    count = 0
    for line in text.splitlines():
        body = line.removeprefix("data:").strip()
        try:
            value = json.loads(body) if body[:1] in "{[" else None
        except ValueError:
            value = None
        count += len(json.dumps(value, indent=2).splitlines()) if isinstance(value, dict | list) else 1
    return count


def _balanced(lines: list[str]) -> bool:
    """Every bracket a laid-out body opens is closed, once its strings are taken out."""
    depth = 0
    for line in lines:
        if line.startswith(("HTTP/", "#")) or ALIKE.match(line) or line.strip() == CUT:
            continue
        bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line.removeprefix("data: "))
        depth += bare.count("{") + bare.count("[") - bare.count("}") - bare.count("]")
        if depth < 0:
            return False
    return depth == 0


ALIKE = re.compile(rf"^\s*{CUT} \d+ more \w+ like these$")


def test_forty_artifact_parts_are_two_and_a_count():
    text, _ = listing(_exchange("04-polling.http", "12"), layout=True)
    assert "          … 38 more parts like these" in text.lines
    assert sum('"text": "line' in line for line in text.lines) == 2
    assert len(text.lines) <= 50  # 168 before: four lines and a `…` per part
    response = text.lines[text.lines.index("HTTP/1.1 200 OK") + 3:]
    assert _balanced(response) and not any(line.strip() == CUT and i + 1 < len(response)
                                           and response[i + 1].strip() in ("}", "]") for i, line in
                                           enumerate(response))


def test_history_is_left_out_unless_a_finding_names_it():
    exchange = _exchange("02-blocking-send.http", "2")
    assert '"history"' in exchange.response.content.decode()
    text, _ = listing(exchange, layout=True)
    assert '"history"' not in text.text
    named, _ = listing(exchange, layout=True, extra_keys={"history"})
    assert '"history"' in named.text


def test_stream_frames_are_laid_out_with_their_arrival_times():
    text, _ = listing(_exchange("03-streaming.http", "2"), layout=True)
    arrivals = [line for line in text.lines if line.endswith(" after the request")]
    assert arrivals == ["# 7.1 ms after the request", "# 7.2 ms after the request", "# 56 ms after the request",
                        "# 107 ms after the request", "# 159 ms after the request", "# 210 ms after the request"]
    frames = [line for line in text.lines if line.startswith("data:")]
    assert frames == ["data: {"] * 6
    assert max(len(line) for line in text.lines) <= 110
    assert _balanced(text.lines[text.lines.index(arrivals[0]):])


def test_no_cut_is_longer_than_its_whole_laid_out():
    files = sorted(str(path) for path in CAPTURES.glob("*.http"))
    groups = [[file] for file in files]
    cut = walkthrough.build(files, groups=groups)
    whole = walkthrough.build(files, groups=groups, whole=True)
    lengths = [(one.name, one.listing.count("\n") + 1, _laid_out_length(all_of.listing))
               for one, all_of in zip(cut.exchanges, whole.exchanges, strict=True)]
    assert [(name, c, w) for name, c, w in lengths if c > w] == []
    assert sum(c for _, c, _ in lengths) < 1800  # 2,611 before


def test_set_sentences_are_said_once_above_the_listings(tmp_path):
    from a2a_capture.report import render

    model = walkthrough.build([str(CAPTURES / "04-polling.http")])
    html, markdown = render.render(model, "html"), render.render(model, "md")
    for text in (html, markdown):
        assert text.count("laid out for reading") == 1 and "laid out here for reading" not in text
        assert text.index("laid out for reading") < text.index("### 1 · ")
    assert walkthrough.build([str(CAPTURES / "04-polling.http")], verbatim=True).legend == ""


def test_the_recorders_connection_note_is_said_in_the_legend_not_per_error():
    from a2a_capture.capture.notes import NEW_CONNECTION_AFTER_ERROR

    exchange = _exchange("09-mistakes.http", "3")
    exchange = exchange.model_copy(update={"notes": [*exchange.notes, NEW_CONNECTION_AFTER_ERROR]})
    _, in_report = listing(exchange, layout=True, legend=True)
    _, apart = listing(exchange, layout=True)
    assert "new connection" not in in_report and "new connection" in apart
