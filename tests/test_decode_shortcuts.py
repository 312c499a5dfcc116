"""decode's shortcuts give what the general readings give: targets as urlsplit splits them, times
as the meta's datetimes say, JSON as the careful check-then-parse reads it, a stream's frames
read alike whether or not its body lets most of them be skipped unread, and the plain path for
the commonest exchange gives every field the general path gives (on the kit, the example
captures, both bench sessions and hand-made variants)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_capture import nesting
from a2a_capture.a2a import decode as decode_module
from a2a_capture.a2a.decode import (
    _json,
    _json_checked,
    _served_card,
    _split_target,
    card_of,
    decode,
    task_states,
)
from a2a_capture.capture.models import Exchange, ExchangeMeta, Request, Response
from a2a_capture.sources import exchanges
from tests.builders import block, card, fetch_card, http_request, http_response, rpc, write

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
    assert task_states(value, limit) == decode_module._walk_states(value, limit)


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
            assert task_states(value, limit) == decode_module._walk_states(value, limit)
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


@pytest.mark.parametrize(("frames", "states", "offsets", "error", "every_frame"), [
    ([_WORKING, _ARTIFACT, _DONE], _BOTH, [0.0, 0.2], None, False),
    ([_WORKING, _ESCAPED, _DONE], _BOTH, [0.0, 0.2], None, True),
    ([": ping", _WORKING, ": ping", _DONE], _BOTH, [0.1, 0.3], None, False),
    # a status key spelled with escapes is read (the body has `\u`: every frame is looked at)
    ([_WORKING, 'data: {"result": {"statusUpdate": {"taskId": "t", "st\\u0061tus": {"state": "TASK_STATE_FAILED"}}}}'],
     [("t", "TASK_STATE_WORKING"), ("t", "TASK_STATE_FAILED")], [0.0, 0.1], None, True),
    # an error as a JSON-RPC envelope in any frame, and as an `event: error` frame
    ([_WORKING, 'data: {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "gone"}}'],
     [("t", "TASK_STATE_WORKING")], [0.0], "TaskNotFoundError", True),
    ([_WORKING, "event: error\ndata: {\"code\": -32603, \"message\": \"boom\"}", _DONE], _BOTH, [0.0, 0.2],
     "InternalError", True),
])
def test_stream_frames_are_read_whichever_way_the_body_allows(monkeypatch, frames, states, offsets, error,
                                                              every_frame):
    looked = []
    read_frames = decode_module._read_frames
    monkeypatch.setattr(decode_module, "_read_frames", lambda *args: looked.append(1) or read_frames(*args))
    call = decode(_stream(frames))
    assert (call.states, call.state_offsets) == (states, offsets)
    assert (call.error.name if call.error else None) == error
    assert call.events == sum(1 for frame in frames if not frame.startswith(":"))
    assert bool(looked) == every_frame


@pytest.mark.parametrize("padding", [0, 40_000])  # a small card is its own key, a large one its digest's
def test_the_same_card_bytes_are_the_same_card(padding):
    data = {"name": "probe", "description": "x" * padding, "skills": [], "url": "http://a:1/"}
    raw = json.dumps(data).encode()
    first = card_of(data, raw)
    assert card_of(json.loads(raw), bytes(bytearray(raw))) is first
    other = json.dumps({**data, "name": "other"}).encode()
    assert card_of(json.loads(other), other).name == "other"


def test_a_card_served_again_is_read_once_and_bytes_of_its_length_are_told_apart():
    names = [f"agent-{n}" for n in range(7)]  # one length: more than the memo compares for one
    bodies = [json.dumps({"name": name, "skills": [], "url": "http://a:1/"}).encode() for name in names]
    assert len({len(body) for body in bodies}) == 1
    first = [_served_card(body) for body in bodies]
    for name, body, (value, held) in zip(names, bodies, first, strict=True):
        again = _served_card(bytes(bytearray(body)))  # equal bytes, not the same object
        assert again[0]["name"] == again[1].name == held.name == value["name"] == name
    assert _served_card(bytes(bytearray(bodies[-1])))[1] is first[-1][1]
    assert _served_card(b"[1, 2]") == ([1, 2], None)


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


# -- the plain path: the commonest exchange read straight through -----------------------------------

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


def _read(call) -> dict:
    """A call's fields but the first values of its headers, which only the plain path hands over."""
    return {name: value for name, value in vars(call).items() if name != "first_values"}


