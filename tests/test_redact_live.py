"""A live session through the real recorder (mitmdump) with fake secrets planted in every place
real clients and agents put them: none reaches the capture or any output, near misses stay
readable, `scan` finds each one in a --no-redact recording and none in the default one; and a
default recording with push replays and diffs clean with no --secret."""

from __future__ import annotations

import contextlib
import json
import threading
import time

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from a2a_capture.capture import read_capture
from a2a_capture.record.process import free_port
from tests.conftest import ROOT
from tests.live import Recorder, agent, serve
from tests.test_cli_show import run
from tests.test_redact_outputs import _outputs

pytestmark = pytest.mark.live

P = {name: f"planted-{name}-{index:02d}x" for index, name in enumerate((
    "x-authorization", "authentication", "goog-assertion", "forwarded-access", "agent-x-authorization",
    "www-authenticate", "client-secret", "id-token-q", "refresh-token-q", "code-q", "amz-signature",
    "hook-userinfo", "hook-query-token", "push-token", "push-credentials", "hub-signature", "refresh_token",
    "id_token", "refreshToken", "bearerToken", "privateKey", "Token", "API_KEY", "apikey", "nested-bearer",
    "oauth-client-secret", "oauth-password", "oauth-access", "oauth-refresh", "oauth-id", "card-client-secret",
    "apikey-scheme-value", "form-jsonrpc-apikey", "no-type-password", "text-token", "text-bearer", "escaped-slash",
    "sse-refresh", "fake-gzip"))}
ESCAPED = "planted-esc-\\u0041-99x"  # its JSON spelling; it reads as planted-esc-A-99x
NEAR_MISSES = ('"tokenCount": 7', '"keyword": "weather"', '"maxTokens": 300',
               '"tokenUrl": "https://idp.example.com/plain-token-url"')


def _agent_app(proxy: str, sent: list):
    """A plain Starlette agent: a card, JSON-RPC that echoes push configs and delivers a webhook
    through the recorder's proxy, an OAuth token endpoint, and answers of every kind."""

    async def card(request: Request):
        base = str(request.base_url).rstrip("/")
        return JSONResponse({
            "name": "planted", "version": "1", "description": "an agent with secrets everywhere",
            "supportedInterfaces": [{"url": f"{base}/a2a/jsonrpc", "protocolBinding": "JSONRPC",
                                     "protocolVersion": "1.0"}],
            "capabilities": {"streaming": True, "pushNotifications": True}, "skills": [],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "securitySchemes": {
                "oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {
                    "tokenUrl": f"https://idp.example.com/token?client_secret={P['card-client-secret']}",
                    "scopes": {}}}}},
                "key": {"apiKeySecurityScheme": {"name": "X-Api-Key", "location": "header",
                                                 "value": P["apikey-scheme-value"]}}}})

    def deliver(config: dict, task: dict) -> None:
        headers = {"X-A2A-Notification-Token": config["token"],
                   "Authorization": f"Bearer {config['authentication']['credentials']}",
                   "X-Hub-Signature-256": f"sha256={P['hub-signature']}", "Content-Type": "application/json"}
        body = {"statusUpdate": {"taskId": task["id"], "contextId": task["contextId"],
                                 "status": {"state": "TASK_STATE_COMPLETED"}, "metadata": {"config": config}}}
        with httpx.Client(proxy=proxy, timeout=10) as http:
            sent.append(http.post(config["url"], content=json.dumps(body), headers=headers).status_code)

    async def jsonrpc(request: Request):
        raw = await request.body()
        call = json.loads(raw)
        params = call.get("params", {})
        config = params.get("configuration", {}).get("taskPushNotificationConfig")
        task = {"id": "task-1", "contextId": "ctx-1", "status": {"state": "TASK_STATE_SUBMITTED"},
                "metadata": {"echo": config, "tokenCount": 7}}
        if config:
            threading.Thread(target=deliver, args=(config, task), daemon=True).start()
        headers = {"X-Authorization": P["agent-x-authorization"]}
        return JSONResponse({"jsonrpc": "2.0", "id": call.get("id"), "result": {"task": task}}, headers=headers)

    async def oauth(request: Request):
        await request.body()
        return JSONResponse({"access_token": P["oauth-access"], "refresh_token": P["oauth-refresh"],
                             "id_token": P["oauth-id"], "token_type": "Bearer", "expires_in": 3600})

    async def text(request: Request):
        return PlainTextResponse(f"session token={P['text-token']} or Bearer {P['text-bearer']}")

    async def denied(request: Request):
        return Response(status_code=401, headers={
            "WWW-Authenticate": f'Bearer realm="a2a", token="{P["www-authenticate"]}"'})

    async def stream(request: Request):
        body = (b'data: {"jsonrpc": "2.0", "id": 5, "result": {"task": {"id": "task-2",\n'
                b'data: "metadata": {"refresh_token": "' + P["sse-refresh"].encode() + b'"}}}}\n\n')
        return Response(body, media_type="text/event-stream")

    async def fake_gzip(request: Request):
        return Response(b'{"result": {"token": "' + P["fake-gzip"].encode() + b'"}}', media_type="application/json",
                        headers={"Content-Encoding": "gzip"})

    return Starlette(routes=[
        Route("/.well-known/agent-card.json", card), Route("/a2a/jsonrpc", jsonrpc, methods=["POST"]),
        Route("/oauth/token", oauth, methods=["POST"]), Route("/text", text, methods=["POST"]),
        Route("/denied", denied, methods=["POST"]), Route("/sse", stream, methods=["POST"]),
        Route("/gzip", fake_gzip, methods=["POST"])])


