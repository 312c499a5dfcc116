"""`analyze --format json|sarif|junit` write findings as they are found, in the very documents a
finished analysis makes: JSON and SARIF laid out as json.dumps(indent=2) lays them out, JUnit
as ElementTree does."""

from __future__ import annotations

import io
import json
from xml.etree import ElementTree

import pytest

from a2a_capture.analyze.config import Config
from a2a_capture.analyze.engine import analyze
from a2a_capture.batch import analysis as batch_analysis
from a2a_capture.batch.analysis import analyze_many
from a2a_capture.errors import valid_utf8
from a2a_capture.report import machine
from tests.builders import card, error, fetch_card, message, rpc, task, write
from tests.cli import run
from tests.conftest import ROOT
from tests.test_hostile import INVALID_UTF8

real_session = batch_analysis.analyze_session
CAPTURES = sorted(str(path) for path in (ROOT / "captures").glob("*.http"))
FORMATS = ["text", "json", "sarif", "junit"]
#: each format of a finished analysis, as --fail-on never asks for it
ONE_SHOT = {"text": machine.text, "json": machine.to_json, "sarif": machine.sarif,
            "junit": lambda analysis: machine.junit(analysis, "error", [rule.id for rule in Config().active("")])}


def late_card(tmp_path) -> str:
    """A call before the agent's card: its findings name the agent only once the card is read."""
    return str(write(tmp_path, rpc(1, "SendMessage", {"message": message()}, headers=["Content-Type: application/json"],
                                   result={"task": task("t-1", "TASK_STATE_COMPLETED")}),
                     fetch_card(2, card(name='Late & <Co> "x"')),
                     rpc(3, "GetTask", {"id": "t-1"}, result=task("t-1", "TASK_STATE_COMPLETED")),
                     rpc(4, "CancelTask", {"id": "t-1"}, error=error(-32002, message_text="ended\n<&>"))))


@pytest.fixture(params=["captures", "late-card", "invalid-utf8"])
def session(request, tmp_path) -> list[str]:
    if request.param == "captures":
        return CAPTURES
    if request.param == "late-card":
        return [late_card(tmp_path)]
    path = tmp_path / "bytes.http"
    path.write_bytes(INVALID_UTF8)
    return [str(path)]


@pytest.mark.parametrize("output_format", FORMATS)
def test_the_streamed_document_is_the_whole_analysis_document(session, output_format, tmp_path):
    """Standard output and -o get the same bytes, those the one-shot functions make of the whole analysis."""
    streamed = run("analyze", "--format", output_format, "--fail-on", "never", *session)
    out = tmp_path / f"out.{output_format}"
    written = run("analyze", "--format", output_format, "--fail-on", "never", "-o", str(out), *session)
    assert streamed.returncode == written.returncode == 0, streamed.stderr + written.stderr
    assert streamed.stdout == out.read_bytes()
    whole = valid_utf8(ONE_SHOT[output_format](analyze(session)))
    assert streamed.stdout.decode("utf-8") == whole + ("" if whole.endswith("\n") else "\n")


