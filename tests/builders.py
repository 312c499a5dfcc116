"""Small builders for hand-made test captures, in the kit's layout."""

from __future__ import annotations

import json
from pathlib import Path

HOST = "localhost:9001"
ORIGIN = f"http://{HOST}"


def card(**overrides) -> dict:
    """A valid 1.0 card for an agent at localhost:9001 with one JSON-RPC interface at /rpc."""
    data = {
        "name": "probe",
        "description": "An agent for tests.",
        "supportedInterfaces": [{"url": f"{ORIGIN}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "version": "1.0.0",
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "Echoes.", "tags": ["test"]}],
    }
    for key, value in overrides.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def block(number: int, title: str, request: str, response: str | None = None) -> str:
    text = f"### {number} · {title}\n{request}"
    if response is not None:
        text += f"\n\n{response}"
    return text


def http_request(method: str, path: str, headers: list[str], body: object = None, host: str = HOST) -> str:
    head = [f"{method} {path} HTTP/1.1", f"Host: {host}", *headers]
    if body is None:
        return "\n".join(head) + "\n"
    text = body if isinstance(body, str) else json.dumps(body, indent=2)
    return "\n".join(head) + "\n\n" + text


def http_response(status: int = 200, body: object = None, headers: list[str] | None = None, reason: str = "OK",
                  content_type: str = "application/json") -> str:
    head = [f"HTTP/1.1 {status} {reason}", f"Content-Type: {content_type}", *(headers or [])]
    if body is None:
        return "\n".join(head) + "\n"
    text = body if isinstance(body, str) else json.dumps(body, indent=2)
    return "\n".join(head) + "\n\n" + text


def fetch_card(number: int, data: dict | None = None, path: str = "/.well-known/agent-card.json",
               request_headers: list[str] | None = None, response_headers: list[str] | None = None,
               status: int = 200) -> str:
    body = (data if data is not None else card()) if status == 200 else None
    return block(number, "discover", http_request("GET", path, request_headers or ["Accept: application/json"]),
                 http_response(status, body, response_headers, reason="OK" if status == 200 else "Not Found"))


def rpc(number: int, method: str, params: dict, *, result: object = None, error: dict | None = None,
        headers: list[str] | None = None, path: str = "/rpc", host: str = HOST, events: list | None = None,
        notes: list[str] | None = None) -> str:
    request = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
    head = headers if headers is not None else ["Content-Type: application/json", "A2A-Version: 1.0"]
    text = http_request("POST", path, head, request, host=host)
    if notes:
        text = "".join(f"# {note}\n" for note in notes) + text
    if events is not None:
        frames = "\n\n".join("data: " + json.dumps({"jsonrpc": "2.0", "id": number, "result": e}) for e in events)
        response = http_response(200, frames, content_type="text/event-stream")
    else:
        answer = {"jsonrpc": "2.0", "id": number}
        answer.update({"error": error} if error is not None else {"result": result if result is not None else {}})
        response = http_response(200, answer)
    return block(number, method, text, response)


def task(task_id: str, state: str) -> dict:
    return {"id": task_id, "contextId": "ctx-1", "status": {"state": state}}


def message(text: str = "hello", task_id: str | None = None, message_id: str = "m-1", parts=None) -> dict:
    data = {"messageId": message_id, "role": "ROLE_USER", "parts": parts or [{"text": text}]}
    if task_id:
        data["taskId"] = task_id
    return data


def error(code: int, reason: str | None = None, message_text: str = "error") -> dict:
    data = {"code": code, "message": message_text}
    if reason:
        data["data"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
                         "domain": "a2a-protocol.org"}]
    return data


def write(tmp_path: Path, *blocks: str, name: str = "case.http") -> Path:
    path = tmp_path / name
    path.write_text("\n\n".join(b.rstrip("\n") for b in blocks) + "\n")
    return path


def analyze_everything(capture, directory: Path) -> None:
    """Write a capture, then analyze it and produce every output: none of it may raise."""
    from a2a_capture.analyze.engine import analyze
    from a2a_capture.capture import capture_bytes
    from a2a_capture.report import render, walkthrough
    from a2a_capture.report.machine import junit, sarif, text, to_json

    path = directory / "generated.http"
    path.write_bytes(capture_bytes(capture))
    analysis = analyze([path], facts=True)
    assert len(analysis.calls) == len(capture.exchanges)
    for output in (text, to_json, sarif, junit):
        assert output(analysis)
    model = walkthrough.build([str(path)])
    assert render.render(model, "html") and render.render(model, "md")
