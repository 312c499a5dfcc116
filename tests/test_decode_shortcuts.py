"""decode's shortcuts give what the general readings give: targets as urlsplit splits them, times
as the meta's datetimes say, JSON as the careful check-then-parse reads it, a stream's frames
read alike whether or not its body lets most of them be skipped unread."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_capture import nesting
from a2a_capture.a2a import decode as decode_module
from a2a_capture.a2a import payloads, states
from a2a_capture.a2a.addresses import split_target as _split_target
from a2a_capture.a2a.bodies import _json_checked
from a2a_capture.a2a.bodies import json_of as _json
from a2a_capture.a2a.decode import Cards, card_of, decode, task_states
from a2a_capture.capture.models import Exchange, ExchangeMeta, Request, Response
from a2a_capture.sources import exchanges
from tests.builders import card, fetch_card, write

_TARGET_CHARS = st.sampled_from([*"/?#=&%[]:@ \t\r\nab01.-_~", "é", "\x00"])


@given(st.text(_TARGET_CHARS, max_size=24))
def test_targets_split_as_urlsplit_does(target):
    try:
        expected = urlsplit(target)
    except ValueError:
        expected = urlsplit("/" + target.lstrip("/").replace("[", "%5B").replace("]", "%5D"))
    assert _split_target(target) == (expected.scheme, expected.netloc, expected.path, expected.query)


@pytest.mark.parametrize("target", ["/", "/a2a/v1/tasks/t-1?historyLength=2&x=1", "/x#frag", "//host/p",
                                    "http://h:1/p?q", "/p\tq?r", "*", "", "/tasks?", "/[::1]/x"])
def test_named_targets_split_as_urlsplit_does(target):
    expected = urlsplit(target)
    assert _split_target(target) == (expected.scheme, expected.netloc, expected.path, expected.query)


_SPELLINGS = ["2026-11-30T07:40:01.102311Z", "2026-11-30T07:40:01Z", "2026-11-30T07:40:01.123+02:00",
              "2026-11-30T07:40:01.123456", "2026-13-30T07:40:01.123456Z", "2026-11-30T24:00:00.000000Z",
              "soon", "", None]


@pytest.mark.parametrize("start", [s for s in _SPELLINGS if s])
@pytest.mark.parametrize("end", _SPELLINGS)
def test_times_are_what_the_meta_says(start, end):
    meta = ExchangeMeta(start=start, end=end)
    started, ended = meta.started_at, meta.ended_at
    duration = ((ended - started).total_seconds()
                if started and ended and (started.tzinfo is None) == (ended.tzinfo is None) else None)
    assert meta.times() == (started.timestamp() if started else None, duration)


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("body", [
    b"", b"  \n", b"{}", b'{"a": [1, 2, {"b": null}]}', b"NaN", b'{"n": 1e999}', b"[1, 2", b"not json",
    b'{"big": 123456789012345678901234567890}', _deep(100).encode(), _deep(101).encode(), _deep(150).encode(),
    ("[" * 150).encode(), b'"' + b"[" * 300 + b'"', ("{" + '"a":' * 120).encode(), " [1] ", _deep(101), "\n",
    b"\xff\xfe", '{"k": "\\u00e9"}', b"[" + b"1," * 600_000 + b"1]",
])
def test_json_is_read_as_the_careful_reading_reads_it(body):
    assert _json(body) == _json_checked(body)


def _mixed(objects: int, lists: int, padding: str = "") -> str:
    """Objects around lists, nested ``objects + lists`` deep; ``padding`` (a string member) at each object."""
    return (f'{{{padding}"a":' * objects + "[" * lists + "]" * lists + "}" * objects)


_PADDED = '"s": "{[{[ \u20ac", '  # brackets in a string: counted, though they open nothing


@pytest.mark.parametrize("depth", [nesting.MAX_DEPTH - 1, nesting.MAX_DEPTH, nesting.MAX_DEPTH + 1, 203])
@pytest.mark.parametrize("objects", [0, 1, 2, 50, 99, 100, 101, 203])
@pytest.mark.parametrize("padding", ["", _PADDED])
def test_json_of_mixed_brackets_is_read_as_the_careful_reading_reads_it(depth, objects, padding):
    """Brackets of both kinds near the limit, as bytes and as text: the quick count (each kind
    deleted, at most one past the limit) and the careful check agree."""
    if objects > depth:
        return
    text = _mixed(objects, depth - objects, padding)
    for body in (text, text.encode(), text.encode() + b" " * 300):
        assert _json(body) == _json_checked(body)


def test_json_nested_past_the_limit_is_not_decoded_however_short():
    assert _json(_deep(nesting.MAX_DEPTH + 1).encode()) == (None, True)
    assert _json(_deep(nesting.MAX_DEPTH).encode())[1] is False


def test_task_states_in_document_order_up_to_the_limit():
    value = {"result": {"tasks": [
        {"id": "a", "status": {"state": "TASK_STATE_WORKING"},
         "history": [{"taskId": "h", "status": {"state": "completed"}}]},
        {"taskId": "b", "status": {"state": "completed"}, "nested": {"id": "c", "status": {"state": "failed"}}},
    ]}, "status": {"state": "canceled"}}
    assert task_states(value) == [("a", "TASK_STATE_WORKING"), ("b", "TASK_STATE_COMPLETED"),
                                  ("c", "TASK_STATE_FAILED")]
    many = [{"id": str(n), "status": {"state": "working"}} for n in range(10)]
    assert [task for task, _ in task_states(many, limit=3)] == ["0", "1", "2"]


_STATE_WORDS = st.sampled_from(["TASK_STATE_WORKING", "completed", "failed", "nonsense", 3, None])
_KEYS = st.sampled_from(["id", "taskId", "status", "state", "result", "task", "statusUpdate", "history",
                         "artifacts", "message", "metadata", "parts", "tasks", "x"])
_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from(["t-1", "t-2", ""]), _STATE_WORDS),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4),
                            st.fixed_dictionaries({"state": _STATE_WORDS})),
    max_leaves=25)


@given(_JSON, st.integers(min_value=1, max_value=4))
def test_task_states_read_straight_down_a_chain_as_the_walk_reads_them(value, limit):
    assert task_states(value, limit) == states._walk_states(value, limit)


def test_task_states_chains_and_branches_alike():
    chain = {"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "a", "status": {"state": "working"},
                                                           "history": [{"id": "h", "status": {"state": "failed"}}],
                                                           "nested": {"taskId": "b",
                                                                      "status": {"state": "completed"}}}}}
    branching = {"a": {"id": "a", "status": {"state": "working"}}, "b": [{"id": "b", "status": {"state": "failed"}}]}
    forked = {"result": {"a": {"id": "a", "status": {"state": "working"}}, "b": {"id": "b", "status": {
        "state": "failed"}}}}
    for value in (chain, branching, forked, [chain, branching], None, "text"):
        for limit in (1, 2, 500):
            assert task_states(value, limit) == states._walk_states(value, limit)
    assert task_states(chain) == [("a", "TASK_STATE_WORKING"), ("b", "TASK_STATE_COMPLETED")]
    assert task_states(forked) == [("a", "TASK_STATE_WORKING"), ("b", "TASK_STATE_FAILED")]


def _stream(frames: list[str]) -> Exchange:
    send = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
            "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}
    body = "".join(frame + "\n\n" for frame in frames).encode()
    return Exchange(number=1, meta=ExchangeMeta(start="2026-11-30T07:40:01.102311Z"),
                    request=Request(method="POST", target="/", body=json.dumps(send).encode(),
                                    headers=[("Host", "a:1"), ("Content-Type", "application/json")]),
                    response=Response(status=200, body=body, event_times=[n / 10 for n in range(len(frames))],
                                      headers=[("content-type", "text/event-stream")]))


def _envelope(result: dict) -> str:
    return "data: " + json.dumps({"jsonrpc": "2.0", "id": 1, "result": result})


_WORKING = _envelope({"task": {"id": "t", "status": {"state": "TASK_STATE_WORKING"}}})
_ARTIFACT = _envelope({"artifactUpdate": {"taskId": "t", "artifact": {"parts": [{"text": "a line"}]}}})
_ESCAPED = _envelope({"artifactUpdate": {"taskId": "t", "artifact": {"parts": [{"text": "caf\u00e9"}]}}})
_DONE = _envelope({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_COMPLETED"}}})
_BOTH = [("t", "TASK_STATE_WORKING"), ("t", "TASK_STATE_COMPLETED")]


@pytest.mark.parametrize(("frames", "states", "offsets", "error", "parsed"), [
    ([_WORKING, _ARTIFACT, _DONE], _BOTH, [0.0, 0.2], None, 2),
    ([_WORKING, _ESCAPED, _DONE], _BOTH, [0.0, 0.2], None, 3),
    ([": ping", _WORKING, ": ping", _DONE], _BOTH, [0.1, 0.3], None, 2),
    # a status key spelled with escapes is read (a frame with `\u` is looked at)
    ([_WORKING, 'data: {"result": {"statusUpdate": {"taskId": "t", "st\\u0061tus": {"state": "TASK_STATE_FAILED"}}}}'],
     [("t", "TASK_STATE_WORKING"), ("t", "TASK_STATE_FAILED")], [0.0, 0.1], None, 2),
    # an error as a JSON-RPC envelope in any frame, and as an `event: error` frame
    ([_WORKING, 'data: {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "gone"}}'],
     [("t", "TASK_STATE_WORKING")], [0.0], "TaskNotFoundError", 2),
    ([_WORKING, "event: error\ndata: {\"code\": -32603, \"message\": \"boom\"}", _DONE], _BOTH, [0.0, 0.2],
     "InternalError", 3),
    # only the first error a frame carries is the call's
    ([_WORKING, "event: error\ndata: {\"code\": -32603, \"message\": \"boom\"}",
      'data: {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "gone"}}'],
     [("t", "TASK_STATE_WORKING")], [0.0], "InternalError", 3),
    # a frame with nothing but an id is an event (counted), not a ping
    (["id: 7", _WORKING, _DONE, _DONE], [*_BOTH, _BOTH[1]], [0.1, 0.2, 0.3], None, 3),
])
def test_stream_frames_are_read_as_they_pass(monkeypatch, frames, states, offsets, error, parsed):
    looked = []
    frame_json = payloads.frame_json
    monkeypatch.setattr(payloads, "frame_json", lambda frame: looked.append(frame) or frame_json(frame))
    call = decode(_stream(frames))
    assert (call.states, call.state_offsets) == (states, offsets)
    assert (call.error.name if call.error else None) == error
    assert call.events == sum(1 for frame in frames if not frame.startswith(":"))
    assert len(looked) == parsed  # a frame that names no status and carries no error is not parsed


def test_a_long_stream_keeps_one_tuple_for_a_state_it_shows_again():
    call = decode(_stream([_WORKING] * 50 + [_DONE] * 2))
    assert call.states == [_BOTH[0]] * 50 + [_BOTH[1]] * 2 and call.events == 52
    assert len({id(state) for state in call.states}) == 2


@pytest.mark.parametrize("padding", [0, 40_000])  # a small card is its own key, a large one its digest's
def test_the_same_card_bytes_are_the_same_card(padding):
    data = {"name": "probe", "description": "x" * padding, "skills": [], "url": "http://a:1/"}
    raw = json.dumps(data).encode()
    cards = Cards()  # the session's: the engine's Analyzer owns one
    first = cards.card(data, raw)
    assert cards.card(json.loads(raw), bytes(bytearray(raw))) is first
    other = json.dumps({**data, "name": "other"}).encode()
    assert cards.card(json.loads(other), other).name == "other"
    assert Cards().card(data, raw) is not first and card_of(data, raw) is not first  # nothing kept elsewhere
    assert card_of(data, raw) == first


def test_a_rest_route_is_found_as_by_every_route_s_regex():
    """rest_route tries a route's regex only on a path holding its literal text: the same answers."""
    from a2a_capture.a2a import spec

    def by_every_regex(path):
        path = path.rstrip("/") or "/"
        return [(route, found.groupdict(), path[:found.start()]) for route in spec.ROUTES
                if (found := route.regex.search(path))]

    paths = ["/", "/tasks", "/tasks/", "/v1/tasks", "/v1/card", "/extendedAgentCard/", "/a/tasks/x/y", "/tasks/:cancel"]
    for route in spec.ROUTES:
        for prefix in ("", "/a2a", "/rest/tenant-1", "/v1", "/x:y/tasks/t"):
            for value in ("t-1", "a b", "x:y", "", "tasks"):
                path = prefix + route.pattern.replace("{id}", value).replace("{config}", value)
                paths += [path, path + "/", path + "x", path[:-1], path.upper()]
    found = 0
    for path in paths:
        expected = by_every_regex(path)
        for method in ("GET", "POST", "DELETE", "PUT"):
            answer = decode_module.rest_route(method, path)
            if not expected:
                assert answer is None, path
                continue
            verb_ok = [c for c in expected if method in c[0].verbs] or [
                c for c in expected if not c[0].pattern.endswith("}")]
            best = max(verb_ok, key=lambda c: len(c[0].pattern)) if verb_ok else None
            assert answer == best, (method, path)
            found += answer is not None
    assert found > 200


