"""Reports of traffic from stacks other than a2a-sdk 1.3, read as a demanding reader reads them.

Each case is the shape a foreign stack puts on the wire (the JavaScript SDK's long error
messages, a2a-server's `result: null` answers, lenient agents), written with the builders.
"""

from __future__ import annotations

from a2a_capture.capture import read_capture
from a2a_capture.report import render, walkthrough
from a2a_capture.report.excerpt import CUT, listing
from tests.builders import error, fetch_card, rpc, task, write

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
