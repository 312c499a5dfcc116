"""Every output masks by default, whatever the input (a --no-redact capture, a HAR, a flow file);
`--no-redact` is the only way to see a secret; `scan` finds each one, and none once masked."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from a2a_capture.capture import capture_bytes
from a2a_capture.capture.models import Capture, Exchange, ExchangeMeta, Request, Response
from tests.cli import run

#: planted values, each in a place the policy must find
PLANTED = {
    "hdr-x-authorization-1", "hdr-goog-jwt-assertion-2", "query-client-secret-3", "query-id-token-4",
    "push-token-5", "hookpass6", "push-query-token-7", "nested-bearer-8", "refresh-9", "form-password-10",
    "text-bearer-11a", "gzip-fake-12", "sse-refresh-13", "card-secret-14", "agent-echo-token-15",
    "webhook-token-16", "apikey-value-17",
}
NEAR_MISSES = ['"tokenCount": 7', '"keyword": "weather"', '"maxTokens": 300']


def _session() -> Capture:
    card = {"name": "planted", "supportedInterfaces": [{"url": "http://127.0.0.1:41241/a2a/jsonrpc",
                                                         "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {"pushNotifications": True}, "version": "1", "skills": [],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "securitySchemes": {"oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {
                "tokenUrl": "https://idp.example.com/token?client_secret=card-secret-14", "scopes": {}}}}},
                "key": {"apiKeySecurityScheme": {"name": "X-Api-Key", "location": "header"}}}}
    send = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "run"}],
                    "metadata": {"Authorization": "Bearer nested-bearer-8", "refresh_token": "refresh-9",
                                 "tokenCount": 7, "keyword": "weather", "maxTokens": 300,
                                 "scheme": {"type": "apiKey", "name": "X-Api-Key", "value": "apikey-value-17"}}},
        "configuration": {"taskPushNotificationConfig": {
            "url": "http://hook:hookpass6@127.0.0.1:9/hooks?token=push-query-token-7", "token": "push-token-5"}}}}
    echo = {"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "task-1", "contextId": "ctx-1",
                                                          "status": {"state": "TASK_STATE_WORKING"},
                                                          "metadata": {"echo": "token=agent-echo-token-15"}}}}
    headers = [("Host", "127.0.0.1:41241"), ("Content-Type", "application/json"), ("A2A-Version", "1.0")]
    exchanges = [
        Exchange(number=1, title="discover planted", request=Request(
            method="GET", target="/.well-known/agent-card.json", headers=[("Host", "127.0.0.1:41241")]),
            response=Response(status=200, reason="OK", headers=[("Content-Type", "application/json")],
                              body=json.dumps(card).encode())),
        Exchange(number=2, title="SendMessage", request=Request(
            method="POST", target="/a2a/jsonrpc?client_secret=query-client-secret-3&id_token=query-id-token-4",
            headers=[*headers, ("X-Authorization", "hdr-x-authorization-1"),
                     ("X-Goog-Iap-Jwt-Assertion", "hdr-goog-jwt-assertion-2")], body=json.dumps(send).encode()),
            response=Response(status=200, reason="OK", headers=[("Content-Type", "application/json")],
                              body=json.dumps(echo).encode()),
            meta=ExchangeMeta(start="2026-01-01T00:00:00.000000Z", end="2026-01-01T00:00:00.100000Z")),
        Exchange(number=3, title="token", request=Request(
            method="POST", target="/oauth/token", headers=[("Host", "127.0.0.1:41241"),
                                                           ("Content-Type", "application/x-www-form-urlencoded")],
            body=b"grant_type=password&username=bob&password=form-password-10"),
            response=Response(status=200, reason="OK", headers=[("Content-Type", "text/plain")],
                              body=b"use Authorization: Bearer text-bearer-11a")),
        Exchange(number=4, title="GetTask", request=Request(
            method="POST", target="/a2a/jsonrpc", headers=headers,
            body=b'{"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": "task-1"}}'),
            response=Response(status=200, reason="OK", headers=[("Content-Type", "application/json"),
                                                               ("Content-Encoding", "gzip")],
                              body=b'{"result": {"token": "gzip-fake-12"}}')),
        Exchange(number=5, title="SendStreamingMessage", request=Request(
            method="POST", target="/a2a/jsonrpc", headers=headers,
            body=b'{"jsonrpc": "2.0", "id": 3, "method": "SendStreamingMessage", "params": {"message": '
                 b'{"messageId": "m-2", "role": "ROLE_USER", "parts": [{"text": "go"}]}}}'),
            response=Response(status=200, reason="OK", headers=[("Content-Type", "text/event-stream")],
                              body=b'data: {"jsonrpc": "2.0", "id": 3, "result": {"task": {"id": "task-2",\n'
                                   b'data: "metadata": {"refresh_token": "sse-refresh-13"}}}}\n\n')),
        Exchange(number=1, webhook=True, title="webhook", request=Request(
            method="POST", target="/hooks?token=push-query-token-7",
            headers=[("Host", "127.0.0.1:9"), ("Content-Type", "application/json"),
                     ("X-A2A-Notification-Token", "webhook-token-16")],
            body=b'{"statusUpdate": {"taskId": "task-1", "status": {"state": "TASK_STATE_COMPLETED"}}}'),
            response=Response(status=200, reason="OK")),
    ]
    return Capture(exchanges=exchanges)


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("planted") / "planted.http"
    path.write_bytes(capture_bytes(_session()))
    text = path.read_text()
    assert all(secret in text for secret in PLANTED)
    return path


def _leaks(text: str) -> set[str]:
    return {secret for secret in PLANTED if secret in text}


def _outputs(capture: Path, tmp: Path, *extra: str) -> dict[str, str]:
    outputs = {}
    for form in ("text", "json", "http"):
        outputs[f"show {form}"] = run("show", "--format", form, *extra, str(capture)).stdout.decode()
    for form in ("text", "json", "sarif", "junit"):
        outputs[f"analyze {form}"] = run("analyze", "--fail-on", "never", "--format", form, *extra,
                                         str(capture)).stdout.decode()
    for name, args in {"report.html": [], "report.md": [], "whole.html": ["--whole"], "whole.md": ["--whole"],
                       "summary.md": ["--summary"], "listings.md": ["--listings"]}.items():
        target = tmp / name
        assert run("report", *args, *extra, str(capture), "-o", str(target)).returncode == 0
        outputs[f"report {name}"] = target.read_text()
    target = tmp / "tidy.http"
    assert run("tidy", *extra, str(capture), "-o", str(target)).returncode == 0
    outputs["tidy"] = target.read_text()
    for suffix in ("har", "mitm", "http"):
        target = tmp / f"converted.{suffix}"
        assert run("convert", *extra, str(capture), "-o", str(target)).returncode == 0
        outputs[f"convert {suffix}"] = target.read_bytes().decode("utf-8", "replace")
    return outputs


def test_every_output_masks_by_default_and_no_redact_shows(planted, tmp_path):
    masked = _outputs(planted, tmp_path)
    leaks = {name: sorted(_leaks(text)) for name, text in masked.items() if _leaks(text)}
    assert not leaks
    for name in ("show http", "report whole.md", "tidy", "convert http"):
        for near in NEAR_MISSES:
            assert near.split(":")[0] in masked[name], (name, near)
    shown = _outputs(planted, tmp_path, "--no-redact")
    assert _leaks(shown["show http"]) == PLANTED and _leaks(shown["convert http"]) == PLANTED


def test_har_and_flow_inputs_are_masked_too(planted, tmp_path):
    for suffix in ("har", "mitm"):
        foreign = tmp_path / f"foreign.{suffix}"
        assert run("convert", "--no-redact", str(planted), "-o", str(foreign)).returncode == 0
        outputs = {form: run("show", "--format", form, str(foreign)).stdout.decode() for form in ("text", "http")}
        outputs["report"] = run("report", "--whole", str(foreign), "-o", str(tmp_path / "r.md")).stderr.decode() \
            + (tmp_path / "r.md").read_text()
        assert not {name: _leaks(text) for name, text in outputs.items() if _leaks(text)}, suffix


def test_scan_finds_every_planted_secret_and_none_once_masked(planted, tmp_path):
    result = run("scan", str(planted))
    assert result.returncode == 1
    lines = result.stdout.decode().splitlines()
    assert not _leaks(result.stdout.decode() + result.stderr.decode())  # places and kinds, never values
    places = "\n".join(lines)
    for expected in ("exchange 2: request header X-Authorization (by name)",
                     "exchange 2: request header X-Goog-Iap-Jwt-Assertion (by name)",
                     "exchange 2: request query client_secret", "exchange 2: request query id_token",
                     "request body $.params.configuration.taskPushNotificationConfig.token (by name)",
                     "request body $.params.configuration.taskPushNotificationConfig.url (url password)",
                     "request body $.params.configuration.taskPushNotificationConfig.url (query token)",
                     "request body $.params.message.metadata.Authorization (by name)",
                     "request body $.params.message.metadata.refresh_token (by name)",
                     "request body $.params.message.metadata.scheme.value (by name)",
                     "response body $.result.task.metadata.echo (query token)",
                     "exchange 3: request form password (by name)",
                     "exchange 3: response body text (bearer credentials)",
                     "exchange 4: response body (not gzip as labelled) (undecodable body)",
                     "exchange 5: response body $.result.task.metadata.refresh_token (by name)",
                     "exchange 1: response body $.securitySchemes.oauth.oauth2SecurityScheme.flows.clientCredentials"
                     ".tokenUrl (query client_secret)",
                     "exchange webhook 1: webhook request header X-A2A-Notification-Token (by name)",
                     "exchange webhook 1: webhook request query token"):
        assert expected in places, expected
    assert all(line.startswith(f"{planted}:") for line in lines)
    masked = tmp_path / "masked.http"
    assert run("convert", str(planted), "-o", str(masked)).returncode == 0
    clean = run("scan", str(masked))
    assert clean.returncode == 0 and clean.stdout == b"", clean.stdout
    assert b"no secrets found" in clean.stderr


def test_scan_and_outputs_take_the_policy_options(tmp_path):
    capture = Capture(exchanges=[Exchange(number=1, request=Request(
        method="POST", target="/x", headers=[("Host", "h"), ("X-Tenant-Pin", "4242-pin"), ("X-Hub-Signature-256", "s")],
        body=b'{"note": "acme_abcd1234"}'))])
    path = tmp_path / "c.http"
    path.write_bytes(capture_bytes(capture))
    assert run("scan", str(path), "--keep-name", "x-hub-signature-256").returncode == 0
    found = run("scan", str(path), "--redact-name", "x-tenant-pin", "--redact-pattern", "acme_[a-z0-9]{8}",
                "--keep-name", "x-hub-signature-256").stdout.decode()
    assert "header X-Tenant-Pin (by name)" in found and "(pattern)" in found and "Signature" not in found
    shown = run("show", "--format", "http", "--redact-name", "x-tenant-pin", str(path)).stdout
    assert b"4242-pin" not in shown
    bad = run("scan", str(path), "--redact-pattern", "(")
    assert bad.returncode == 2 and b"--redact-pattern" in bad.stderr and len(bad.stderr.splitlines()) == 1


def test_a_compressed_secret_is_found_and_an_honest_gzip_body_kept(tmp_path):
    body = gzip.compress(b'{"result": {"token": "real-gzip-secret"}}')
    capture = Capture(exchanges=[Exchange(number=1, request=Request(method="GET", target="/x", headers=[("Host", "h")]),
                                          response=Response(status=200, headers=[("Content-Encoding", "gzip")],
                                                            body=body))])
    path = tmp_path / "gz.http"
    path.write_bytes(capture_bytes(capture))
    assert "response body $.result.token (by name)" in run("scan", str(path)).stdout.decode()
    assert b"real-gzip-secret" not in run("show", "--format", "http", str(path)).stdout


def test_what_findings_quote_is_masked_in_analyze_and_check(tmp_path):
    location = "https://cards.example.com/agent-card.json?token=planted-location-token"
    capture = Capture(exchanges=[Exchange(number=1, title="discover", request=Request(
        method="GET", target="/.well-known/agent-card.json", headers=[("Host", "127.0.0.1:41241")]),
        response=Response(status=302, reason="Found", headers=[("Location", location)]))])
    path = tmp_path / "redirect.http"
    path.write_bytes(capture_bytes(capture))
    shown = run("analyze", "--fail-on", "never", "--no-redact", str(path)).stdout.decode()
    assert "planted-location-token" in shown  # the finding quotes the Location header
    for form in ("text", "json", "sarif", "junit"):
        text = run("analyze", "--fail-on", "never", "--format", form, str(path)).stdout.decode()
        assert "card-redirect" in text and "planted-location-token" not in text, form
        assert "?token=[redacted: query token, sha256:" in text, form
    checked = run("check", str(path), "--baseline", str(tmp_path / "none.json"), "--fail-on", "info")
    assert b"card-redirect" in checked.stdout and b"planted-location-token" not in checked.stdout


def test_a_word_masked_before_a_secret_was_remembered_is_masked_again_after():
    """Masker.words masks each distinct word once, while the secrets remembered stay the same: a
    secret found since (in an exchange, another word) is masked in a word it masked before."""
    from a2a_capture.redact.mask import Masker

    masker = Masker(b"k" * 16)
    said = "the agent at http://a:1/ answered tok-ABCDEFGH-1234 again"
    assert masker.words(said) == said and masker.words(said) == said  # no secret known, none of its shape
    masker.redactor.marker("query token", "tok-ABCDEFGH-1234")  # remembered, as masking an exchange does
    masked = masker.words(said)
    assert "tok-ABCDEFGH-1234" not in masked and masked == masker.text(said)
    bearer = "sent Authorization: Bearer abcdefghijklmnopqrstuvwx1 to it"
    assert masker.words(bearer) == masker.text(bearer) != bearer  # found by shape, then remembered
    assert masker.words(said) == masked
