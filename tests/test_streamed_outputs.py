"""Outputs written as their input is read are byte for byte what the whole-in-memory way wrote."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from a2a_capture import __version__
from a2a_capture.capture import read_capture
from a2a_capture.convert import convert
from a2a_capture.convert.har import _entry
from a2a_capture.errors import A2ACaptureError
from a2a_capture.report.mask import Masker

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
