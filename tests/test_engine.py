"""The engine: one exchange at a time, each rule called only for the operations it declares."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from a2a_capture.a2a.decode import decode
from a2a_capture.analyze.engine import Analyzer, analyze
from a2a_capture.analyze.findings import RULES
from a2a_capture.analyze.findings import rule as register
from a2a_capture.capture import read_capture
from tests.builders import fetch_card, rpc, write
from tests.test_rules import CASES, DONE, SEND


def test_feed_gives_each_exchanges_findings_as_it_comes(tmp_path):
    blocks, _, _ = CASES["poll-terminal"]
    path = write(tmp_path, *blocks)
    analyzer = Analyzer()
    analyzer.start_file(str(path))
    per_exchange = [[f.rule for f in analyzer.feed(exchange)] for exchange in read_capture(path).exchanges]
    assert per_exchange == [[], [], ["poll-terminal"]]
    assert analyzer.finish().findings == analyze([path]).findings


def test_every_rule_declares_the_calls_it_judges():
    for rule in RULES.values():
        assert rule.on is None or rule.on, rule.id
    assert RULES["poll-terminal"].on == {"GetTask"}
    assert RULES["card-refetch"].applies_to(None, "card") and not RULES["card-refetch"].applies_to("GetTask", "jsonrpc")
    assert RULES["auth-missing"].applies_to("GetTask", "rest") and not RULES["auth-missing"].applies_to(None, "card")


def test_a_rule_is_called_only_for_its_operations(tmp_path, monkeypatch):
    called = []
    rule = RULES["poll-terminal"]
    monkeypatch.setitem(RULES, "poll-terminal", dataclasses.replace(
        rule, check=lambda call, session: called.append(call.operation or call.kind) or ()))
    from a2a_capture.analyze.config import Config
    analyze([write(tmp_path, fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": DONE}),
                   rpc(3, "GetTask", {"id": "t-1"}, result=DONE))], Config(select=("poll-terminal",)))
    assert called == ["GetTask"]


def test_a_rule_that_needs_an_error_or_notes_is_called_only_for_calls_that_carry_them(tmp_path, monkeypatch):
    from a2a_capture.analyze.config import Config
    called = []
    for rule_id in ("task-unknown", "unrecorded-origin"):
        monkeypatch.setitem(RULES, rule_id, dataclasses.replace(
            RULES[rule_id], check=lambda call, session, rule_id=rule_id: called.append((rule_id, call.label)) or ()))
    analyze([write(tmp_path, rpc(1, "GetTask", {"id": "t-1"}, result=DONE),
                   rpc(2, "GetTask", {"id": "t-2"}, error={"code": -32001, "message": "Task not found"}),
                   rpc(3, "GetTask", {"id": "t-1"}, result=DONE, notes=["a note"]))],
            Config(select={"task-unknown", "unrecorded-origin"}))
    assert called == [("task-unknown", "2"), ("unrecorded-origin", "3")]
    with pytest.raises(ValueError, match="a rule may need"):
        register(id="needs-nothing-known", severity="info", title="", spec="", why="", example="", fix="", on=None,
             needs=("body",))(lambda call, session: ())


def test_a_call_is_fixed_once_decoded(tmp_path):
    """Nothing changes a call after decode: each call of the example captures and the kit's first
    files, copied as decode made it, is the same after the rules and the session have seen it."""
    import copy

    from a2a_capture.analyze.engine import Analyzer
    from a2a_capture.sources import exchanges

    files = [*sorted((Path(__file__).parent.parent / "captures").glob("*.http")), write(tmp_path, fetch_card(1))]
    analyzer, seen = Analyzer(), 0
    for file in files:
        analyzer.start_file(str(file))
        for exchange in exchanges(str(file)):
            call = decode(exchange, str(file))
            made = copy.deepcopy(call)
            analyzer.feed(exchange, call)
            analyzer.end_file()  # learned: the session has applied it
            assert call == made, (file, exchange.number)
            seen += 1
    assert seen > 20


def test_the_session_keeps_no_calls(tmp_path):
    from a2a_capture.a2a.decode import Call
    path = write(tmp_path, fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": DONE}),
                 rpc(3, "GetTask", {"id": "t-1"}, result=DONE))
    analyzer = Analyzer()
    analyzer.start_file(str(path))
    for exchange in read_capture(path).exchanges:
        analyzer.feed(exchange)
    analyzer.finish()

    def holds_a_call(value, depth=0):
        if isinstance(value, Call):
            return True
        if depth > 4:
            return False
        if isinstance(value, dict):
            return any(holds_a_call(k, depth + 1) or holds_a_call(v, depth + 1) for k, v in value.items())
        if isinstance(value, (list, tuple, set)):
            return any(holds_a_call(item, depth + 1) for item in value)
        if dataclasses.is_dataclass(value):
            return any(holds_a_call(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value))
        return False
    assert not holds_a_call(analyzer.session)


def test_the_streamed_text_is_the_text_of_the_whole_analysis():
    from a2a_capture.report import machine
    from tests.conftest import ROOT
    from tests.test_cli_show import run

    captures = sorted(str(path) for path in (ROOT / "captures").glob("*.http"))
    streamed = run("analyze", "--fail-on", "never", *captures).stdout.decode()
    assert streamed == machine.text(analyze(captures)) + "\n"


def test_live_analysis_reads_what_was_appended_once_it_stops_growing(tmp_path):
    from a2a_capture.record.live import LiveAnalysis

    path = tmp_path / "growing.http"
    path.write_bytes(b"")
    printed: list[str] = []
    live = LiveAnalysis(str(path), printed.append)
    with open(path, "a") as stream:
        stream.write(fetch_card(1, response_headers=['ETag: "a"']) + "\n")
    assert live.poll() == 0  # it grew since the last look: maybe still being written
    assert live.poll() == 1 and printed == []
    with open(path, "a") as stream:
        stream.write(fetch_card(2) + "\n")
    live.poll()
    assert live.poll() == 1
    assert [line.split(": ")[1].split()[:3] for line in printed] == [["warning", "card-refetch", "[wasted]"]]
    assert live.poll(final=True) == 0


def test_stream_frames_are_read_for_states_and_errors_however_their_keys_are_spelled(tmp_path):
    """Frames that can name neither a status nor an error are not parsed; one whose keys are
    spelled with escapes, or that is an `event: error` frame, still is."""
    frames = "\n\n".join([
        'data: {"jsonrpc": "2.0", "id": 1, "result": {"artifactUpdate": {"taskId": "t-1"}}}',
        'data: {"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "t-1", '
        '"st\\u0061tus": {"state": "TASK_STATE_WORKING"}}}}',
        'data: {"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "t-1", '
        '"status": {"state": "TASK_STATE_COMPLETED"}}}}',
        'event: error\ndata: {"code": -32001, "message": "gone"}',
    ])
    text = ("### 1 · SendStreamingMessage\nPOST /rpc HTTP/1.1\nHost: localhost:9999\nContent-Type: application/json\n"
            'A2A-Version: 1.0\n\n{"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {}}\n\n'
            f"HTTP/1.1 200 OK\nContent-Type: text/event-stream\n\n{frames}\n")
    call = decode(read_capture(write(tmp_path, text)).exchanges[0], "case.http")
    assert call.states == [("t-1", "TASK_STATE_WORKING"), ("t-1", "TASK_STATE_COMPLETED")]
    assert (call.error.code, call.error.name) == (-32001, "TaskNotFoundError")


def test_calls_waiting_to_be_learned_keep_no_bodies_and_are_bounded(tmp_path, monkeypatch):
    """Times that stand still (a capture whose blocks all copy one ``#@ start``) leave every call
    waiting for a later one to start after it ended: at most MAX_PENDING wait, the earliest-ended
    is learned first, and a waiting call holds no bodies."""
    from a2a_capture.analyze import engine
    from tests.test_rules import _timed
    monkeypatch.setattr(engine, "MAX_PENDING", 1)
    blocks = [_timed(fetch_card(1), 0.0, 0.5),
              _timed(rpc(2, "SendMessage", {**SEND, "configuration": {"returnImmediately": False}},
                         result={"task": DONE}), 0.0, 0.6),
              _timed(rpc(3, "GetTask", {"id": "t-1"}, result=DONE), 0.0, 0.7),
              _timed(rpc(4, "GetTask", {"id": "t-1"}, result=DONE), 0.0, 0.8)]
    analyzer = Analyzer()
    analyzer.start_file(str(write(tmp_path, *blocks)))
    found = [[f.rule for f in analyzer.feed(exchange) if f.rule != "card-not-fetched"]  # the fetch was in flight
             for exchange in read_capture(tmp_path / "case.http").exchanges]
    assert found[:3] == [[], [], []]
    assert "poll-terminal" in found[3]  # the send was learned once a call waited after it
    waiting = [call for _, _, call in analyzer._pending]
    assert [call.label for call in waiting] == ["4"]
    assert waiting[0].request_json is None and waiting[0].response_json is None and waiting[0].task_id == "t-1"
    assert analyzer.session.task("t-1") is not None


def test_only_the_latest_call_waits_with_its_bodies_and_only_while_no_other_waits(tmp_path):
    """A client that waits for each answer leaves one call waiting at a time, kept whole until
    the next starts; once two wait (the next started before the latest ended), neither keeps bodies."""
    from tests.test_rules import _timed
    blocks = [_timed(fetch_card(1), 0.0, 0.5),
              _timed(rpc(2, "SendMessage", SEND, result={"task": DONE}), 1.0, 1.5),
              _timed(rpc(3, "GetTask", {"id": "t-1"}, result=DONE), 1.2, 1.6)]  # started before 2 ended
    analyzer = Analyzer()
    analyzer.start_file(str(write(tmp_path, *blocks)))
    exchanges = read_capture(tmp_path / "case.http").exchanges
    analyzer.feed(exchanges[0])
    analyzer.feed(exchanges[1])  # the card was learned when the send started, after the card's fetch ended
    assert analyzer._latest.label == "2" and analyzer._latest.response_json is not None
    assert not analyzer._pending and analyzer.session.cards
    assert analyzer.feed(exchanges[2]) == []  # the send had not ended when the poll started
    assert analyzer._latest is None
    waiting = sorted((call.label, call.request_json, call.response_json) for _, _, call in analyzer._pending)
    assert waiting == [("2", None, None), ("3", None, None)]
    assert analyzer.finish().findings == [] and analyzer.session.task("t-1") is not None


def _one_at_a_time(paths) -> list:
    """The findings of Analyzer.feed, one exchange at a time as `record --live` feeds it."""
    analyzer = Analyzer()
    for path in paths:
        analyzer.start_file(str(path))
        for exchange in read_capture(path).exchanges:
            analyzer.feed(exchange)
    return analyzer.finish().findings


def _polls(count: int) -> list[str]:
    """A card, a send that finishes its task, then ``count`` polls of the finished task."""
    return [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": DONE}),
            *(rpc(number, "GetTask", {"id": "t-1"}, result=DONE) for number in range(3, 3 + count))]


def test_analyze_in_batches_finds_what_one_exchange_at_a_time_finds(tmp_path):
    from pathlib import Path

    from a2a_capture.analyze import engine
    examples = sorted(Path(__file__).resolve().parent.parent.joinpath("captures").glob("*.http"))
    made = [write(tmp_path, *_polls(count), name=f"polls-{count}.http")
            for count in (engine.BATCH - 2, engine.BATCH - 1, 3 * engine.BATCH + 5)]
    for paths in (examples, made, [*made, *examples]):
        streamed = []
        assert analyze(paths, on_finding=streamed.append).summary == analyze(paths).summary
        assert analyze(paths).findings == streamed == _one_at_a_time(paths)
        assert streamed


def test_a_capture_broken_partway_hands_over_every_finding_before_the_break(tmp_path):
    """Read in batches, a block that cannot be read fails after the findings of every exchange before it."""
    from a2a_capture.analyze import engine
    from a2a_capture.errors import CaptureFormatError
    count = engine.BATCH + 3
    path = write(tmp_path, *_polls(count), f"### {count + 3} · broken\ngarbage\n")
    streamed = []
    with pytest.raises(CaptureFormatError):
        analyze([path], on_finding=streamed.append)
    assert [finding.exchange for finding in streamed] == [str(number) for number in range(3, count + 3)]


def test_the_summary_counts_what_the_calls_and_findings_show(tmp_path):
    """The engine counts by plan and by (rule, severity, outcome); the summary is what counting each
    call and each finding one by one gives, in the order first seen."""
    from collections import Counter
    from pathlib import Path

    from a2a_capture.a2a import spec
    examples = sorted(Path(__file__).resolve().parent.parent.joinpath("captures").glob("*.http"))
    cases = [write(tmp_path, *blocks, *near_miss, name=f"{rule_id}.http")
             for rule_id, (blocks, _, near_miss) in sorted(CASES.items())]
    for paths in (examples, cases, [*cases, *examples]):
        analysis = analyze(paths)
        calls, findings, summary = analysis.calls, analysis.findings, analysis.summary
        operations = Counter(call.operation or call.kind for call in calls)
        assert list(summary.calls_by_operation.items()) == list(operations.items())
        assert summary.exchanges == len(calls)
        assert summary.errors == sum(call.error is not None for call in calls)
        assert summary.streams == sum(call.operation in spec.STREAMING_OPERATIONS for call in calls)
        for counted, field in ((summary.findings_by_rule, "rule"), (summary.findings_by_outcome, "outcome")):
            assert list(counted.items()) == list(Counter(getattr(f, field) for f in findings).items())
        assert list(summary.findings_by_severity.items()) == list(Counter(f.severity.value for f in findings).items())
        wasted: dict = {}
        for finding in findings:
            if finding.wasted:
                wasted.setdefault((finding.file, finding.exchange), finding.cost)
        fragile = {(f.file, f.exchange) for f in findings if f.outcome == "fragile"} - wasted.keys()
        assert (summary.wasted_round_trips, summary.fragile_round_trips) == (len(wasted), len(fragile))
        costs = [cost for cost in wasted.values() if cost is not None]
        assert summary.wasted_seconds == (round(sum(costs), 6) if costs else None)
        assert summary.errors and summary.findings_by_outcome.keys() == {"wasted", "fragile", "advice"}


def test_a_call_gets_the_plan_of_its_operation_kind_error_and_notes(tmp_path):
    """``feed`` finds a plain call's plan by its operation alone (Analyzer._plain): the plan is always the one
    the four-part key names, the same operation by other kinds, with an error or notes, in any order."""
    from tests.builders import block, http_request, http_response
    rest = block(0, "GetTask", http_request("GET", "/tasks/t-1", ["A2A-Version: 1.0"]), http_response(200, DONE))
    blocks = [fetch_card(1), rpc(2, "GetTask", {"id": "t-1"}, result=DONE), rest.replace("### 0", "### 3"),
              rpc(4, "GetTask", {"id": "t-1"}, result=DONE),
              rpc(5, "GetTask", {"id": "t-2"}, error={"code": -32001, "message": "Task not found"}),
              rpc(6, "GetTask", {"id": "t-1"}, result=DONE), rpc(7, "GetTask", {"id": "t-1"}, result=DONE, notes=["n"]),
              rpc(8, "GetTask", {"id": "t-1"}, result=DONE), rest.replace("### 0", "### 9"),
              rest.replace("### 0", "### 10"), fetch_card(11), rpc(12, "GetTask", {"id": "t-1"}, result=DONE)]
    path = write(tmp_path, *blocks)
    analyzer = Analyzer()
    analyzer.start_file(str(path))
    keys = []
    for exchange in read_capture(path).exchanges:
        call = decode(exchange, str(path))
        before = {key: plan.calls for key, plan in analyzer._dispatch.items()}
        analyzer.feed(exchange, call)
        key = (call.operation, call.kind, call.error is not None, bool(call.notes))
        fed = [k for k, plan in analyzer._dispatch.items() if plan.calls != before.get(k, 0)]
        assert fed == [key], call.label
        keys.append(key)
    assert {kind for _, kind, _, _ in keys} == {"card", "jsonrpc", "rest"} and (True in {k[2] for k in keys})
    assert True in {k[3] for k in keys}