def _hook_app(received: list):
    async def hook(scope, receive, send):
        message = await receive()
        received.append(message.get("body", b""))
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"ok"})
    return hook


def _client_session(listen: int, hook_url: str) -> None:
    base = f"http://127.0.0.1:{listen}"
    port = hook_url.rsplit(":", 1)[-1]
    metadata = {"refresh_token": P["refresh_token"], "id_token": P["id_token"], "refreshToken": P["refreshToken"],
                "bearerToken": P["bearerToken"], "privateKey": P["privateKey"], "Token": P["Token"],
                "API_KEY": P["API_KEY"], "apikey": P["apikey"], "Authorization": f"Bearer {P['nested-bearer']}",
                "tokenCount": 7, "keyword": "weather", "maxTokens": 300,
                "tokenUrl": "https://idp.example.com/plain-token-url"}
    send = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "run"}], "metadata": metadata},
        "configuration": {"taskPushNotificationConfig": {
            "url": f"http://hook:{P['hook-userinfo']}@127.0.0.1:{port}/hooks?token={P['hook-query-token']}",
            "token": P["push-token"], "authentication": {"scheme": "Bearer", "credentials": P["push-credentials"]}}}}}
    query = (f"?client_secret={P['client-secret']}&id_token={P['id-token-q']}&refresh_token={P['refresh-token-q']}"
             f"&code={P['code-q']}&X-Amz-Signature={P['amz-signature']}")
    headers = {"A2A-Version": "1.0", "X-Authorization": P["x-authorization"],
               "Authentication": f"Bearer {P['authentication']}", "X-Goog-Iap-Jwt-Assertion": P["goog-assertion"],
               "X-Forwarded-Access-Token": P["forwarded-access"]}
    with httpx.Client(timeout=30) as http:
        http.get(f"{base}/.well-known/agent-card.json")
        http.post(f"{base}/a2a/jsonrpc{query}", json=send, headers=headers)
        http.post(f"{base}/oauth/token", data={"grant_type": "password", "username": "bob",
                                               "client_secret": P["oauth-client-secret"],
                                               "password": P["oauth-password"]})
        form_rpc = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "GetTask",
                               "params": {"id": "task-1", "apiKey": P["form-jsonrpc-apikey"]}})
        http.post(f"{base}/a2a/jsonrpc", content=form_rpc,  # as `curl -d` sends it
                  headers={"Content-Type": "application/x-www-form-urlencoded", "A2A-Version": "1.0"})
        http.post(f"{base}/a2a/jsonrpc", content=json.dumps(
            {"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": "task-1",
                                                                        "password": P["no-type-password"]}}),
            headers={"A2A-Version": "1.0"})
        escaped = ('{"jsonrpc": "2.0", "id": 4, "method": "GetTask", "params": {"id": "task-1", "token": "'
                   + P["escaped-slash"].replace("-", "\\/", 1) + '", "secret": "' + ESCAPED + '"}}')
        http.post(f"{base}/a2a/jsonrpc", content=escaped, headers={"Content-Type": "application/json",
                                                                    "A2A-Version": "1.0"})
        http.post(f"{base}/text", content=b"hello", headers={"Content-Type": "text/plain"})
        http.post(f"{base}/denied", json={})
        http.post(f"{base}/sse", json={})
        with http.stream("POST", f"{base}/gzip", json={}) as answer:  # not gzip as labelled: read it raw
            b"".join(answer.iter_raw())


