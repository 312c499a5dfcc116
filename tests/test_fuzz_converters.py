"""The fuzzer over HAR and mitmproxy flow files: structural mutations (a member of a real file set to a
value of another type, removed, or joined by one it does not expect) and byte mutations, each read
by show, analyze and a report, asserting the contract: exit 0, 1 or 2, and for 2 one line naming the
file and where; never the catch-all. A2A_CAPTURE_FUZZ_EXAMPLES sets how many examples each runs."""

from __future__ import annotations

import io
import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mitmproxy.io import tnetstring

from a2a_capture.capture import read_capture
from a2a_capture.convert import capture_to_har
from tests.cli import run
from tests.conftest import DATA
from tests.test_hostile import assert_contract, mutated

EXAMPLES = int(os.environ.get("A2A_CAPTURE_FUZZ_EXAMPLES", "150"))  # each; a few hundred in all
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
SESSION = read_capture(DATA / "sample-session.http")
#: a HAR as browsers write it (no `_a2a*` members), beside one a2a-capture wrote
FOREIGN_ENTRY = {
    "startedDateTime": "2026-11-30T07:40:01.000Z", "time": 12.5, "serverIPAddress": "::1",
    "request": {"method": "POST", "url": "https://agent.example:8443/rpc?x=1", "httpVersion": "h2",
                "headers": [{"name": ":authority", "value": "agent.example"},
                            {"name": "content-type", "value": "application/json"}],
                "postData": {"mimeType": "application/json",
                             "text": '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}'}},
    "response": {"status": 200, "statusText": "OK", "httpVersion": "h2",
                 "headers": [{"name": "content-type", "value": "text/event-stream"}],
                 "content": {"mimeType": "text/event-stream", "encoding": "base64",
                             "text": "ZGF0YToge30KCg=="}},
}
HAR_SEED = json.loads(capture_to_har(SESSION))
HAR_SEED["log"]["entries"].append(FOREIGN_ENTRY)