def _same_both_ways(exchange, file: str = "f.http") -> bool:
    """The plain path gives, field by field and in the same order, what the general path gives;
    False where it hands the exchange to the general path."""
    plain = decode_module._decode_plain(exchange, file)
    general = decode_module._decode(exchange, file)
    assert _read(decode(exchange, file)) == _read(general)
    if plain is None:
        return False
    assert list(vars(plain)) == list(vars(general))
    if plain.first_values is not None:  # handed over by the plain path only: each header's first value
        for values, headers in zip(plain.first_values, (plain.headers, plain.response_headers), strict=True):
            assert all(decode_module.fixed({"headers": headers}).header(name) == value
                       for name, value in values.items()), exchange.number
    for name, value in _read(general).items():
        mine = getattr(plain, name)
        assert mine == value or repr(mine) == repr(value), (exchange.number, name, mine, value)  # NaN
    return True


def _all_read_both_ways(paths) -> tuple[int, int]:
    taken = total = 0
    for path in paths:
        for exchange in exchanges(path):
            taken += _same_both_ways(exchange, str(path))
            total += 1
    return taken, total


@pytest.mark.kit
def test_the_kit_decodes_the_same_by_the_plain_path(kit):
    taken, total = _all_read_both_ways(sorted(kit.glob("*.http")))
    assert total > 50 and taken > total // 4


def test_the_example_captures_decode_the_same_by_the_plain_path():
    taken, total = _all_read_both_ways(sorted([*(ROOT / "captures").glob("*.http"),
                                               *(ROOT / "tests" / "data").glob("*.http")]))
    assert total > 20 and taken > 0


@pytest.mark.parametrize("shape", ["new", "recurring"])
def test_bench_sessions_decode_the_same_by_the_plain_path(tmp_path, shape):
    from analyze import generate  # bench/analyze.py's sessions: streams, webhooks, cards, polls, sends

    path = tmp_path / f"{shape}.http"
    generate(shape, path, tmp_path / "index", 400_000, seed=3)
    taken, total = _all_read_both_ways([path])
    # every JSON-RPC call of both shapes (their streams too): all but card fetches, webhooks and ListTasks' GETs
    assert taken > total // 2


