"""The reader's shortcuts give what the plain rules give.

`http11.Shape` works out a head's framing facts once per shape (the head without its volatile
values) where `http11.head_facts` reads every head line by line; `models.built` makes the
reader's models without validating them again. Both are checked here against the slow way.
"""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_capture.capture import http11, read_capture
from a2a_capture.capture.models import Exchange, ExchangeMeta, Request, built, maker


@pytest.fixture(autouse=True)
def _shortcuts_on(monkeypatch):
    """These tests hold a shortcut to the general way themselves: it is on for them whatever
    A2A_CAPTURE_NO_SHORTCUTS says (a test that turns it off still does)."""
    from a2a_capture import shortcuts
    from a2a_capture.capture.reader import CaptureReader

    monkeypatch.setattr(shortcuts, "ENABLED", True)
    monkeypatch.setattr(CaptureReader, "quick", True)


ROOT = Path(__file__).resolve().parent.parent

NAMES = [b"Content-Length", b"content-length", b"CONTENT-LENGTH", b" Content-Length", b"Content-Length ",
         b"\x0bcontent-length", b"Transfer-Encoding", b"transfer-encoding ", b"Content-Type", b"content-type",
         b" content-type", b"\x0bContent-Type", b"Date", b"date", b"Host", b"X-Date", b"Dated", b"Te"]
VALUES = [b"12", b" 7 ", b"0", b"1234567890123456", b"x", b"", b"-1", b"chunked", b"text/event-stream",
          b"application/grpc", b"application/json; charset=utf-8", b"Mon, 30 Nov 2026 07:40:01 GMT", b"a:b"]


@st.composite
def heads(draw) -> list[bytes]:
    first = draw(st.sampled_from([b"POST / HTTP/1.1", b"HTTP/1.1 200 OK", b"Date: x", b"content-length: 3"]))
    lines = [first]
    for _ in range(draw(st.integers(0, 7))):
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from([b"no colon", b"", b"content-length", b":"])))
        else:
            lines.append(draw(st.sampled_from(NAMES)) + b":" + draw(st.sampled_from(VALUES)))
    return lines


@settings(max_examples=400, deadline=None)
@given(heads(), st.sampled_from([b"request", b"response"]))
def test_a_shape_frames_a_head_as_its_lines_do(lines, kind):
    head = b"\n".join(lines)
    shape, values = http11.Heads().shape(kind, head)
    content_type, length = http11.head_facts(lines)
    assert shape.content_type == content_type
    assert shape.length(values, head) == length
    assert shape.event_stream == http11.is_event_stream(content_type)


def test_heads_that_differ_in_volatile_values_share_a_shape_and_keep_their_values():
    one = b"HTTP/1.1 200 OK\ndate: Mon, 30 Nov 2026 07:40:01 GMT\ncontent-length: 2\ncontent-type: text/plain"
    two = b"HTTP/1.1 200 OK\ndate: Mon, 30 Nov 2026 07:40:02 GMT\ncontent-length: 31\ncontent-type: text/plain"
    heads = http11.Heads()
    first, first_values = heads.shape(b"response", one)
    second, second_values = heads.shape(b"response", two)
    assert first is second
    assert (first.length(first_values, one), second.length(second_values, two)) == (2, 31)
    other, _ = heads.shape(b"response", two.replace(b"text/plain", b"text/event-stream"))
    assert other is not first and other.event_stream


SAMPLES = sorted((ROOT / "captures").glob("*.http")) + sorted((ROOT / "tests" / "data").glob("*.http"))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda path: path.name)
def test_the_models_the_reader_builds_are_what_validation_gives(path):
    for exchange in read_capture(path).exchanges:
        assert Exchange.model_validate(exchange.model_dump()) == exchange  # same types: no value coerced
        for model in (exchange, exchange.meta, exchange.request, exchange.response):
            if model is not None:
                assert set(type(model).model_fields) <= set(vars(model))


def test_built_wants_every_field():
    with pytest.raises(TypeError, match="missing"):
        built(ExchangeMeta, {"start": None})
    request = built(Request, {"headers": [("Host", "a")], "stored": b"", "http_version": "1.1", "head_cuts": [],
                              "grpc_views": [], "method": "GET", "target": "/"})
    assert request == Request(method="GET", target="/", headers=[("Host", "a")])
    assert request.model_copy(update={"target": "/b"}).target == "/b"


def test_built_models_share_their_fields_set_and_pydantic_only_reads_it():
    """``built`` gives every model of a class one set of given fields (all of them): setting a
    field, copying or dumping a model leaves the set as it is for every other model."""
    values = {"start": "a", "end": "b", "client": None, "server": None, "redacted": [], "extra": []}
    one, two = built(ExchangeMeta, dict(values)), built(ExchangeMeta, dict(values))
    everything = set(ExchangeMeta.model_fields)
    assert one.model_fields_set is two.model_fields_set
    one.start = "c"
    copied = one.model_copy(update={"end": "d"})
    deep = one.model_copy(deep=True)
    assert one.model_dump(exclude_unset=True) == {**values, "start": "c"}
    assert copied.model_fields_set is not one.model_fields_set and deep.model_fields_set is not one.model_fields_set
    assert two.model_fields_set == everything and two == ExchangeMeta(**values)


@pytest.mark.parametrize("cls, values", [
    (ExchangeMeta, {"start": "a", "end": None, "client": "c", "server": None, "redacted": ["x"], "extra": []}),
    (Request, {"headers": [("Host", "a")], "stored": b"{}", "http_version": "1.1", "head_cuts": [], "grpc_views": [],
               "method": "POST", "target": "/"}),
])
def test_a_built_model_is_a_validated_one_in_all_pydantic_keeps(cls, values):
    """``maker`` fills a new model's four pydantic slots itself (what ``model_construct`` stores,
    without its look for defaults): what it gives has the class, the slots and the behaviour of a
    validated model (stores checked, copies, pickles), so a pydantic upgrade that changes the slots fails here."""
    made, validated = built(cls, dict(values)), cls(**values)
    assert type(made) is cls and made == validated and repr(made) == repr(validated)
    for slot in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"):
        assert getattr(made, slot) == getattr(validated, slot), slot
    assert pickle.loads(pickle.dumps(made)) == validated and copy.deepcopy(made) == validated
    assert made.model_copy(update={"body" if cls is Request else "start": b"" if cls is Request else "b"}) != made
    with pytest.raises(ValueError, match="no field"):
        made.nothing = 1  # pydantic's own __setattr__, not the twin's
    with pytest.raises(AttributeError):
        made.nothing  # noqa: B018
    assert maker(cls) is maker(cls)  # made once a class