@pytest.mark.parametrize("output_format", ["json", "sarif"])
def test_json_and_sarif_are_laid_out_as_json_dumps_lays_them_out(session, output_format):
    text = run("analyze", "--format", output_format, "--fail-on", "never", *session).stdout.decode("utf-8")
    data = json.loads(text)
    assert text == valid_utf8(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"
    findings = data["findings"] if output_format == "json" else data["runs"][0]["results"]
    assert len(findings) == len(analyze(session).findings)


def test_junit_is_laid_out_as_element_tree_lays_it_out(session):
    text = run("analyze", "--format", "junit", *session).stdout.decode("utf-8")
    root = ElementTree.fromstring(text.encode())
    ElementTree.indent(root)
    assert text == '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"
    assert int(root.get("failures")) == len(root.findall(".//failure"))


def test_a_streamed_json_names_an_agent_whose_card_came_later(tmp_path):
    data = json.loads(run("analyze", "--format", "json", late_card(tmp_path)).stdout)
    assert data["findings"] and {f["agent_name"] for f in data["findings"]} == {'Late & <Co> "x"'}


def test_sarif_results_are_written_as_they_are_found():
    out = io.StringIO()
    writer = machine.SarifWriter(out)
    written = []

    def found(finding) -> None:
        writer.finding(finding)
        written.append(out.getvalue().count('"ruleId"'))

    analysis = analyze(CAPTURES, on_finding=found)
    assert analysis.findings == [] and written == list(range(1, len(written) + 1)) and len(written) > 10
    writer.end(analysis)
    assert len(json.loads(out.getvalue())["runs"][0]["results"]) == len(written)


def test_json_findings_and_calls_wait_on_disk_not_in_memory():
    writer = machine.JsonWriter(io.StringIO(), late_names=True)
    analysis = analyze(CAPTURES, on_finding=writer.finding, on_call=writer.call)
    assert analysis.findings == [] and analysis.calls == []
    assert writer.findings.count > 10 and writer.calls.count == analysis.summary.exchanges
    assert writer.findings.file.tell() > 0 and writer.calls.file.tell() > 0  # written out, not held


def test_an_empty_capture_writes_no_document(tmp_path):
    empty = tmp_path / "empty.http"
    empty.write_text("")
    for output_format in FORMATS:
        out = tmp_path / f"out.{output_format}"
        result = run("analyze", "--format", output_format, "-o", str(out), str(empty))
        assert result.returncode == 2 and "no exchange" in result.stderr.decode()
        assert not out.exists() and result.stdout == b""


@pytest.mark.parametrize("output_format", ["json", "sarif", "junit"])
def test_sessions_analyzed_apart_stream_the_joined_document(output_format):
    """--each-file: each session's findings written as its analysis comes back, in order; the
    document is the one the joined analysis makes."""
    streamed = run("analyze", "--each-file", "--jobs", "2", "--format", output_format, "--fail-on", "never",
                   *CAPTURES)
    assert streamed.returncode == 0, streamed.stderr
    whole = ONE_SHOT[output_format](analyze_many(CAPTURES, grouping="file", jobs=1))
    assert streamed.stdout.decode("utf-8") == whole + ("" if whole.endswith("\n") else "\n")


def test_a_sessions_findings_are_handed_over_before_the_next_session_is_analyzed(monkeypatch):
    started = []
    monkeypatch.setattr(batch_analysis, "analyze_session",
                        lambda files, *rest: started.append(files) or real_session(files, *rest))
    seen = []
    summary = analyze_many(CAPTURES, grouping="file", jobs=1, on_finding=lambda f: seen.append((f.file, len(started))))
    assert len(started) == len(CAPTURES) and summary.findings == []
    assert seen and all(CAPTURES.index(file) + 1 == sessions for file, sessions in seen)
    assert summary.summary == analyze_many(CAPTURES, grouping="file", jobs=1).summary


def test_xml_text_and_attributes_are_escaped_as_saxutils_escapes_them():
    from xml.sax.saxutils import escape

    entities = {'"': "&quot;", "\r": "&#13;", "\n": "&#10;", "\t": "&#09;"}
    for text in ['a & b < c > d "e"\r\n\t', "&amp; &lt;", "<&>", "", "plain"]:
        assert machine.escape(text) == escape(text)
        assert machine.escape(text, entities) == escape(text, entities)


def test_text_lines_written_together_are_the_lines_of_each_finding(tmp_path):
    """The text writer writes its lines a few dozen at a time: the same text as a line per finding, and
    each line as `where` places it (a line number, a flow's place, or the exchange)."""
    findings = analyze([*CAPTURES, late_card(tmp_path)]).findings * 10
    assert len(findings) > 2 * machine.TextWriter.LINES
    out = io.StringIO()
    writer = machine.TextWriter(out)
    for number, finding in enumerate(findings, start=1):
        writer.finding(finding)
        assert out.getvalue().count("\n") == number // machine.TextWriter.LINES * machine.TextWriter.LINES
    writer.flush()
    assert out.getvalue() == "".join(machine.line(finding) + "\n" for finding in findings)
    moved_out, moved_lines = io.StringIO(), []
    moved_writer = machine.TextWriter(moved_out)  # each place's line: as line() and where() say
    for finding in findings[:5]:
        for place in ({}, {"line": None, "flow": 3}, {"line": None, "flow": None}):
            moved = finding.model_copy(update=place)
            moved_writer.finding(moved)
            moved_lines.append(f"{machine.where(moved)} {moved.severity.value} {moved.rule}"
                               f"{f' [{moved.outcome}]' if moved.outcome != 'advice' else ''} {moved.message} "
                               f"(exchange {moved.exchange})\n")
            for judged in (True, False):
                tag = f" [{moved.outcome}]" if judged and moved.outcome != "advice" else ""
                assert machine.line(moved, judged) == (f"{machine.where(moved)} {moved.severity.value} {moved.rule}"
                                                       f"{tag} {moved.message} (exchange {moved.exchange})")
    moved_writer.flush()
    assert moved_out.getvalue() == "".join(moved_lines)


def test_text_findings_before_an_unreadable_block_are_written_before_its_error(tmp_path):
    done = task("t-1", "TASK_STATE_COMPLETED")
    polls = [rpc(number, "GetTask", {"id": "t-1"}, result=done) for number in range(2, 9)]
    path = write(tmp_path, rpc(1, "SendMessage", {"message": message()}, result={"task": done}),
                 *polls, "### 9 · broken\ngarbage\n")
    result = run("analyze", "--format", "text", str(path))
    assert result.returncode == 2
    assert result.stdout.decode().count("poll-terminal") == 7
    assert "line" in result.stderr.decode() and "Traceback" not in result.stderr.decode()
