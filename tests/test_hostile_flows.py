"""mitmproxy flow files from strangers: records of the wrong types, missing members, unknown format
versions, truncated files and flows that are not HTTP each get exit 0, 1 or 2, and for 2 one line
naming the file, the flow (its number and byte offset) and the exact path of the member."""

from __future__ import annotations

import copy

import pytest
from mitmproxy.io import tnetstring

from a2a_capture.capture import read_capture
from a2a_capture.convert.mitm import capture_to_flows
from tests.cli import run
from tests.conftest import DATA
from tests.test_hostile import assert_contract

SEED = capture_to_flows(read_capture(DATA / "sample-session.http"))


def records() -> list[dict]:
    stream, found = __import__("io").BytesIO(SEED), []
    while stream.tell() < len(SEED):
        found.append(tnetstring.load(stream))
    return found


def damaged(path: list, value=None, *, delete: bool = False, flow: int = 1) -> bytes:
    """The seed with one member of flow ``flow`` (0-based) set to ``value`` (or deleted)."""
    flows = records()
    target = flows[flow]
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    elif isinstance(target, tuple):  # headers are tuples of pairs: rebuild the pair
        raise AssertionError("use a list path")
    else:
        target[path[-1]] = value
    return b"".join(tnetstring.dumps(record) for record in flows)


def _header_value_a_str() -> bytes:
    flows = records()
    flows[1]["request"]["headers"] = [[b"host", "a:1"]]
    return b"".join(tnetstring.dumps(record) for record in flows)


#: name -> (file bytes, the start of the message after "file: ", or None where the file is read)
CASES = {
    "request-a-string": (lambda: damaged(["request"], "x"), "flow 2 at byte {1}: $.request: expected a request"),
    "header-value-a-str": (_header_value_a_str, "flow 2 at byte {1}: $.request.headers[0][1]: expected a "
                                                "header value as bytes (no line break or NUL), found a string ('a:1')"),
    "method-missing": (lambda: damaged(["request", "method"], delete=True),
                       "flow 2 at byte {1}: $.request.method: expected an HTTP method as bytes (a token "
                       "such as POST, not starting with '#'), found no such member"),
    # found by the fuzzer: the converted capture's request line read as a note
    "method-a-hash": (lambda: damaged(["request", "method"], b"#"),
                      "flow 2 at byte {1}: $.request.method: expected an HTTP method as bytes"),
    "client-conn-missing": (lambda: damaged(["client_conn"], delete=True),
                            "flow 2 at byte {1}: $.client_conn: expected a connection, found no such member"),
    "content-a-str": (lambda: damaged(["request", "content"], "x"), "flow 2 at byte {1}: $.request.content: "),
    "port-past-65535": (lambda: damaged(["request", "port"], 99999), "flow 2 at byte {1}: $.request.port: "),
    "time-past-9999": (lambda: damaged(["request", "timestamp_start"], 1e300),
                       "flow 2 at byte {1}: $.request.timestamp_start: "),
    "status-a-str": (lambda: damaged(["response", "status_code"], "200"), "flow 2 at byte {1}: $.response.status_code"),
    # pydantic's multi-line "1 validation error for Response …" reached the user here before
    "status-a-word": (lambda: damaged(["response", "status_code"], "OK"),
                      "flow 2 at byte {1}: $.response.status_code: expected an HTTP status (100 to 999), found a "
                      "string ('OK')"),
    "capture-meta-key-with-a-nul": (lambda: damaged(["metadata", "a2a_capture", "meta"], [["\x00ormat", "x"]], flow=0),
                                    "flow 1 at byte 0: $.metadata.a2a_capture.meta[0][0]: expected a #@ key"),
    "body-after-a-204": (lambda: damaged(["response", "status_code"], 204),  # found by the fuzzer
                         "flow 2 at byte {1}: $.response.status_code: expected a status that allows a body"),
    "reason-with-a-line-break": (lambda: damaged(["response", "reason"], b"OK\r\nX: 1"),
                                 "flow 2 at byte {1}: $.response.reason: expected a reason phrase as bytes"),
    "peer-a-dict": (lambda: damaged(["client_conn", "peername"], {}), "flow 2 at byte {1}: $.client_conn.peername"),
    "saved-number-a-str": (lambda: damaged(["metadata", "a2a", "number"], "1"),
                           "flow 2 at byte {1}: $.metadata.a2a.number: expected an exchange number (an integer, 0 "
                           "or more), found a string ('1')"),
    "saved-number-negative": (lambda: damaged(["metadata", "a2a", "number"], -1),  # found by the fuzzer
                              "flow 2 at byte {1}: $.metadata.a2a.number: expected an exchange number"),
    "saved-title-a-dict": (lambda: damaged(["metadata", "a2a", "title"], {}),
                           "flow 2 at byte {1}: $.metadata.a2a.title: expected a string, found an object"),
    "saved-notes-missing": (lambda: damaged(["metadata", "a2a", "notes"], delete=True),
                            "flow 2 at byte {1}: $.metadata.a2a.notes: "),
    "capture-notes-a-number": (lambda: damaged(["metadata", "a2a_capture", "notes"], 5, flow=0),
                               "flow 1 at byte 0: $.metadata.a2a_capture.notes: "),
    "version-from-the-future": (lambda: damaged(["version"], 999), "flow 2 at byte {1}: $.version: expected a flow "
                                                                  "format version this mitmproxy reads"),
    "version-a-word": (lambda: damaged(["version"], "x"), "flow 2 at byte {1}: $.version: "),
    "version-missing": (lambda: damaged(["version"], delete=True), "flow 2 at byte {1}: $.version: "),
    "type-a-number": (lambda: damaged(["type"], 5), "flow 2 at byte {1}: $.type: expected a string"),
    "unknown-type": (lambda: damaged(["type"], "carrier-pigeon"), "flow 2 at byte {1}: $: "),
    "a-member-too-many": (lambda: damaged(["surprise"], 1), "flow 2 at byte {1}: $.surprise: expected no such member"),
    "record-a-list": (lambda: tnetstring.dumps([1, 2]), "flow 1 at byte 0: $: expected a flow record"),
    "truncated": (lambda: SEED[:-7], "flow 3 at byte {2}: not a mitmproxy flow record"),
    "not-a-flow-file": (lambda: b"hello, world", "flow 1 at byte 0: not a mitmproxy flow record"),
    "deeply-nested": (lambda: _deep(), "flow 1 at byte 0: "),
    "a-har-given-as-flows": (lambda: b'{"log": {"entries": [5]}}', "$.log.entries[0]: expected a HAR entry"),
}