_TASK = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}
_PLAIN_VARIANTS = [
    rpc(1, "GetTask", {"id": "t-1"}, result=_TASK),
    rpc(1, "GetTask", {"id": "t-1", "tenant": "acme", "historyLength": 2},
        result={**_TASK, "history": [{"taskId": "h", "status": {"state": "completed"}}],
                "artifacts": [{"parts": [{"text": "x"}]}], "extra": {"id": "t-2", "status": {"state": "failed"}}}),
    rpc(1, "tasks/get", {"id": "t-1"}, result={"id": "t-1", "status": {"state": "completed"}, "kind": "task"},
        headers=["Content-Type: application/json"]),
    rpc(1, "message/send", {"message": {"messageId": "m", "role": "user", "parts": [
        {"kind": "text", "text": "hi"}, {"kind": "file", "file": {"mimeType": "Image/PNG", "bytes": "AA=="}}],
        "taskId": "t-1", "contextId": "c-1"}, "configuration": {"pushNotificationConfig": {"url": "http://h/"}}},
        result={"id": "t-1", "status": {"state": "submitted"}}, headers=["Content-Type: application/json",
                                                                          "A2A-Version: 0.3"]),
    rpc(1, "SendMessage", {"message": {"messageId": "m", "parts": [{"mediaType": "text/csv; x=1", "raw": "AA"},
                                                                  {"data": {}}, "odd"]},
                           "configuration": {"taskPushNotificationConfig": {}}}, result={"message": {}}),
    rpc(1, "tasks/send", {"id": "t-1", "message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]}},
        result={"id": "t-1", "status": {"state": "completed"}}, headers=["Content-Type: application/json"]),
    rpc(1, "SendMessage", {"request": {"message_id": "m", "task_id": "t", "context_id": "c", "content": [
        {"text": "x"}]}}, result=_TASK),
    rpc(1, "GetTask", {"id": "t-9"}, error={"code": -32001, "message": "Task not found",
                                             "data": [{"reason": "TASK_NOT_FOUND"}]}),
    rpc(1, "tasks/cancel", {"id": "t-9"}, error={"code": -32002, "message": "task already completed"},
        headers=["Content-Type: application/json", "A2A-Version: 0.3"]),
    rpc(1, "CancelTask", {"id": "t-9"}, error={"code": "UNSUPPORTED_OPERATION", "message": "no"}),
    rpc(1, "ListTasks", {}, result={"tasks": [_TASK, {"id": "t-2", "status": {"state": "canceled"}}],
                                    "nextPageToken": ""}),
    rpc(1, "ListTasks", {"pageToken": "p"}, result={"tasks": [], "nextPageToken": "n"}),
    rpc(1, "GetExtendedAgentCard", {}, result=card(name="extended")),
    rpc(1, "GetExtendedAgentCard", {}, result={"name": 3}),
    rpc(1, "NoSuchMethod", [], result=None),
    rpc(1, "GetTask", {"id": 7}, result=[_TASK, {"status": "bad"}, 3]),
    rpc(1, "GetTask", {"id": "t-1"}, result=_TASK, path="/rpc?debug=1&x=%20y"),
    rpc(1, "GetTask", {"id": "t-1"}, result=_TASK, path="http://agent.example:8443/rpc"),
    rpc(1, "GetTask", {"id": "t-1"}, result=_TASK, notes=["recorded over TLS to LOCALHOST:9001"]),
    rpc(1, "GetTask", {"id": "t-1"}, result=_TASK, notes=["recorded over TLS to upstream.example:443", "other"]),
    rpc(1, "GetTask", {"id": "t-1"}, result=_TASK, host="[::1]:9001"),
    rpc(1, "GetTask", {"id": "t-1"}, result=_TASK, headers=["content-type: application/json; charset=utf-8",
                                                             "a2a-version: 1.0", "A2A-Version: 0.3"]),
    rpc(1, "SendStreamingMessage", {"message": {"messageId": "m", "parts": [{"text": "hi"}]}},
        events=[{"task": _TASK}, {"artifactUpdate": {"taskId": "t-1", "artifact": {"parts": [{"text": "a"}]}}},
                {"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_COMPLETED"}}}]),
    rpc(1, "SubscribeToTask", {"id": "t-1"}, events=[{"statusUpdate": {"taskId": "t-1", "status": {
        "state": "TASK_STATE_FAILED"}, "note": "caf\u00e9"}}]),
    rpc(1, "message/stream", {"message": {"messageId": "m", "parts": []}}, events=[],
        headers=["Content-Type: application/json", "A2A-Version: 0.3"]),
    block(1, "error frame", http_request("POST", "/rpc", ["Content-Type: application/json", "A2A-Version: 0.3"],
                                         {"jsonrpc": "2.0", "id": 1, "method": "tasks/resubscribe",
                                          "params": {"id": "t"}}),
          http_response(200, ": ping\n\nevent: error\ndata: {\"jsonrpc\": \"2.0\", \"id\": 1, \"error\": "
                        "{\"code\": -32001, \"message\": \"gone\"}}\n\n", content_type="text/event-stream")),
    block(1, "problem", http_request("POST", "/rpc", ["Content-Type: application/json"],
                                     {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}),
          http_response(503, {"title": "busy", "detail": "the task has already ended"}, reason="Busy")),
    block(1, "not json back", http_request("POST", "/rpc", ["Content-Type: application/json"],
                                           {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}),
          http_response(401, "<html>no</html>", content_type="text/html", reason="Unauthorized")),
    block(1, "nothing back", http_request("POST", "/rpc", ["Content-Type: application/json"],
                                          {"method": "GetTask", "params": {"id": "t"}}),
          http_response(204, None, reason="No Content")),
]
_PLAIN_VARIANTS += [
    fetch_card(1),
    fetch_card(1, path="/.well-known/agent.json/", request_headers=["A2A-Version: 0.3"]),
    fetch_card(1, card(name="other", supportedInterfaces=None, url="http://localhost:9001/")),
    fetch_card(1, status=404),
    fetch_card(1, path="/agent/authenticatedExtendedCard", response_headers=["ETag: W/\"1\""]),
    block(1, "card list", http_request("GET", "/.well-known/agent-card.json", []), http_response(200, [1, 2])),
    block(1, "card problem", http_request("GET", "/.well-known/agent-card.json", ["A2A-Version: 0.3"]),
          http_response(401, {"error": {"code": -32001, "message": "task not found"}}, reason="Unauthorized")),
    block(1, "card not json", http_request("GET", "/.well-known/agent-card.json?x=1", []),
          http_response(200, "<html></html>", content_type="text/html")),
]
# content types that are an event stream's spelled otherwise, and ones that only name one
_PLAIN_VARIANTS += [
    block(1, f"answered as {content_type}",
          http_request("POST", "/rpc", ["Content-Type: application/json"],
                       {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
                        "params": {"message": {"messageId": "m", "parts": [{"text": "x"}]}}}),
          http_response(200, answer, content_type=content_type))
    for content_type in ("Text/Event-Stream; charset=utf-8", "TEXT/EVENT-STREAM ;x=1", "text/event-streams",
                         "application/json; profile=text/event-stream", "x-text/event-stream")
    for answer in ("data: {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}}\n\n",
                   {"jsonrpc": "2.0", "id": 1, "result": _TASK})
]
#: exchanges the plain path hands to the general path (the general path reads them)
_GENERAL_VARIANTS = [
    fetch_card(1, path="/my/card"),
    block(1, "card stream", http_request("GET", "/.well-known/agent-card.json", []),
          http_response(200, "data: {}\n\n", content_type="text/event-stream")),
    block(1, "rest get", http_request("GET", "/tasks/t-1", []), http_response(200, _TASK)),
    block(1, "batch", http_request("POST", "/rpc", ["Content-Type: application/json"],
                                   [{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}]),
          http_response(200, [{"jsonrpc": "2.0", "id": 1, "result": _TASK}])),
    block(1, "not json", http_request("POST", "/rpc", ["Content-Type: application/json"], "{oops"),
          http_response(200, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}})),
    block(1, "rest", http_request("POST", "/message:send", ["Content-Type: application/json"],
                                  {"message": {"messageId": "m", "parts": [{"text": "x"}]}}),
          http_response(200, {"task": _TASK})),
    block(1, "no answer", http_request("POST", "/rpc", ["Content-Type: application/json"],
                                       {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}})),
    block(1, "encoded", http_request("POST", "/rpc", ["Content-Type: application/json", "Content-Encoding: identity"],
                                     {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}),
          http_response(200, {"jsonrpc": "2.0", "id": 1, "result": _TASK})),
    rpc(1, "GetTask", {"id": "t-1"}, result=_TASK).replace("POST /rpc", "post /rpc"),
]


