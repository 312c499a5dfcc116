"""A rewritten card has a validator of its own: a client that cached the agent's card (fetched
without the recorder) and revalidates through the listener gets the rewritten card, never a 304
that keeps the card naming the agent; a client that holds the rewritten card gets its 304.

Real mitmdump with the addon in front of a real a2a-sdk agent whose card route answers
conditional requests (ETag, If-None-Match, Last-Modified); the client is httpx.
"""

from __future__ import annotations

import httpx
import pytest
from google.protobuf.json_format import MessageToJson
from starlette.responses import Response
from starlette.routing import Route

from a2a_capture.capture import read_capture
from tests.agents import agent_card, build_app
from tests.live import Recorder, free_port, serve

pytestmark = pytest.mark.live

ETAG = '"card-v1"'
MODIFIED = "Wed, 02 Dec 2026 10:00:00 GMT"


def _app(port: int):
    app = build_app("cached", port, streaming=False)
    body = MessageToJson(agent_card("cached", f"http://127.0.0.1:{port}", streaming=False, push=False)).encode()

    async def card(request):
        if request.headers.get("if-none-match") == ETAG or request.headers.get("if-modified-since") == MODIFIED:
            return Response(status_code=304, headers={"ETag": ETAG})
        return Response(body, media_type="application/json", headers={"ETag": ETAG, "Last-Modified": MODIFIED})
    app.router.routes[:0] = [Route("/.well-known/agent-card.json", card)]
    return app


def _interfaces(answer: httpx.Response) -> set[str]:
    return {entry["url"] for entry in answer.json()["supportedInterfaces"]}


def test_a_client_that_cached_the_agents_card_gets_the_rewritten_one_and_every_call_is_recorded(tmp_path):
    output = tmp_path / "etag.http"
    port, listen = free_port(), free_port()
    base = f"http://127.0.0.1:{listen}"
    with serve(_app(port), port) as upstream:
        direct = httpx.get(f"{upstream}/.well-known/agent-card.json")  # cached from a run without the recorder
        assert direct.headers["etag"] == ETAG and _interfaces(direct) == {f"{upstream}/a2a/jsonrpc",
                                                                          f"{upstream}/a2a/rest"}
        with Recorder(output, [(upstream, listen)]), httpx.Client(timeout=10) as http:
            stale = http.get(f"{base}/.well-known/agent-card.json", headers={"If-None-Match": ETAG})
            since = http.get(f"{base}/.well-known/agent-card.json", headers={"If-Modified-Since": MODIFIED})
            fresh = http.get(f"{base}/.well-known/agent-card.json", headers={"If-None-Match": stale.headers["etag"]})
            jsonrpc = next(url for url in _interfaces(stale) if url.endswith("/jsonrpc"))
            sent = http.post(jsonrpc, headers={"A2A-Version": "1.0"}, json={
                "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
                    "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "a question"}]}}})
    # the agent's own validator gets the rewritten card, with a validator of its own
    assert stale.status_code == 200
    assert _interfaces(stale) == {f"{base}/a2a/jsonrpc", f"{base}/a2a/rest"}
    assert stale.headers["etag"] != ETAG and stale.headers["etag"].startswith('"card-v1-a2a-')
    assert since.status_code == 200 and _interfaces(since) == _interfaces(stale)
    # the rewritten card's own validator is revalidated with the agent, which answers 304
    assert fresh.status_code == 304 and fresh.headers["etag"] == stale.headers["etag"]
    assert sent.status_code == 200
    exchanges = read_capture(output).exchanges
    assert [(e.request.method, e.response.status) for e in exchanges] == [
        ("GET", 200), ("GET", 200), ("GET", 304), ("POST", 200)]  # every call, the one after the card included
    first = " ".join(exchanges[0].notes)
    assert "If-None-Match: none" in first and "derived from the agent's" in first
    assert exchanges[0].request.header("if-none-match") is None  # the agent was asked for its card
    assert "If-Modified-Since" in " ".join(exchanges[1].notes)
    assert exchanges[2].request.header("if-none-match") == ETAG  # ours, sent to the agent as its own