def _planted_spellings() -> dict[str, str]:
    """Each planted value as it may be spelled in what the tool writes."""
    spellings = dict(P)
    spellings["escaped-slash"] = P["escaped-slash"].replace("-", "\\/", 1)
    spellings["escaped-slash-read"] = P["escaped-slash"].replace("-", "/", 1)
    spellings["escaped"] = ESCAPED
    spellings["escaped-read"] = ESCAPED.replace("\\u0041", "A")
    return spellings


def _leaks(text: str) -> list[str]:
    return sorted(name for name, value in _planted_spellings().items() if value in text)


@contextlib.contextmanager
def _session(tmp_path, name: str, redact: bool):
    output = tmp_path / f"{name}.http"
    listen, proxy = free_port(), free_port()
    received, sent = [], []
    with serve(_hook_app(received)) as hook_url, serve(_agent_app(f"http://127.0.0.1:{proxy}", sent)) as upstream, \
            Recorder(output, [(upstream, listen)], proxy_port=proxy, redact=redact):
        _client_session(listen, hook_url)
        deadline = time.monotonic() + 15
        while not received and time.monotonic() < deadline:
            time.sleep(0.1)
    assert received and sent == [200], "the webhook went through the recorder to the receiver"
    yield output


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("planted-live")
    with _session(tmp, "default", True) as default, _session(tmp, "clear", False) as clear:
        yield tmp, default, clear


def test_the_clear_recording_holds_every_planted_value(recorded):
    _, _, clear = recorded
    text = clear.read_text()
    missing = set(P) - set(_leaks(text)) - {"escaped-slash", "fake-gzip"}
    assert not missing  # what the test plants reached the wire (the gzip body is written as base64)
    assert ESCAPED in text


def test_no_planted_value_reaches_the_capture_or_any_output(recorded):
    tmp, default, clear = recorded
    text = default.read_text()
    assert not _leaks(text)
    for near in NEAR_MISSES:  # httpx writes compact JSON
        assert near in text or near.replace(": ", ":") in text, near
    assert "webhook" in text and "[redacted: x-a2a-notification-token" in text
    for capture in (default, clear):  # whatever the input, every output masks by default
        outputs = _outputs(capture, tmp)
        outputs.update(_export(capture, tmp))
        leaks = {name: _leaks(output) for name, output in outputs.items() if _leaks(output)}
        assert not leaks, (capture.name, leaks)
        for name in ("show http", "report whole.md", "tidy", "convert http"):
            assert '"tokenCount": 7' in outputs[name] or '"tokenCount":7' in outputs[name], name


def _export(capture, tmp) -> dict[str, str]:
    import pyarrow.dataset as ds

    folder = tmp / f"export-{capture.stem}"
    assert run("export", str(capture), "-o", str(folder)).returncode == 0
    return {f"export {table}": json.dumps(ds.dataset(folder / table).to_table().to_pylist(), default=str)
            for table in ("sessions", "exchanges", "calls", "findings")}


