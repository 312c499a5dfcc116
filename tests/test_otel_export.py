"""`a2a-capture otel`: captures as traces in a real OTLP/HTTP receiver, and as an OTLP JSON file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.capture import capture_bytes, read_capture
from a2a_capture.otel.shape import after_ns, nanoseconds
from tests.cli import COMMAND, process_env, run
from tests.conftest import ROOT
from tests.otlp_receiver import attributes, receiver

CAPTURES = sorted(str(path) for path in (ROOT / "captures").glob("*.http"))
#: span kinds and status codes as OTLP numbers them
INTERNAL, SERVER, CLIENT = 1, 2, 3
ERROR = 2


def _exported(*args: str):
    with receiver() as (url, received):
        done = run("otel", *args, "--endpoint", url)
        assert done.returncode == 0, done.stderr
    return received, done.stderr.decode()


def _by_exchange(spans) -> dict[tuple[str, str], object]:
    return {(attributes(s)["a2a_capture.file"], attributes(s)["a2a_capture.exchange"]): s
            for s in spans if "a2a_capture.exchange" in attributes(s)}


def test_every_exchange_is_a_span_with_the_captures_own_times_under_its_files_root():
    received, said = _exported(*CAPTURES)
    roots = [span for span in received.spans if span.name == "a2a-capture session"]
    spans = _by_exchange(received.spans)
    exchanges = {(file, e.label): e for file in CAPTURES for e in read_capture(file).exchanges}
    assert set(spans) == set(exchanges)
    assert len(roots) == len(CAPTURES) and len(received.spans) == len(exchanges) + len(CAPTURES)
    assert f"exported {len(received.spans)} spans ({len(exchanges)} exchanges" in said
    root_of = {attributes(root)["a2a_capture.file"]: root for root in roots}
    for (file, label), span in spans.items():
        exchange = exchanges[(file, label)]
        assert span.start_time_unix_nano == nanoseconds(exchange.meta.start)
        assert span.end_time_unix_nano == nanoseconds(exchange.meta.end)
        root = root_of[file]
        assert (span.trace_id, span.parent_span_id) == (root.trace_id, root.span_id)
        assert root.start_time_unix_nano <= span.start_time_unix_nano <= span.end_time_unix_nano <= \
            root.end_time_unix_nano
        assert span.kind == (SERVER if exchange.webhook else CLIENT)
    assert all(not root.parent_span_id and root.kind == INTERNAL for root in roots)


def test_spans_are_named_and_attributed_after_the_draft_a2a_conventions():
    received, _ = _exported(str(ROOT / "captures" / "03-streaming.http"))
    spans = _by_exchange(received.spans)
    file = str(ROOT / "captures" / "03-streaming.http")
    card, stream = spans[(file, "1")], spans[(file, "2")]
    assert card.name == "GET /.well-known/agent-card.json"
    assert stream.name == "SendStreamingMessage"
    values = attributes(stream)
    assert values["a2a.method.name"] == "SendStreamingMessage"
    assert values["a2a.message.id"] == "stream-1"
    assert values["a2a.protocol.version"] == "1.0"
    assert values["a2a.task.state"] == "TASK_STATE_COMPLETED"
    assert values["a2a.task.id"] and values["gen_ai.conversation.id"]
    assert values["gen_ai.agent.name"] == "test-runner"  # from the card the client held
    assert (values["server.address"], values["server.port"]) == ("127.0.0.1", 41241)  # the agent behind the proxy
    assert values["http.response.status_code"] == 200
    assert values["a2a_capture.binding"] == "JSONRPC"
    assert values["a2a_capture.line"] > 1
    # each SSE frame an event at its arrival time, with its kind and the task's state
    exchange = read_capture(file).exchanges[1]
    frames = [event for event in stream.events if event.name == "a2a_capture.stream.frame"]
    start = nanoseconds(exchange.meta.start)
    assert [event.time_unix_nano for event in frames] == [after_ns(start, at) for at in
                                                         exchange.response.event_times]
    kinds = [attributes(event).get("a2a_capture.frame.kind") for event in frames]
    assert kinds[0] == "task" and "statusUpdate" in kinds and "artifactUpdate" in kinds
    assert attributes(frames[-1])["a2a.task.state"] == "TASK_STATE_COMPLETED"
    resource = received.resources[0]
    assert resource["service.name"] == "a2a-capture"


def test_each_finding_is_an_event_on_its_exchange_and_failed_calls_have_an_error_status():
    received, _ = _exported(*CAPTURES)
    analysis = analyze(CAPTURES)
    events = [(attributes(span)["a2a_capture.file"], attributes(span)["a2a_capture.exchange"], attributes(event))
              for span in received.spans for event in span.events if event.name == "a2a_capture.finding"]
    assert sorted((file, label, e["a2a_capture.finding.rule"]) for file, label, e in events) == \
        sorted((f.file, f.exchange, f.rule) for f in analysis.findings)
    by_place = {(f.file, f.exchange, f.rule): f for f in analysis.findings}
    for file, label, event in events:
        finding = by_place[(file, label, event["a2a_capture.finding.rule"])]
        assert event["a2a_capture.finding.severity"] == finding.severity.value
        assert event["a2a_capture.finding.outcome"] == finding.outcome
        assert event["a2a_capture.finding.message"] == finding.message
        assert event["a2a_capture.finding.spec"] == finding.spec
        assert event.get("a2a_capture.finding.related", []) == finding.related
    mistakes = _by_exchange(received.spans)
    file = str(ROOT / "captures" / "09-mistakes.http")
    unsupported = mistakes[(file, "4")]  # message/send to a 1.0 agent: -32601
    assert unsupported.status.code == ERROR
    assert attributes(unsupported)["error.type"] == "-32601"
    assert mistakes[(file, "1")].status.code == ERROR and attributes(mistakes[(file, "1")])["error.type"] == "404"
    assert mistakes[(file, "5")].status.code != ERROR
    root = next(s for s in received.spans if s.name == "a2a-capture session"
                and attributes(s)["a2a_capture.file"] == file)
    wasted = {f.exchange for f in analysis.findings if f.file == file and f.outcome == "wasted"}
    assert attributes(root)["a2a_capture.wasted_round_trips"] == len(wasted)
    assert attributes(root)["a2a_capture.findings"] == sum(1 for f in analysis.findings if f.file == file)


def test_a_webhook_delivery_links_to_the_spans_of_its_task():
    received, _ = _exported(str(ROOT / "captures" / "07-push-webhook.http"))
    spans = list(received.spans)
    webhooks = [span for span in spans if attributes(span).get("a2a_capture.webhook")]
    assert len(webhooks) == 6
    by_id = {span.span_id: span for span in spans}
    for webhook in webhooks:
        task = attributes(webhook)["a2a.task.id"]
        assert webhook.name.startswith("webhook ")
        assert webhook.links
        for link in webhook.links:
            linked = by_id[link.span_id]
            assert attributes(linked)["a2a.task.id"] == task and not attributes(linked).get("a2a_capture.webhook")


def test_a_call_that_sent_a_traceparent_joins_the_clients_trace(tmp_path):
    capture = read_capture(ROOT / "captures" / "02-blocking-send.http")
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    send = capture.exchanges[1]
    send.request.headers.append(("traceparent", f"00-{trace_id}-{parent_id}-01"))
    path = tmp_path / "traced.http"
    path.write_bytes(capture_bytes(capture))
    received, _ = _exported(str(path))
    spans = _by_exchange(received.spans)
    joined, other = spans[(str(path), send.label)], spans[(str(path), "1")]
    assert (joined.trace_id.hex(), joined.parent_span_id.hex()) == (trace_id, parent_id)
    root = next(s for s in received.spans if s.name == "a2a-capture session")
    assert (other.trace_id, other.parent_span_id) == (root.trace_id, root.span_id)


def test_secrets_stay_masked_and_bodies_come_only_when_asked(tmp_path):
    capture = read_capture(ROOT / "captures" / "02-blocking-send.http")
    send = capture.exchanges[1]
    secret = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
    send.request.body = send.request.body.replace(b'"params":{', f'"params":{{"apiKey":"{secret}",'.encode())
    send.request.headers = [(k, str(len(send.request.body)) if k.lower() == "content-length" else v)
                            for k, v in send.request.headers]
    path = tmp_path / "secret.http"
    path.write_bytes(capture_bytes(capture))
    plain, _ = _exported(str(path))
    assert not any("a2a_capture.request.body" in attributes(s) for s in plain.spans)
    with_bodies, _ = _exported(str(path), "--bodies", "4000")
    body = attributes(_by_exchange(with_bodies.spans)[(str(path), send.label)])["a2a_capture.request.body"]
    assert '"apiKey":' in body and secret not in body
    assert all(secret not in str(attributes(span)) for span in with_bodies.spans)
    cut, _ = _exported(str(path), "--bodies", "20")
    assert attributes(_by_exchange(cut.spans)[(str(path), send.label)])["a2a_capture.request.body"].endswith("…")


def test_a_json_file_holds_the_same_spans_as_otlp_json(tmp_path):
    output = tmp_path / "traces.json"
    done = run("otel", *CAPTURES, "-o", str(output))
    assert done.returncode == 0, done.stderr
    spans = []
    for line in output.read_text().splitlines():
        request = json.loads(line)  # each line one ExportTraceServiceRequest
        spans += [span for resource in request["resourceSpans"] for scope in resource["scopeSpans"]
                  for span in scope["spans"]]
    exchanges = sum(len(read_capture(file).exchanges) for file in CAPTURES)
    assert len(spans) == exchanges + len(CAPTURES)
    ids = {span["spanId"] for span in spans}
    for span in spans:
        assert len(span["traceId"]) == 32 and int(span["traceId"], 16)  # hex, as OTLP/JSON has them
        assert len(span["spanId"]) == 16
        assert span.get("parentSpanId", next(iter(ids))) in ids
        assert int(span["startTimeUnixNano"]) <= int(span["endTimeUnixNano"])
    stream = next(s for s in spans if s["name"] == "SendStreamingMessage")
    assert stream["kind"] == CLIENT
    first = read_capture(CAPTURES[2]).exchanges[1]
    assert int(stream["startTimeUnixNano"]) == nanoseconds(first.meta.start)


def test_a_har_file_is_exported_like_a_capture(tmp_path):
    har = tmp_path / "session.har"
    assert run("convert", CAPTURES[1], "-o", str(har)).returncode == 0
    received, _ = _exported(str(har))
    assert [span.name for span in received.spans if span.name != "a2a-capture session"] == \
        ["GET /.well-known/agent-card.json", "SendMessage"]


@pytest.mark.parametrize("args, words", [
    ((), "give one of --endpoint URL or -o FILE"),
    (("--endpoint", "127.0.0.1:4318"), "should be an http:// or https:// URL"),
])
def test_usage_mistakes_are_one_line(args, words):
    done = run("otel", CAPTURES[0], *args)
    assert done.returncode == 2
    assert words in done.stderr.decode() and len(done.stderr.decode().strip().splitlines()) == 1


def test_a_collector_that_is_not_there_is_one_line(tmp_path):
    with receiver() as (url, _):
        pass  # closed again: nothing listens there now
    done = run("otel", CAPTURES[0], "--endpoint", url, "--timeout", "1")
    assert done.returncode == 2
    message = done.stderr.decode().strip()
    assert len(message.splitlines()) == 1 and "did not reach" in message and "Traceback" not in message


def test_without_the_extra_the_command_says_how_to_install_it():
    hide = ("import sys; sys.modules['opentelemetry'] = None; "
            "from a2a_capture.cli import main; sys.argv = ['a2a-capture', 'otel', sys.argv[1], '-o', 'x.json']; main()")
    done = subprocess.run([sys.executable, "-c", hide, CAPTURES[0]], capture_output=True, text=True,
                          env=process_env(), cwd=str(Path(ROOT)), timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == ("a2a-capture: error: OpenTelemetry export needs the otel extra: pip install "
                                   "'a2a-capture[otel]' (opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http)")
    assert COMMAND  # the checkout's own command, not one on PATH


def test_a_live_export_drops_spans_it_cannot_queue_and_says_how_many(tmp_path):
    from a2a_capture.otel.live import LiveExport
    from a2a_capture.record.sink import CaptureSink

    exchanges = read_capture(CAPTURES[2]).exchanges
    path = tmp_path / "growing.http"
    sink = CaptureSink(path)
    notes: list[str] = []
    with receiver(delay=0.2) as (url, received):  # slower than the traffic
        live = LiveExport(str(path), url, notes.append, max_queue=2)
        for round_ in range(20):
            for exchange in exchanges:
                sink.write(exchange.model_copy(update={"number": round_ * len(exchanges) + exchange.number}))
            live.poll()
        sink.close()
        live.poll(final=True)
        sent, dropped = live.processor.sent, live.processor.dropped
        assert received.wait_for(lambda spans: len(spans) >= sent, timeout=15)
    emitted = 20 * len(exchanges) + 1  # and the root
    assert dropped > 0 and sent > 0 and sent + dropped == emitted
    assert len(received.spans) == sent
    assert notes[0].startswith(f"otel: the collector at {url} does not keep up: spans are being dropped")
    assert notes[-1] == (f"otel: {sent} spans exported to {url}; {dropped} dropped: the collector did not keep up "
                         "and the queue of 2 spans was full")


def test_exchanges_without_recorded_times_are_laid_out_one_after_another(tmp_path):
    from tests import builders

    path = builders.write(tmp_path, builders.fetch_card(1),
                          builders.rpc(2, "SendMessage", {"message": builders.message()},
                                       result={"task": builders.task("t-1", "TASK_STATE_COMPLETED")}))
    received, _ = _exported(str(path))
    spans = _by_exchange(received.spans)
    first, second = spans[(str(path), "1")], spans[(str(path), "2")]
    assert [attributes(span)["a2a_capture.timed"] for span in (first, second)] == [False, False]
    assert first.end_time_unix_nano - first.start_time_unix_nano == 1_000_000
    assert second.start_time_unix_nano == first.end_time_unix_nano
    assert attributes(second)["gen_ai.conversation.id"] == "ctx-1"  # from the answer: the request had none
    assert attributes(second)["a2a.task.id"] == "t-1"


def test_a_live_export_runs_nicer_than_the_recording_and_a_bug_in_it_stops_only_the_export(tmp_path, monkeypatch):
    import os
    import threading

    from a2a_capture.otel.live import NICENESS, LiveExport
    from a2a_capture.record.sink import CaptureSink

    path = tmp_path / "growing.http"
    sink = CaptureSink(path)
    notes: list[str] = []
    with receiver() as (url, received):
        live = LiveExport(str(path), url, notes.append)
        seen: dict[str, int] = {}

        def broken_plan(exchange):  # what a bug in the planner would do, on the export's own thread
            seen["niceness"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
            raise RuntimeError("a bug in the planner")

        monkeypatch.setattr(live.planner, "plan", broken_plan)
        for exchange in read_capture(CAPTURES[2]).exchanges:
            sink.write(exchange)
        sink.close()
        live.poll(final=True)  # returns: the recording's loop is never taken down by the export
        assert received.wait_for(lambda spans: any(s.name == "a2a-capture session" for s in spans), timeout=15)
    assert seen["niceness"] >= min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICENESS)
    assert notes[0] == "otel: export stopped: RuntimeError: a bug in the planner (the recording goes on)"
    assert notes[-1].startswith("otel: 1 spans exported to")  # the root still ends, with what was exported


def test_a_grpc_streams_messages_are_span_events_at_their_arrival_times():
    from a2a.types import a2a_pb2  # a2a-sdk, a test dependency: the grpc extra's types

    from a2a_capture.otel.planner import Planner
    from tests import grpc_builders as gb

    status = a2a_pb2.TaskStatusUpdateEvent
    streamed = [a2a_pb2.StreamResponse(task=gb.task("t-2", "TASK_STATE_WORKING")),
                a2a_pb2.StreamResponse(status_update=status(task_id="t-2", context_id="ctx-1",
                                                            status=a2a_pb2.TaskStatus(state="TASK_STATE_COMPLETED")))]
    exchange = gb.call(1, "SendStreamingMessage", gb.send(), streamed, times=[0.25, 1.5])
    exchange.meta.start, exchange.meta.end = "2026-12-03T10:00:00.000000Z", "2026-12-03T10:00:02.000000Z"
    planner = Planner(None, ["grpc.http"])
    planner.start_file("grpc.http")
    plan = planner.plan(exchange)
    frames = [event for event in plan.events if event.name == "a2a_capture.stream.frame"]
    start = nanoseconds(exchange.meta.start)
    assert [(event.time_ns - start) // 1_000_000 for event in frames] == [250, 1500]
    assert [event.attributes for event in frames] == [
        {"a2a_capture.frame.index": 0, "a2a_capture.frame.kind": "task", "a2a.task.id": "t-2",
         "a2a.task.state": "TASK_STATE_WORKING"},
        {"a2a_capture.frame.index": 1, "a2a_capture.frame.kind": "statusUpdate", "a2a.task.id": "t-2",
         "a2a.task.state": "TASK_STATE_COMPLETED"}]
    assert plan.attributes["gen_ai.conversation.id"] == "ctx-1"
