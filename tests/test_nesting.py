"""Deeply nested input meets one explicit limit (nesting.MAX_DEPTH): a body nested deeper is shown
as it is, not decoded; a HAR or flow file gets one line naming where; never RecursionError."""

from __future__ import annotations

import json

import pytest

from a2a_capture import nesting
from a2a_capture.capture import read_capture
from a2a_capture.convert import capture_to_flows, capture_to_har
from a2a_capture.terminal import shown
from tests.cli import run
from tests.conftest import DATA
from tests.test_hostile import HEAD, assert_contract, block

LIMIT = nesting.MAX_DEPTH


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_the_limit_counts_levels_of_lists_and_objects():
    nesting.check_json(json.dumps({"a": json.loads(nested(LIMIT - 1))}))  # exactly the limit
    with pytest.raises(nesting.TooDeep) as deep:
        nesting.check_json(json.dumps({"a": {"b c": [1, json.loads(nested(LIMIT))]}}))
    assert str(deep.value).startswith('$.a["b c"][1][0]') and f"deeper than {LIMIT} levels" in str(deep.value)
    assert len(str(deep.value)) < 100  # a hundred levels of path are cut to their start and end


def test_brackets_inside_strings_do_not_count():
    nesting.check_json(json.dumps({"text": "[" * 10_000, "more": ["{" * 500, r'\"[[[']}))
    assert nesting.loads(b'{"a": "]]]"}') == {"a": "]]]"}


def test_too_deep_is_a_value_error_as_any_json_that_does_not_parse():
    with pytest.raises(ValueError):
        nesting.loads(nested(10_000))


@pytest.mark.parametrize("depth", [LIMIT + 1, 500, 990, 5000])
def test_a_capture_with_a_deep_body_is_read_and_reported(tmp_path, depth):
    call = '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t","x":' + nested(depth) + "}}"
    path = tmp_path / "deep.http"
    path.write_text(HEAD + block(request=f"POST / HTTP/1.1\nHost: a:1\nContent-Type: application/json\n\n{call}\n"))
    for command in (["show", "--format", "json"], ["analyze", "--format", "json"], ["diff", str(path)],
                    ["tidy", "-o", str(tmp_path / "tidy.http")], ["report", "--whole", "-o", str(tmp_path / "r.html")]):
        result = run(*command, str(path))
        assert_contract(result, path)
        assert result.returncode in (0, 1), result.stderr
    assert nested(depth) in (tmp_path / "r.html").read_text()  # shown as it is


def test_a_deep_har_file_is_one_line_naming_where(tmp_path):
    har = json.loads(capture_to_har(read_capture(DATA / "sample-session.http")))
    har["log"]["entries"][1]["_deep"] = "DEEP"
    path = tmp_path / "deep.har"
    path.write_text(json.dumps(har, indent=1).replace('"DEEP"', nested(3000)))
    result = run("analyze", str(path))
    assert_contract(result, path)
    error = result.stderr.decode()
    assert result.returncode == 2 and "$.log.entries[1]._deep[0]" in error and f"deeper than {LIMIT} levels" in error
    assert f"{path}:" in error and ":1:" not in error  # the line of the member, not of the file's start


def test_a_deep_flow_file_is_one_line_naming_where(tmp_path):
    flows = capture_to_flows(read_capture(DATA / "sample-session.http"))
    colon = flows.index(b":")
    end = colon + 1 + int(flows[:colon])
    deep = b"0:]"
    for _ in range(2000):
        deep = b"%d:%s]" % (len(deep), deep)
    payload = flows[colon + 1:end] + b"4:deep;" + deep  # one more member of the first flow record
    path = tmp_path / "deep.flows"
    path.write_bytes(b"%d:%s}" % (len(payload), payload) + flows[end + 1:])
    for command in ("show", "analyze"):
        result = run(command, str(path))
        assert_contract(result, path)
        error = result.stderr.decode()
        assert result.returncode == 2 and "flow 1 at byte 0: $.deep[0][0]" in error, error


def test_an_error_message_stays_on_one_line():
    text = shown("found 1\x0b178 bytes\u2028and\nmore")
    assert text.splitlines() == [r"found 1\x0b178 bytes\u2028and\x0amore"]


def test_a_long_member_name_is_cut_in_the_path():
    data = b'{"' + b"9" * 5000 + b'": ' + b"[" * 200 + b"]" * 200 + b"}"
    with pytest.raises(nesting.TooDeep) as raised:
        nesting.check_json(data)
    assert str(raised.value) == f'$["{"9" * 40}…"][0][0][0][0]…[0][0]: nested deeper than 100 levels'
