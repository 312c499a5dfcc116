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
    assert '"parts": [{"text": "line 0\\n"}, {"text": "line 1\\n"}, … 38 more parts like these]}]},' in text.text
    assert sum(line.count('"text": "line') for line in text.lines) == 2
    assert len(text.lines) <= 25  # 168 before: four lines and a `…` per part; 50 one member a line
    response = text.lines[text.lines.index("HTTP/1.1 200 OK") + 3:]
    assert _balanced(response) and CUT not in [line.strip() for line in response]


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
    assert len(frames) == 6 and all(line.startswith('data: {"result": {"') for line in frames)
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
    whole_lines = sum(all_of.listing.count("\n") + 1 for all_of in whole.exchanges)
    assert sum(c for _, c, _ in lengths) < whole_lines  # 876 against 888 (2,611, then 1,793 before)


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


def test_an_id_is_said_whole_once_per_listing():
    text, _ = listing(_exchange("03-streaming.http", "2"), layout=True)
    task = "2fbb04b8-dd7f-4b93-b6f0-49130185e74c"
    assert text.text.count(task) == 1 and text.text.count('"taskId": "2fbb04b8…"') == 6
    call = "b82e71dc-0ed2-4362-b31b-2b78c9d436ff"  # the request's id, then each frame's
    assert text.text.count(call) == 1 and text.text.count('"id": "b82e71dc…"') == 6
    whole, _ = listing(_exchange("03-streaming.http", "2"), layout=True, whole=True)
    assert whole.text.count(task) == 8  # every frame's task and its status message's


def test_left_out_headers_are_one_mark_and_accept_any_is_left_out():
    text, _ = listing(_exchange("04-polling.http", "4"), layout=True)
    request = text.lines[1:text.lines.index("")]
    assert request == ["POST /a2a/jsonrpc HTTP/1.1", "Host: 127.0.0.1:51241", "A2A-Version: 1.0",
                       "Content-Type: application/json", CUT]
    streamed, _ = listing(_exchange("03-streaming.http", "2"), layout=True)
    assert "Accept: text/event-stream" in streamed.lines
    verbatim, _ = listing(_exchange("04-polling.http", "4"))
    assert "Accept: */*" in verbatim.lines and verbatim.lines.count(CUT) >= 2


def test_no_bracket_has_a_line_of_its_own_where_it_fits_beside_a_member():
    text, _ = listing(_exchange("02-blocking-send.http", "2"), layout=True)
    body = text.lines[text.lines.index("HTTP/1.1 200 OK") + 4:]
    assert not [line for line in body if line.strip().strip("{}[],") == ""]
    assert body[0] == '{"result": {"task": {"id": "3fa07a8b-4228-48a9-99c6-5a7000eb72a7",'
    assert _balanced(body) and max(len(line) for line in body) <= 110
