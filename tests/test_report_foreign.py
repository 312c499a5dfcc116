"""Reports of traffic from stacks other than a2a-sdk 1.3, read as a demanding reader reads them.

Each case is the shape a foreign stack puts on the wire (the JavaScript SDK's long error
messages, a2a-server's `result: null` answers, lenient agents), written with the builders.
"""

from __future__ import annotations

from a2a_capture.capture import read_capture
from a2a_capture.report import render, svg, walkthrough
from a2a_capture.report.excerpt import CUT, listing
from tests.builders import card, error, fetch_card, rpc, task, write

LONG_MESSAGE = ("Task 8f0c9d3b-4713-437a-a3f4-5573feab1677 is in a terminal state "
                "and cannot be subscribed to any more")  # 101 characters, as the JS SDK words it


def test_a_laid_out_error_message_is_not_cut_inside(tmp_path):
    path = write(tmp_path, rpc(1, "SubscribeToTask", {"id": "8f0c9d3b-4713-437a-a3f4-5573feab1677"},
                               error=error(-32004, "UNSUPPORTED_OPERATION", LONG_MESSAGE)))
    text, note = listing(read_capture(path).exchanges[0], layout=True)
    assert f'    "message": "{LONG_MESSAGE}",' in text.text.splitlines()
    assert "message value is cut" not in note and "the error message" in note
    assert '"reason": "UNSUPPORTED_OPERATION",' in text.text
    huge = "x" * 2000  # a message longer than any error kept whole is still cut, and said so
    path = write(tmp_path, rpc(1, "GetTask", {"id": "t-1"}, error=error(-32001, None, huge)), name="huge.http")
    text, note = listing(read_capture(path).exchanges[0], layout=True)
    assert huge not in text.text and CUT in text.text and "message value is cut" in note


def test_only_a_wasted_call_is_said_to_have_been_answered_already(tmp_path):
    done = task("t-1", "TASK_STATE_COMPLETED")
    path = write(tmp_path, fetch_card(1), rpc(2, "message/send", {"message": {}}, result=done,  # fasta2a's
                                                   headers=["Content-Type: application/json"]),  # 0.3 call
                 rpc(3, "GetTask", {"id": "t-1"}, result=done))
    model = walkthrough.build([str(path)])
    said = {(f.rule, f.outcome): f.related_says for f in model.findings if f.related}
    assert said == {("method-version-mismatch", "fragile"): "Known from",
                    ("poll-terminal", "wasted"): "Already answered by"}, said
    markdown = render.render(model, "md")
    assert "Known from [Exchange 1](#ex-1)." in markdown and "Already answered by [Exchange 2](#ex-2)." in markdown
    html = render.render(model, "html")
    assert 'Known from <a href="#ex-1">Exchange 1</a>.' in html
    assert 'Already answered by <a href="#ex-2">Exchange 2</a>.' in html
    assert "Already answered by <a href=\"#ex-1\">" not in html


def test_outcomes_say_what_came_back_when_no_task_did(tmp_path):
    reply = {"kind": "message", "messageId": "m-2", "role": "agent", "parts": [{"kind": "text", "text": "hi"}]}
    v03 = ["Content-Type: application/json"]
    path = write(tmp_path, rpc(1, "message/send", {"message": {}}, result=reply, headers=v03),  # a2a-sdk 0.3
                 rpc(2, "SendMessage", {"message": {}}, result={"message": {"messageId": "m-3", "parts": []}}),
                 rpc(3, "tasks/resubscribe", {"id": "t-1"}, result=None,  # a2a-server 0.6
                     headers=[*v03, "User-Agent: a2a-cli"]))
    text = path.read_text().replace('"result": {}', '"result": null, "error": null')
    path.write_text(text)
    model = walkthrough.build([str(path)])
    assert [ex.outcome for ex in model.exchanges] == ["message", "message", "result null"]
    note = model.exchanges[2].note
    assert note.startswith("Exchange 3, cut to the method") and "the error" not in note  # `"error": null` is none
    markdown = render.render(model, "md")
    assert "Outcome: result null\n" in markdown and "Outcome: message\n" in markdown
    assert "agent1-->>client: message\n" in markdown and "agent1-->>client: result null\n" in markdown
    assert "message, message" not in markdown


def test_mermaid_keeps_a_routes_braces_and_drops_what_ends_a_statement():
    arrows = [svg.Arrow(anchor="ex-3", label="3 GET /tasks/{id}:subscribe; #x", lifeline="js",
                        answer="TaskNotFoundError", wasted=True, events=0, webhook=False)]
    text = svg.mermaid(["js"], arrows)
    assert "client->>agent1: 3 GET /tasks/{id}:subscribe   x (wasted)" in text