def _deep() -> bytes:
    data = b"0:]"
    for _ in range(5000):
        data = b"%d:%s]" % (len(data), data)
    return data


def offsets() -> list[int]:
    found, at = [], 0
    for record in records():
        found.append(at)
        at += len(tnetstring.dumps(record))
    return found


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_damaged_flow_file_names_the_flow_and_member(tmp_path, name):
    make, message = CASES[name]
    path = tmp_path / f"{name}.flow"
    path.write_bytes(make())
    for command in (["show"], ["analyze", "--format", "json"]):
        result = run(*command, str(path))
        assert_contract(result, path)
        assert result.returncode == 2
        assert result.stderr.decode().startswith(f"a2a-capture: error: {path}: {message.format(*offsets())}"), \
            result.stderr


#: damage a reader can live with: the file reads (found by the fuzzer where it once did not)
READABLE = {
    "capture-metadata-null": lambda: damaged(["metadata", "a2a_capture"], None, flow=0),
    "saved-metadata-null": lambda: damaged(["metadata", "a2a"], None),
    "response-null": lambda: damaged(["response"], None),
}


@pytest.mark.parametrize("name", sorted(READABLE))
def test_damage_a_reader_can_live_with(tmp_path, name):
    path = tmp_path / f"{name}.flow"
    path.write_bytes(READABLE[name]())
    result = run("analyze", str(path))
    assert result.returncode in (0, 1), result.stderr
    assert len(read_capture_of(path).exchanges) == 3


def test_a_flow_that_is_not_http_is_skipped_and_said(tmp_path):
    from mitmproxy.test import tflow

    path = tmp_path / "mixed.flow"
    path.write_bytes(tnetstring.dumps(tflow.ttcpflow().get_state()) + SEED)
    result = run("show", str(path))
    assert result.returncode == 0, result.stderr
    capture = read_capture_of(path)
    assert "skipped 1 tcp flow(s): a capture holds HTTP only" in capture.notes
    assert len(capture.exchanges) == 3


def read_capture_of(path):
    from a2a_capture import sources

    return sources.capture(path)


def test_an_empty_flow_file_holds_no_exchange(tmp_path):
    path = tmp_path / "empty.flow"
    path.write_bytes(b"")
    assert read_capture_of(path).exchanges == []
    assert copy.copy(SEED)  # the seed itself reads back: the cases above damage a file that is whole
    (tmp_path / "whole.flow").write_bytes(SEED)
    assert len(read_capture_of(tmp_path / "whole.flow").exchanges) == 3


def test_a_pydantic_validation_error_is_told_in_one_line():
    from pydantic import ValidationError

    from a2a_capture.capture.models import Request
    from a2a_capture.errors import one_line

    with pytest.raises(ValidationError) as caught:
        Request(method=5, target="/")
    assert len(str(caught.value).splitlines()) > 1  # what pydantic says, and what reached users before
    assert one_line(caught.value) == "Request.method: Input should be a valid string"