@pytest.mark.parametrize("text", _PLAIN_VARIANTS)
def test_plain_variants_decode_the_same_by_the_plain_path(tmp_path, text):
    path = write(tmp_path, text)
    assert _all_read_both_ways([path]) == (1, 1)


@pytest.mark.parametrize("text", _GENERAL_VARIANTS)
def test_other_exchanges_are_left_to_the_general_path(tmp_path, text):
    path = write(tmp_path, text)
    assert _all_read_both_ways([path]) == (0, 1)


def test_a_card_served_again_is_parsed_once(tmp_path):
    path = write(tmp_path, fetch_card(1), fetch_card(2), fetch_card(3, card(name="other")))
    first, again, other = (decode(exchange) for exchange in exchanges(path))
    assert first.response_json is again.response_json and first.card is again.card
    assert other.response_json == {**first.response_json, "name": "other"} and other.card.name == "other"


def test_a_late_stream_a_webhook_and_grpc_are_left_to_the_general_path(tmp_path):
    late = _stream([_WORKING])
    late.late_stream, late.late_body = 1, f"{_DONE}\n\n".encode()
    hook = _stream([_WORKING])
    hook.webhook = True
    sent, answered = _stream([_WORKING]), _stream([_WORKING])
    sent.request.headers = [("Host", "a:1"), ("Content-Type", "application/grpc")]
    answered.response.headers = [("Content-Type", "Application/GRPC+proto")]
    assert not any(_same_both_ways(exchange) for exchange in (late, hook, sent, answered))
    assert _same_both_ways(_stream([_WORKING, ": ping", _DONE]))