def test_independent_sessions_keep_their_own_clocks_and_order():
    from tests.conftest import ROOT

    files = [str(ROOT / "captures" / name) for name in ("04-polling.http", "02-blocking-send.http")]
    model = walkthrough.build(files, groups=[[file] for file in files])  # recorded seconds apart, 04 later
    polling, blocking = model.timeline_text
    assert polling.startswith("84d4ecd3") and "(04-polling #2 +0.0" in polling  # not +2.7 s: its own start
    assert blocking.startswith("3fa07a8b") and "(02-blocking-send #2 +0.2" in blocking
    assert "seconds since each session's first request" in model.timeline_svg
    labels = [label.split('"')[0] for label in model.sequence_svg.split('class="file-name">')[1:]]
    assert [label.split("<")[0] for label in labels] == ["04-polling", "02-blocking-send"]  # as given
    push = [str(ROOT / "captures" / name) for name in ("07-push-webhook.http", "02-blocking-send.http")]
    sequence = walkthrough.build(push, groups=[[file] for file in push]).sequence_svg
    assert sequence.index(">2 SendMessage<") < sequence.index(">webhook 1<")  # as sent, in a session
    one = walkthrough.build(files)  # one session: one clock, arrows in the order they were sent
    assert "seconds since the first request" in one.timeline_svg
    assert one.timeline_text[0].startswith("84d4ecd3") and "+0.0" not in one.timeline_text[0].split("→")[0]


def test_each_streamed_frame_says_what_kind_of_event_it_is(tmp_path):
    from a2a_capture.report.excerpt import verbatim_pieces

    status = {"taskId": "t-1", "contextId": "c-1", "status": {"state": "working", "timestamp": "2026-12-01T03:01:57Z"},
              "metadata": {"note": "a frame long enough to be cut inside its line"}}
    frames = [{"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_SUBMITTED"},  # 1.0
                        "history": [{"kind": "message", "messageId": "m-1", "parts": [{"text": "run"}]}]}},
              {**status, "final": False, "kind": "status-update"},  # 0.3
              {"id": "t-1", "status": {"state": "completed"}, "final": True, "type": "status",  # 0.2 (a2a-server)
               "metadata": {"note": "a frame long enough to be cut inside its line"}}]
    path = write(tmp_path, rpc(1, "SendStreamingMessage", {"message": {"messageId": "m-1", "parts": []}},
                               events=frames))
    text, _ = listing(read_capture(path).exchanges[0])
    data = [line for line in text.lines if line.startswith("data: ")]
    assert '…"task":…"id":"t-1"' in data[0].replace(" ", "") and '"kind"' not in data[0]  # not the history's
    assert '"final": false' in data[1] and '"kind": "status-update"' in data[1]
    assert '"final": true' in data[2] and '"type": "status"' in data[2]
    original = path.read_text()
    assert all(piece in original for line in data for piece in verbatim_pieces(line))
    request = next(line for line in text.lines if '"method"' in line)
    assert '"message":' not in request  # a request's params are no event


def test_the_html_footer_names_the_current_option_for_secrets(tmp_path):
    html = render.render(walkthrough.build([str(write(tmp_path, fetch_card(1)))]), "html")
    assert "<code>--no-redact</code> shows them" in html and "--show-secrets" not in html


def test_the_files_line_keeps_prose_out_of_the_code_span(tmp_path):
    files = [str(write(tmp_path, fetch_card(1), name=f"{n}.http")) for n in "ab"]
    markdown = render.render(walkthrough.build(files, groups=[[file] for file in files]), "md")
    files_line = markdown.splitlines()[2]
    assert files_line.endswith("`, each a session of its own"), files_line


SILENT_STREAM = """#@ format: a2a-capture/1
#@ recorder: a2a-capture 0.1.0

### 1 · SubscribeToTask
#@ start: 2026-12-01T04:24:02.611485Z
#@ end: 2026-12-01T04:24:12.627485Z
#@ response-body: 0 bytes
# {note}
POST /a2a/jsonrpc HTTP/1.1
Host: 127.0.0.1:55469
A2A-Version: 1.0
Accept: text/event-stream
Content-Length: 73
Content-Type: application/json

{{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{{"id":"t-1"}}}}

HTTP/1.1 200 OK
Content-Type: text/event-stream
Transfer-Encoding: chunked

"""