@pytest.mark.parametrize(("part", "media"), [
    ({"text": "hi"}, "text/plain"),
    ({"data": {}}, "application/json"),
    ({"kind": "data", "text": "x"}, "text/plain"),  # a member named before the kind
    ({"kind": "data"}, "application/json"),
    ({"mediaType": "Text/CSV; x=1", "text": "a"}, "text/csv"),
    ({"mediaType": "", "text": "a"}, "text/plain"),
    ({"mediaType": 3, "file": {"mimeType": "Image/PNG"}}, "image/png"),
    ({"file": {"mediaType": "A/B"}, "text": "x"}, "a/b"),
    ({"file": {"mimeType": 7}, "text": "x"}, None),
    ({"file": "x", "kind": "text"}, "text/plain"),
    ({"raw": "AA"}, None),
])
def test_a_part_s_media_type(part, media):
    assert decode_module.part_media_type(part) == media


def test_a_card_served_again_is_the_same_card(tmp_path):
    path = write(tmp_path, fetch_card(1), fetch_card(2), fetch_card(3, card(name="other")))
    cards = Cards()  # the session's (the engine's Analyzer.cards)
    first, again, other = (decode(exchange, cards=cards) for exchange in exchanges(path))
    assert first.response_json == again.response_json and first.card is again.card
    assert other.response_json == {**first.response_json, "name": "other"} and other.card.name == "other"