# -- a JSON-RPC answer's rest, held: what parsing the whole body gives ------------------------------

_RESTS = [
    b'"result": {"id": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}, "artifacts": []}}',
    b'"result": {"task": {"id": "t-1", "status": {"state": "completed"}}, "extra": [{"taskId": "t-2", '
    b'"status": {"state": "failed"}}]}}',
    b'"result": null}', b'"result": {}}  \n', b'"error": {"code": -32001, "message": "gone"}}',
    b'"result": {}, "id": "other"}', b'"result": {}, "id": "ID"}',  # the id again: the last one counts
    b'"result": {}, "jsonrpc": "1.0"}',
    b'"status": {"state": "completed"}}',  # a status beside the id: a state named by the envelope's id
    b'"result": {"id": "t-1", "status": {"state": "completed"}}, "status": {"state": "failed"}}',
    b'"result": ' + _deep(nesting.MAX_DEPTH - 1).encode() + b'}',
    b'"result": ' + _deep(nesting.MAX_DEPTH).encode() + b'}',  # one past the limit, with the envelope
    b'"result": ' + ("[" * 150).encode() + b'}',
    b'"result": {"id": "t-1", "status": {"state": "working"}', b'"result": }', b'}', b'"result": 1,}',
    b'"result": {"n": NaN, "big": 123456789012345678901234567890}}', b'"result": "caf\xc3\xa9"}',
    b'"result": "\xff"}', b'"r\\u0065sult": {"id": "t", "status": {"state": "working"}}}',
    b'"result": {"text": "' + b"x" * 20_000 + b'"}}',  # past what is held: parsed every time
]
_HEADS = [b'{"jsonrpc": "2.0", "id": "ID", ', b'{"jsonrpc":"2.0","id":"ID",', b'{"jsonrpc": "2.0", "id": "ID",',
          b'{"jsonrpc":"2.0","id":"ID", ', b'{"jsonrpc": "2.0", "id": ID, ', b'{"jsonrpc": "2.0",  "id": "ID", ',
          b'{"jsonrpc": "2.0", "id": "ID",  ']
_IDS = [b"ID", b"a", b"b", b"", b"320094ea-d7a9-4ded-9749-1e2370c6a5b8", b"a\\u0041", b'a\\"b', b"a\\\\",
        b"tab\there", b"caf\xc3\xa9", b"\xff", b'x", "y', b"7", b"{[", b"x" * 200,
        b'x", "y' + b"z" * 30, b'x","y' + b"z" * 31]  # an id ending where a UUID's would, after a shorter one


def _parsed(body: bytes) -> tuple[str, list]:
    value = _json(body)[0]
    return repr(json.dumps(value) if value is not None else None), task_states(value)