def test_scan_finds_each_in_the_clear_recording_and_none_in_the_default_one(recorded):
    _, default, clear = recorded
    assert run("scan", str(default)).returncode == 0
    result = run("scan", str(clear))
    assert result.returncode == 1 and not _leaks(result.stdout.decode() + result.stderr.decode())
    hits = result.stdout.decode()
    capture = read_capture(clear)
    for exchange in capture.exchanges:  # every exchange and side holding a planted value is named
        for side, message in (("request", exchange.request), ("response", exchange.response)):
            if message is None:
                continue
            raw = "\n".join(f"{k}: {v}" for k, v in message.headers) + exchange.request.target * (side == "request") \
                + message.body.decode("utf-8", "replace")
            if _leaks(raw):
                label = ("webhook request" if exchange.webhook else side)
                assert f"exchange {exchange.label}: {label} " in hits, (exchange.label, side, _leaks(raw))
    for place in ("request header X-Goog-Iap-Jwt-Assertion (by name)", "request query X-Amz-Signature",
                  "taskPushNotificationConfig.url (url password)", "taskPushNotificationConfig.url (query token)",
                  "response header X-Authorization (by name)", "response header WWW-Authenticate (query token)",
                  "request form client_secret (by name)", "response body $.refresh_token (by name)",
                  "request body $.params.apiKey (by name)", "request body $.params.password (by name)",
                  "request body $.params.secret (by name)", "response body text (query token",
                  "(not gzip as labelled) (undecodable body)", "response body $.result.task.metadata.refresh_token",
                  "webhook request header X-Hub-Signature-256 (by name)", "webhook request query token",
                  "webhook request body $.statusUpdate.metadata.config.token (by name)",
                  "clientCredentials.tokenUrl (query client_secret)", "apiKeySecurityScheme.value (by name)"):
        assert place.lower() in hits.lower(), place  # uvicorn sends header names in lower case


def test_a_default_recording_with_push_replays_and_diffs_clean_without_secret(tmp_path):
    path = ROOT / "captures" / "07-push-webhook.http"
    new = tmp_path / "07.http"
    with agent("test-runner", streaming=True, push=True, step=0.05) as url:
        result = run("replay", str(path), "--target", f"test-runner={url}", "--speed", "4",
                     "--wait-for-webhooks", "30", "-o", str(new))
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    assert b"no value" not in result.stderr  # nothing the agent checks is missing here
    compared = run("diff", str(path), str(new))
    assert compared.returncode == 0, compared.stdout.decode()
    capture = read_capture(new)
    hooks = [e for e in capture.exchanges if e.webhook]
    assert hooks and {e.request.header("x-a2a-notification-token") for e in hooks} == {
        "[redacted: x-a2a-notification-token, sha256:5b770d]"}  # the recorded marker: replay's token mapped back
    assert not any("replay's receiver" in note for e in hooks for note in e.notes)
    assert b"a2a-replay-" not in new.read_bytes()  # the values replay made up are never written


def test_what_the_agent_checks_is_named_in_one_line_before_anything_is_sent(tmp_path):
    path = tmp_path / "needs.http"
    path.write_text(
        "### 1 · SendMessage\nPOST /a2a/jsonrpc HTTP/1.1\nHost: 127.0.0.1:1\nContent-Type: application/json\n"
        "Authorization: Bearer [redacted: bearer credentials, sha256:0b9173]\n\n"
        '{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}\n')
    hits = []

    async def app(scope, receive, send):
        hits.append(dict(scope["headers"]))
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b'{"jsonrpc": "2.0", "id": 1, "result": {}}'})

    with serve(app) as url:
        result = run("replay", str(path), "--target", f"127.0.0.1:1={url}", "--no-delay")
    lines = [line for line in result.stderr.decode().splitlines() if "no value" in line]
    assert len(lines) == 1 and "Authorization (exchange 1)" in lines[0] and "--secret" in lines[0]
    assert "A2A_CAPTURE_SECRET_AUTHORIZATION" in lines[0]
    assert hits and b"authorization" not in hits[0]  # sent without it, never as a marker