ODD_TEXT = st.sampled_from(["", "x", "http://[::1/x", "http://a:99999/", "base64", "!!", "9" * 5000, "\udcff",
                            "2026-11-30T07:40:01", "HTTP/2", "text/event-stream", "data: {}\n\n", "-1"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from([0, -1, 10**30, 65536, 1e300]),
                    st.floats(), st.text(max_size=8), ODD_TEXT)
JSON = st.recursive(SCALARS, lambda children: st.lists(children, max_size=3)
                    | st.dictionaries(st.text(max_size=6) | st.sampled_from(["name", "value", "text"]), children,
                                      max_size=3), max_leaves=6)


def paths(value, prefix=()) -> list[tuple]:
    """Every member and item of a document, as the keys that reach it."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


#: values of the same kind as the one they replace: past the type checks, into the conversion itself
SAME_KIND = {
    str: st.text(max_size=12) | ODD_TEXT.filter(lambda text: text != "\udcff"),
    bytes: st.binary(max_size=12) | st.sampled_from([b"", b"\xff\xfe", b"HTTP/2.0", b"a:b:c", b"[::1", b"\r\n"]),
    int: st.integers() | st.sampled_from([0, -1, 99, 100, 999, 1000, 65535, 65536, 10**30]),
    float: st.floats() | st.sampled_from([0.0, -1.0, 1e300, 253402300800.0]),
    bool: st.booleans(),
}


def mutate(document, draw, values) -> object:
    """The document with one to three members replaced by a drawn value (of any kind, or of the kind
    it had), removed, or given a sibling."""
    document = _thaw(document)
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths(document)[1:]))
        parent = document
        for key in where[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "same-kind", "same-kind", "remove", "add"]))
        kind = type(parent[where[-1]])
        if action == "same-kind" and kind in SAME_KIND:
            parent[where[-1]] = draw(SAME_KIND[kind])
        elif action in ("replace", "same-kind"):
            parent[where[-1]] = draw(values)
        elif action == "remove":
            del parent[where[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=6))] = draw(values)
        else:
            parent.append(draw(values))
        if not paths(document)[1:]:
            break
    return document


def _thaw(value):
    """A deep copy with tuples as lists, so every member can be changed."""
    if isinstance(value, dict):
        return {key: _thaw(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_thaw(item) for item in value]
    return value


def bytes_mutated(draw, seed: bytes, tokens: list[bytes]) -> bytes:
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["insert", "delete", "flip", "cut"]))
        if action == "insert":
            data[at:at] = draw(st.sampled_from(tokens) | st.binary(max_size=12))
        elif action == "delete":
            del data[at:at + draw(st.integers(1, 200))]
        elif action == "cut":
            del data[at:]
        elif at < len(data):
            data[at] = draw(st.integers(0, 255))
    return bytes(data)


def keeps_the_contract(folder, name: str, data: bytes, report: str = "md") -> None:
    path = folder / name
    path.write_bytes(data)
    for command in (["show", "--format", "json"], ["analyze", "--format", "sarif"]):
        result = run(*command, str(path))
        assert_contract(result, path)
        if result.returncode == 2:
            return  # the file was refused, in one line: the other commands read it the same way
        json.loads(result.stdout.decode("utf-8"))
    assert_contract(run("report", str(path), "-o", str(folder / f"r.{report}")), path)
    assert_contract(run("diff", str(path), str(path)), path)
    converted = folder / "converted.http"  # what was read can be written as a capture, which reads back
    assert run("convert", str(path), "-o", str(converted)).returncode == 0
    back = run("show", str(converted))
    assert back.returncode == 0, back.stderr


# -- HAR ----------------------------------------------------------------------------------------------

@SETTINGS
@given(data=st.data())
def test_har_with_members_of_any_type_keeps_the_contract(tmp_path_factory, data):
    document = mutate(HAR_SEED, data.draw, JSON)
    text = json.dumps(document, indent=data.draw(st.sampled_from([None, 2])), ensure_ascii=data.draw(st.booleans()))
    keeps_the_contract(tmp_path_factory.mktemp("har"), "fuzzed.har", text.encode("utf-8", "surrogatepass"),
                       data.draw(st.sampled_from(["md", "html"])))


HAR_TEXT = json.dumps(HAR_SEED, indent=2).encode()
HAR_TOKENS = [b"{", b"}", b"[", b"]", b",", b":", b'"', b"\\", b"null", b"1e999", b"9" * 5000, b"\xff", b"[" * 50,
              b'"_a2aNumber": "x", ', b'"request": 5, ', b'"entries": {}, ', b"\\ud800", b"\xef\xbb\xbf"]


@SETTINGS
@given(data=st.data())
def test_har_with_damaged_bytes_keeps_the_contract(tmp_path_factory, data):
    keeps_the_contract(tmp_path_factory.mktemp("har"), "fuzzed.har", bytes_mutated(data.draw, HAR_TEXT, HAR_TOKENS))


# -- mitmproxy flow files --------------------------------------------------------------------------------

FLOW_SEED = __import__("a2a_capture.convert.mitm", fromlist=["capture_to_flows"]).capture_to_flows(SESSION)


def flow_records(data: bytes) -> list:
    stream, found = io.BytesIO(data), []
    while stream.tell() < len(data):
        found.append(tnetstring.load(stream))
    return found


FLOW_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from([0, -1, 10**30, 65536, 1e300]),
                         st.floats(), st.text(st.characters(exclude_categories=["Cs"]), max_size=8),
                         st.binary(max_size=8), ODD_TEXT.filter(lambda text: text != "\udcff"),
                         st.sampled_from([b"", b"HTTP/2.0", b"\xff", b"GET", b"text/event-stream", "http", "tcp"]))
FLOW_VALUES = st.recursive(FLOW_SCALARS, lambda children: st.lists(children, max_size=3)
                           | st.dictionaries(st.text(max_size=6), children, max_size=3), max_leaves=6)


@SETTINGS
@given(data=st.data())
def test_flows_with_members_of_any_type_keep_the_contract(tmp_path_factory, data):
    records = [mutate(record, data.draw, FLOW_VALUES) if data.draw(st.booleans()) else record
               for record in flow_records(FLOW_SEED)]
    encoded = b"".join(tnetstring.dumps(record) for record in records)
    report = data.draw(st.sampled_from(["md", "html"]))
    keeps_the_contract(tmp_path_factory.mktemp("flow"), "fuzzed.flow", encoded, report)


FLOW_TOKENS = [b"0:~", b"4:true!", b"1:x,", b"1:x;", b"99999999999:", b"]", b"}", b"5:hello"]


@SETTINGS
@given(data=st.data())
def test_flows_with_damaged_bytes_keep_the_contract(tmp_path_factory, data):
    keeps_the_contract(tmp_path_factory.mktemp("flow"), "fuzzed.flow",
                       bytes_mutated(data.draw, FLOW_SEED, FLOW_TOKENS))


# -- and back: a capture the reader took, whatever its damage, converts to files the reader takes ---------

@SETTINGS
@given(data=mutated())
def test_what_convert_writes_reads_back(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("convert")
    source = folder / "fuzzed.http"
    source.write_bytes(data)
    if run("show", str(source)).returncode != 0:
        return  # refused (the capture fuzzer checks how); nothing to convert
    for suffix in ("har", "flow"):
        target = folder / f"out.{suffix}"
        result = run("convert", str(source), "-o", str(target))
        assert result.returncode == 0, result.stderr
        back = run("show", "--format", "json", str(target))
        assert back.returncode == 0, back.stderr
        assert len(json.loads(back.stdout)) == len(json.loads(run("show", "--format", "json", str(source)).stdout))