def test_an_answer_s_rest_held_gives_what_parsing_the_body_gives(monkeypatch):
    monkeypatch.setattr(decode_module, "_ANSWERS", {})
    monkeypatch.setattr(decode_module, "_SEEN_ONCE", set())
    for _ in range(3):  # seen, then held, then answered from the memo
        for rest in _RESTS:
            for head in _HEADS:
                for ident in _IDS:
                    body = head.replace(b"ID", ident) + rest
                    answered, states = decode_module._answer(body)
                    assert (repr(json.dumps(answered) if answered is not None else None), states) == _parsed(body), body
    held = decode_module._ANSWERS
    assert _RESTS[0] in held and _RESTS[2] in held  # polls' answers are held
    assert not any(rest in held for rest in _RESTS[5:10])  # members again, or a status beside the id
    # what a held rest gives each answer is its own: its object and its list of states
    body = b'{"jsonrpc": "2.0", "id": "z", ' + _RESTS[0]
    first, again = decode_module._answer(body), decode_module._answer(body)
    assert first == again and first[0] is not again[0] and first[1] is not again[1]
    first[1].append(("x", "y"))
    assert decode_module._answer(body)[1] == [("t-1", "TASK_STATE_WORKING")]


# -- an answer's members up to its artifacts, held: the rest read from there gives the same ---------

_PREFIXES = [
    b'"result": {"id": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}, ',
    b'"result":{"id":"t-1","status":{"state":"completed"},', b'"result": {',  # compact; artifacts first
    b'"result": {"task": {"id": "t-2", "status": {"state": "failed"}}, ',  # a task below the result
    b'"result": 1, "result": {"id": "t-1", "status": {"state": "working"}, ',  # the member again
    b'"result": {"artifacts": [1], "id": "t-1", ',  # artifacts twice: the first place, the last value
    b'"status": {"id": "t-1", ', b'"id": {', b'"jsonrpc": {', b'"id": "x", "result": {',  # the envelope's
    b'"message": {"taskId": "t-1", "status": {"state": "working"}, ',  # states passed by (``_NOT_TASKS``)
    b'"result": {"meta": {', b'"result": [{', b'"result": {"x": "', b'"result": {"n": 1',  # not held
    b'"result": {"s": "{[{[ \\"artifacts\\": ", ', b'"result": {"n": NaN, ', b'"result": {"id": "\xff", ',
    b'"result": {"id": "caf\xc3\xa9", ', b'"result": ' + b'{"a": ' * 97 + b'{',  # near the depth limit
]
_TAILS = [
    b'"artifacts": []}}', b'"artifacts": [{"artifactId": "a", "parts": [{"text": "line\\n"}]}]}}',
    b'"artifacts": [{"parts": [{"text": "line\\nline\\n"}]}], "history": [{"taskId": "h", "status": {'
    b'"state": "failed"}}]}}',
    b'"artifacts": [], "kind": "task"}}', b'"artifacts": [], "artifacts": [2]}}',
    b'"artifacts": [], "status": {"state": "completed"}, "id": "t-9"}}',  # a status after the artifacts
    b'"artifacts": [], "task": {"id": "t-3", "status": {"state": "canceled"}}}}', b'"artifacts": [], "id": ["t"]}}',
    b'"artifacts": []} }', b'"artifacts": []}}\n', b'"artifacts": []}', b'"artifacts": []}}}', b'"artifacts": [}}',
    b'"artifacts": []}x', b'"artifacts": []} ', b'"artifacts": 1}}',
    b'"artifacts":[NaN]}}', b'"artifacts": [123456789012345678901234567890]}}', b'"artifacts": ["\xff"]}}',
    b'"artifacts": ["caf\xc3\xa9"]}}', b'"artifacts": ' + b"[" * 150 + b"}}",
    *(b'"artifacts": ' + _deep(levels).encode() + b"}}" for levels in (1, 2, 3, 50, 96, 97, 98, 99, 100)),
]


