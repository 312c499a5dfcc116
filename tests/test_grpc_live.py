"""Live: an a2a-sdk 1.3.0 agent over gRPC and the a2a-sdk gRPC client, through the recorder.

Plaintext HTTP/2 (h2c) on 127.0.0.1, reverse mode: the client reads the card through one
listener, and the card's gRPC interface (`host:port`) is pointed at the other. The client
makes three mistakes on purpose: a push config on an agent without push, a poll of a task
it saw finish, and a call without `a2a-version`.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import a2a_pb2, a2a_pb2_grpc

from a2a_capture.capture import capture_bytes, read_capture
from a2a_capture.record.process import free_port
from tests.grpc_agent import grpc_agent
from tests.live import Recorder
from tests.test_cli_show import run
from tests.test_report import open_page  # the browser fixture is in conftest.py

pytestmark = pytest.mark.live
SECRET = "push-secret-42"


def _run(coroutine):
    """Run a client in a thread of its own: the browser's driver holds this thread's event loop."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(120)


async def stream_then_poll(client) -> str:
    """Stream a message to the end, then poll the task the stream already said completed; its id."""
    request = a2a_pb2.SendMessageRequest(message=a2a_pb2.Message(
        message_id="m-1", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="run the tests")]))
    task_id = ""
    async for event in client.send_message(request):
        task_id = task_id or event.task.id or event.status_update.task_id
    await client.get_task(a2a_pb2.GetTaskRequest(id=task_id))
    return task_id


async def _session(card_url: str) -> str:
    """What a careless client does; returns the id of the task it ran."""
    config = ClientConfig(grpc_channel_factory=grpc.aio.insecure_channel, supported_protocol_bindings=["GRPC"])
    client = await create_client(card_url, config)
    task_id = await stream_then_poll(client)
    with pytest.raises(Exception, match=r"(?i)push"):
        await client.create_task_push_notification_config(a2a_pb2.TaskPushNotificationConfig(
            task_id=task_id, url="http://127.0.0.1:9/hook", token=SECRET))
    interface = client._card.supported_interfaces[0].url  # the listener, after the recorder's rewrite
    async with grpc.aio.insecure_channel(interface) as channel:  # no a2a-version metadata
        await a2a_pb2_grpc.A2AServiceStub(channel).GetTask(a2a_pb2.GetTaskRequest(id=task_id))
    await client.close()
    return task_id


def test_grpc_session_is_recorded_read_analyzed_and_reported(tmp_path, browser):
    output = tmp_path / "grpc.http"
    card_listener, grpc_listener = free_port(), free_port()
    with grpc_agent(push=False) as (card_url, grpc_port):
        with Recorder(output, [(card_url, card_listener), (f"http://127.0.0.1:{grpc_port}", grpc_listener)]):
            task_id = _run(_session(f"http://127.0.0.1:{card_listener}"))

    data = output.read_bytes()
    assert capture_bytes(read_capture(output)) == data  # reads back byte for byte
    assert SECRET.encode() not in data and b"[redacted: token" in data
    capture = read_capture(output)
    card, stream, poll, push, bare = capture.exchanges
    assert poll.title == "GetTask" and bare.request.header("a2a-version") is None
    assert f'"127.0.0.1:{grpc_listener}"'.encode() in card.response.body  # host:port rewritten
    assert f"interface 127.0.0.1:{grpc_port} to 127.0.0.1:{grpc_listener}" in " ".join(card.notes)
    assert stream.request.http_version == "2" and len(stream.response.event_times) >= 3
    assert stream.response.trailers[0] == ("grpc-status", "0")
    assert push.response.grpc_value("grpc-status") == "9"  # FAILED_PRECONDITION, trailers-only

    shown = run("show", str(output))
    assert shown.returncode == 0, shown.stderr
    titles = [line.split()[1] for line in shown.stdout.decode().splitlines()[1:6]]
    assert titles == ["discover", "SendStreamingMessage", "GetTask", "CreateTaskPushNotificationConfig", "GetTask"]

    analyzed = run("analyze", str(output), "--format", "json")
    findings = {(f["rule"], f["exchange"]) for f in json.loads(analyzed.stdout)["findings"]}
    assert {("poll-terminal", "3"), ("capability-push", "4"), ("version-header-missing", "5")} <= findings, findings
    assert not any(rule in ("interface-undeclared", "malformed-request") for rule, _ in findings), findings

    report = tmp_path / "report.html"
    assert run("report", str(output), "-o", str(report)).returncode == 0
    page, seen = open_page(browser, report)
    assert seen["console"] == []
    text = page.inner_text("body")
    for rule in ("poll-terminal", "capability-push", "version-header-missing"):
        assert rule in text
    assert "SendStreamingMessage" in text and task_id[:8] in text
    # each exchange listed as the capture shows it: messages as JSON, the status by name
    assert "grpc message 1 · lf.a2a.v1.TaskPushNotificationConfig" in text and "grpc bytes …" in text
    assert "grpc status · FAILED_PRECONDITION (9) · PUSH_NOTIFICATION_NOT_SUPPORTED" in text
    assert '"state": "TASK_STATE_COMPLETED"' in text and SECRET not in text
    page.close()


def test_a_tls_grpc_agent_is_recorded_with_its_certificate_trusted(tmp_path):
    """The client speaks plaintext to the recorder; the recorder speaks TLS to the agent and
    trusts the agent's self-signed certificate as `record --upstream-trust` tells it."""
    from a2a_capture.record import runner
    from tests.live import self_signed

    key, cert = self_signed(tmp_path)
    output, listener = tmp_path / "tls.http", free_port()
    trust = runner.command(str(output), [], None, mitmdump="mitmdump", upstream_trust=str(cert))[-2:]
    assert trust == ["--set", f"ssl_verify_upstream_trusted_ca={cert}"]

    async def one_call(port: int) -> int:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            answer = await a2a_pb2_grpc.A2AServiceStub(channel).SendMessage(a2a_pb2.SendMessageRequest(
                message=a2a_pb2.Message(message_id="m-1", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="go")])),
                metadata=[("a2a-version", "1.0")])
            return answer.task.status.state

    with grpc_agent(tls=(key, cert)) as (_, grpc_port):
        with Recorder(output, [(f"https://127.0.0.1:{grpc_port}", listener)], extra=trust):
            assert _run(one_call(listener)) == a2a_pb2.TASK_STATE_COMPLETED
    (exchange,) = read_capture(output).exchanges
    assert f"over TLS to 127.0.0.1:{grpc_port}" in exchange.notes
    assert exchange.title == "SendMessage" and exchange.response.trailers[0] == ("grpc-status", "0")
    assert capture_bytes(read_capture(output)) == output.read_bytes()