def test_a_stream_with_no_event_says_what_ended_it_not_its_200(tmp_path):
    # as the recorder wrote it (a client that gave up waiting after 10 s on an agent that sent no event)
    closed = "error: the client closed the connection after part of the response (Client disconnected.)"
    path = tmp_path / "silent.http"
    path.write_text(SILENT_STREAM.format(note=closed))
    model = walkthrough.build([str(path)])
    said = "stream opened, no event arrived, closed by the client after 10.0 s"
    assert model.exchanges[0].outcome == "no event" and model.exchanges[0].outcome_said == said
    markdown = render.render(model, "md")
    assert f"Outcome: {said}\n" in markdown and "Outcome: 200" not in markdown and "10016" not in markdown
    assert "agent1-->>client: no event" in markdown
    html = render.render(model, "html")
    assert f'<p class="outcome-said">Outcome: {said}</p>' in html
    stopped = "a2a-capture: recording stopped before the response ended; what had arrived is kept"
    path.write_text(SILENT_STREAM.format(note=stopped))
    assert walkthrough.build([str(path)]).exchanges[0].outcome_said == \
        "stream opened, no event arrived in 10.0 s, still open when the recording stopped"
    path.write_text(SILENT_STREAM.format(note="a note of the user's"))  # no recorder note: the agent ended it
    assert walkthrough.build([str(path)]).exchanges[0].outcome_said == \
        "stream opened, no event arrived, ended by the agent after 10.0 s"


def test_the_verdict_never_names_a_call_that_worked_as_the_worst_waste(tmp_path):
    done = task("t-1", "TASK_STATE_COMPLETED")
    v03 = ["Content-Type: application/json"]  # fasta2a's 0.3 name on a 1.0 interface: an error, but it worked
    lenient = write(tmp_path, fetch_card(1), rpc(2, "message/send", {"message": {}}, result=done, headers=v03),
                    name="lenient.http")
    model = walkthrough.build([str(lenient)])
    assert [(f.severity, f.outcome) for f in model.findings] == [("error", "fragile")]
    assert model.verdict.worst is None and model.verdict.most_fragile.rule == "method-version-mismatch"
    for kind in ("md", "summary"):
        text = render.render(model, kind)
        assert "Worst" not in text
        assert "\nNothing was wasted. 1 call worked only because the agent was lenient: [Exchange 2](#ex-2) " \
               "**error** `method-version-mismatch`: message/send is a 0.3 name" in text
    html = render.render(model, "html")
    assert "Worst" not in html and '<p class="worst fragile">Nothing was wasted. 1 call worked only' in html
    # a wasted warning is the worst waste, not the fragile error beside it
    polled = write(tmp_path, fetch_card(1), rpc(2, "message/send", {"message": {}}, result=done, headers=v03),
                   rpc(3, "GetTask", {"id": "t-1"}, result=done), name="polled.http")
    model = walkthrough.build([str(polled)])
    assert model.verdict.worst.rule == "poll-terminal" and model.verdict.worst.outcome == "wasted"
    assert "\nWorst wasted round trip: [Exchange 3](#ex-3) **warning** `poll-terminal`: " in render.render(model, "md")
    assert "Nothing was wasted" not in render.render(model, "md")
    unversioned = card()
    del unversioned["version"]  # card-schema: advice only
    model = walkthrough.build([str(write(tmp_path, fetch_card(1, unversioned), name="advice.http"))])
    assert [f.outcome for f in model.findings] == ["advice"] and model.verdict.most_fragile is None
    assert "\nNothing was wasted: every finding is advice.\n" in render.render(model, "md")


def test_a_stream_the_client_closed_after_some_events_says_so(tmp_path):
    # as the recorder wrote it: one event, then the client stopped waiting (the capture's end is the event's)
    frame = ('data: {"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"t-1","contextId":"c-1",'
             '"status":{"state":"TASK_STATE_WORKING"}}}}\n\n')
    closed = "error: the client closed the connection after part of the response (Client disconnected.)"
    def capture(note: str) -> str:
        return SILENT_STREAM.format(note=note).replace(
            "#@ response-body: 0 bytes", f"#@ response-body: {len(frame)} bytes\n#@ event-times: 0.003") + frame

    path = tmp_path / "cut.http"
    path.write_text(capture(closed))
    view = walkthrough.build([str(path)]).exchanges[0]
    assert view.outcome == "working" and view.events == 1
    assert view.outcome_said == "working at the last event, then the stream was closed by the client"
    assert "Outcome: working at the last event, then the stream was closed by the client\n" in \
        render.render(walkthrough.build([str(path)]), "md")
    path.write_text(capture("a note of the user's"))  # the agent ended it: nothing to add
    assert walkthrough.build([str(path)]).exchanges[0].outcome_said == ""