def test_an_answer_read_from_its_held_prefix_gives_what_parsing_the_body_gives(monkeypatch):
    """Polls of a task whose artifacts grow: the answers with a held prefix and tails of every kind
    (states after the artifacts, names again, broken, deep, only json's) read as the whole body
    parses, whichever way ``_answer`` took (seen, prefix held, rest held)."""
    monkeypatch.setattr(decode_module, "_ANSWERS", {})
    monkeypatch.setattr(decode_module, "_PREFIXES", {})
    monkeypatch.setattr(decode_module, "_SEEN_ONCE", set())
    by_prefix = decode_module._by_prefix
    read = []
    monkeypatch.setattr(decode_module, "_by_prefix",
                        lambda rest, split: (lambda found: read.append(found is not None) or found)(
                            by_prefix(rest, split)))
    for prefix in _PREFIXES:
        for _ in range(3):
            for tail in _TAILS:
                for head in _HEADS[:3]:
                    for ident in (b"ID", b"a\\u0041", b"320094ea-d7a9-4ded-9749-1e2370c6a5b8"):
                        body = head.replace(b"ID", ident) + prefix + tail
                        answered, states = decode_module._answer(body)
                        assert (repr(json.dumps(answered) if answered is not None else None), states) == _parsed(
                            body), body
    assert sum(read) > len(_TAILS) * 9  # most tails, by most prefixes, read alone
    held = decode_module._PREFIXES
    assert _PREFIXES[0] in held and _PREFIXES[1] in held and _PREFIXES[4] in held
    assert not any(prefix in held for prefix in _PREFIXES[6:10])  # a status, the envelope's members


_TASK_KEYS = st.sampled_from(["id", "contextId", "status", "artifacts", "history", "kind", "task", "metadata"])


@given(st.lists(st.tuples(_TASK_KEYS, _JSON), max_size=6), st.lists(st.lists(_JSON, max_size=3), min_size=1,
                                                                        max_size=4), st.booleans())
def test_polls_with_growing_artifacts_read_as_their_bodies_parse(members, polls, compact):
    """Answers of one task's polls, its members in any order, named again or not, the artifacts
    different each time: each reads as its body parses."""
    separators = (",", ":") if compact else (", ", ": ")
    for artifacts in polls * 3:
        text = ", ".join(f"{json.dumps(name)}: {json.dumps(value)}" for name, value in members)
        text = text + ", " if text else text
        body = json.dumps({"jsonrpc": "2.0", "id": "p", "result": {}}, separators=separators)[:-3].encode() + (
            b"{" + text.encode() + b'"artifacts": ' + json.dumps(artifacts).encode() + b"}}")
        answered, states = decode_module._answer(body)
        assert (repr(json.dumps(answered) if answered is not None else None), states) == _parsed(body), body


def test_held_answers_are_bounded(monkeypatch):
    monkeypatch.setattr(decode_module, "_ANSWERS", {})
    monkeypatch.setattr(decode_module, "_PREFIXES", {})
    monkeypatch.setattr(decode_module, "_SEEN_ONCE", set())
    for n in range(1500):
        for _ in range(2):
            decode_module._answer(b'{"jsonrpc": "2.0", "id": "1", "result": %d}' % n)
        assert len(decode_module._ANSWERS) <= 512 and len(decode_module._SEEN_ONCE) <= 1024
    big = b'{"jsonrpc": "2.0", "id": "1", "result": "' + b"x" * 15_000 + b'%d"}'
    for n in range(300):
        for _ in range(2):
            decode_module._answer(big % n)
        assert decode_module._answers_held <= (1 << 21) + 16_000
    task = (b'{"jsonrpc": "2.0", "id": "1", "result": {"id": "t-%d", "note": "' + b"y" * 8_000
            + b'", "artifacts": [%d]}}')
    for n in range(600):  # prefixes held, and the rests after them
        for poll in range(3):
            decode_module._answer(task % (n, poll % 2))
        assert len(decode_module._ANSWERS) + len(decode_module._PREFIXES) <= 512
        assert decode_module._answers_held <= (1 << 21) + 16_000
    assert decode_module._PREFIXES


