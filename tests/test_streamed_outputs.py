"""Outputs written as their input is read are byte for byte what the whole-in-memory way wrote."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from a2a_capture import __version__
from a2a_capture.capture import capture_bytes, read_capture
from a2a_capture.capture.models import Capture
from a2a_capture.convert import convert
from a2a_capture.convert.har import ConvertError, _entry, har_to_capture
from a2a_capture.convert.har_stream import HarReader
from a2a_capture.errors import A2ACaptureError
from a2a_capture.redact.mask import Masker

ROOT = Path(__file__).resolve().parent.parent
KIT = os.environ.get("A2A_CAPTURE_KIT")
CAPTURES = sorted([*ROOT.glob("captures/*.http"), *ROOT.glob("tests/data/*.http"),
                   *(sorted(Path(KIT).glob("*.http")) if KIT and Path(KIT).is_dir() else [])])


def _whole_har(path: Path, redact: bool) -> bytes:
    """The HAR as it was written before it streamed: the whole document dumped at once."""
    capture = read_capture(path)
    exchanges, notes = capture.exchanges, capture.notes
    if redact:
        masker = Masker.for_files([str(path)])
        exchanges, notes = [masker.exchange(e) for e in exchanges], [masker.text(n) for n in notes]
    entries = [_entry(exchange) for exchange in exchanges]
    hosts = list(dict.fromkeys(urlsplit(e["request"]["url"]).netloc for e in entries if not e["_a2aWebhook"]))
    page = {"startedDateTime": min((e["startedDateTime"] for e in entries), default="1970-01-01T00:00:00Z"),
            "id": "page_1", "title": "A2A traffic to " + (", ".join(hosts) or "no agent"),
            "pageTimings": {"onContentLoad": -1, "onLoad": -1}}
    har = {"log": {"version": "1.2", "creator": {"name": "a2a-capture", "version": __version__},
                   "pages": [page], "entries": entries, "_a2aNotes": notes, "_a2aMeta": capture.meta}}
    return json.dumps(har, indent=2, ensure_ascii=False).encode("utf-8", "backslashreplace")


def test_the_captures_are_found():
    assert len(CAPTURES) >= 10


@pytest.mark.parametrize("redact", [True, False])
@pytest.mark.parametrize("path", CAPTURES, ids=lambda path: path.name)
def test_convert_to_har_streams_the_same_bytes(path, redact, tmp_path):
    out = tmp_path / "out.har"
    count = convert(str(path), str(out), redact=redact)
    assert out.read_bytes() == _whole_har(path, redact)
    assert count == len(read_capture(path).exchanges)


def test_a_capture_without_exchanges_converts_to_an_empty_har(tmp_path):
    source = tmp_path / "empty.http"
    source.write_text("#@ format: a2a-capture/1\n# nothing yet\n")
    out = tmp_path / "out.har"
    assert convert(str(source), str(out)) == 0
    assert out.read_bytes() == _whole_har(source, True)
    assert json.loads(out.read_bytes())["log"]["entries"] == []


def test_a_conversion_that_fails_half_way_leaves_no_file(tmp_path):
    source = tmp_path / "torn.http"
    good = (ROOT / "tests/data/sample-session.http").read_bytes()
    source.write_bytes(good + b"\n### 99 \xc2\xb7 torn\nnot a request line\n")
    out = tmp_path / "out.har"
    with pytest.raises(A2ACaptureError, match=r"torn\.http:\d+:1: expected a request line"):
        convert(str(source), str(out))
    assert not out.exists()


def _exchanges_both_ways(path: Path):
    whole = har_to_capture(path.read_bytes(), str(path))
    reader = HarReader(str(path))
    streamed = list(reader)
    return whole, reader, streamed


@pytest.mark.parametrize("path", CAPTURES, ids=lambda path: path.name)
def test_a_har_read_an_entry_at_a_time_reads_as_the_whole(path, tmp_path):
    har = tmp_path / "in.har"
    convert(str(path), str(har), redact=False)
    whole, reader, streamed = _exchanges_both_ways(har)
    assert reader._whole is None  # read an entry at a time, not sent to the whole reader
    assert capture_bytes(Capture(notes=reader.notes, meta=reader.meta, exchanges=streamed)) == capture_bytes(whole)
    assert [exchange.line for exchange in streamed] == [exchange.line for exchange in whole.exchanges]


def test_a_foreign_har_out_of_order_with_its_creator_last(tmp_path):
    def entry(start: str, path: str) -> dict:
        return {"startedDateTime": start, "time": 5,
                "request": {"method": "GET", "url": f"https://agent.example{path}", "httpVersion": "HTTP/2",
                            "headers": [{"name": "accept", "value": "*/*"}]},
                "response": {"status": 200, "statusText": "OK", "headers": [],
                             "content": {"text": '{"name": "x"}', "mimeType": "application/json"}}}
    document = {"log": {"version": "1.2", "entries": [entry("2026-01-01T00:00:03Z", "/c"),
                                                      entry("2026-01-01T00:00:01Z", "/a"),
                                                      entry("2026-01-01T00:00:02Z", "/b")],
                        "creator": {"name": "devtools"}}}
    har = tmp_path / "foreign.har"
    har.write_bytes(b"\xef\xbb\xbf" + json.dumps(document, indent=1).encode())
    whole, reader, streamed = _exchanges_both_ways(har)
    assert reader._whole is None
    assert [e.request.target for e in streamed] == ["/a", "/b", "/c"]
    assert capture_bytes(Capture(notes=reader.notes, meta=reader.meta, exchanges=streamed)) == capture_bytes(whole)
    assert [exchange.line for exchange in streamed] == [exchange.line for exchange in whole.exchanges] == [29, 53, 5]


@pytest.mark.parametrize("text", [
    b'{"log": {"entries": [{"request": {"method": "GET", "url": "http://a/"}}, ]}}',  # bad JSON
    b'{"log": {"entries": [{"request": {"method": "GET"}}]}}',  # a shape HAR does not have
    b'{"log": {"entries": []}, "log": {"entries": 3}}',  # a member twice: the last counts
    b'{"log": {"entries": [' + b"[" * 120 + b"]" * 120 + b"]}}",  # nested too deeply
    b'{"log": {"entries": [{"request": {"method": "GET", "url": "http://a/", "headers": []}}]}} extra',
    b'{"log": {"entries": [{"request": {"method": "GET", "url": "http://\xff/", "headers": []}}]}}',
    b'{"log": {"entries": [{"request": {"method": "GET", "url": "http://a:99999/", "headers": []}}]}}',
])
def test_a_har_the_first_reading_finds_wrong_is_said_as_the_whole_reader_says_it(text, tmp_path):
    har = tmp_path / "bad.har"
    har.write_bytes(text)
    with pytest.raises(ConvertError) as whole:
        har_to_capture(text, str(har))
    with pytest.raises(ConvertError) as streamed:
        list(HarReader(str(har)))
    assert str(streamed.value) == str(whole.value)