@pytest.mark.kit
def test_the_kit_decodes_the_same_with_answers_held(kit, tmp_path, monkeypatch):
    from analyze import generate

    monkeypatch.setattr(decode_module, "_ANSWERS", {})
    monkeypatch.setattr(decode_module, "_SEEN_ONCE", set())
    answered = []
    answer = decode_module._answer
    monkeypatch.setattr(decode_module, "_answer", lambda body: answered.append(body) or answer(body))
    paths = [*sorted(kit.glob("*.http")), *sorted((ROOT / "captures").glob("*.http")),
             *sorted((ROOT / "tests" / "data").glob("*.http"))]
    for shape in ("new", "recurring"):
        generate(shape, tmp_path / f"{shape}.http", tmp_path / "index", 300_000, seed=5)
        paths.append(tmp_path / f"{shape}.http")
    for _ in range(2):  # the second time over, every answer seen twice is held
        _all_read_both_ways(paths)
    held = sum(body[body.find(b'", "', 26) + 3:] in decode_module._ANSWERS for body in answered)
    assert held > len(answered) // 4


def test_an_id_is_taken_as_it_is_only_in_printable_ascii_without_a_quote_or_backslash():
    """``_answer`` makes a held answer's id of its bytes only where parsing gives those bytes: each
    byte alone is kept by the id table exactly when it is such a byte."""
    kept = [byte for byte in range(256) if bytes([byte]).translate(decode_module._ID_TABLE) == bytes([byte])]
    assert kept == sorted(set(range(0x20, 0x7F)) - set(b'"\\'))


# -- a pair of heads' facts, held: what every exchange with them gives -------------------------------


def test_a_pair_of_heads_facts_are_held_by_everything_they_depend_on(tmp_path):
    """``_decode_plain`` holds what a request head and a response head say (``_head``) by the two
    heads' first values, the verb, the target, the server and the TLS note: exchanges with the same
    heads and another server, note or target decode as the general path reads them."""
    from a2a_capture.capture.http11 import first_values

    body = json.dumps({"jsonrpc": "2.0", "id": "a", "method": "GetTask", "params": {"id": "t-1"}})
    answer = json.dumps({"jsonrpc": "2.0", "id": "a", "result": _TASK})
    blocks = []
    for target, host in (("/rpc", "localhost:9001"), ("/rpc", "localhost:9002"), ("/rpc?x=1", "localhost:9001"),
                         ("http://agent.example:8443/rpc", "localhost:9001")):
        for server in ("localhost:9001", "upstream.example:443", None):
            for note in ("", "over TLS to localhost:9001", "over TLS to upstream.example:443"):
                for _ in range(3):  # the same heads again: the reader gives the same first values
                    blocks.append(
                        f"### {len(blocks) + 1} · GetTask\n" + (f"#@ server: {server}\n" if server else "")
                        + (f"# {note}\n" if note else "") + f"POST {target} HTTP/1.1\nHost: {host}\n"
                        f"Content-Type: application/json\nContent-Length: {len(body)}\n\n{body}\n\n"
                        f"HTTP/1.1 200 OK\ncontent-type: application/json\ncontent-length: {len(answer)}\n\n{answer}")
    read = list(exchanges(write(tmp_path, *blocks)))
    # and a request of a known head sent elsewhere (its first values are its head's)
    read += [exchange.model_copy(update={"request": exchange.request.model_copy(update={"target": "/a?b=c"})})
             for exchange in read[-9:]]
    firsts = [(first_values(exchange.request.__dict__), first_values(exchange.response.__dict__))
              for exchange in read]  # all held: an id is no other's
    assert len(read) == len(blocks) + 9 and len({(id(sent), id(got)) for sent, got in firsts}) <= 16
    assert all(_same_both_ways(exchange) for exchange in read)
    calls = [decode(exchange, "f.http") for exchange in read]
    assert len({(call.agent, call.upstream, call.path, str(call.query)) for call in calls}) > 20
