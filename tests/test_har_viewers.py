"""The HAR `convert --to har` writes opens in HAR viewers: it is valid HAR 1.2 (ahmadnassri's
har-schema, the schema HAR validators use, from npm), and Chrome DevTools' own HAR importer,
run in real headless Chromium from the DevTools front end the browser bundles, reads every
entry as the capture has it, grouped under the session's page."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT6

from a2a_capture.capture import read_capture
from a2a_capture.capture.models import Capture, Exchange, ExchangeMeta, Request, Response
from a2a_capture.convert import capture_to_har
from tests.conftest import ROOT, npm_package

CAPTURES = sorted((ROOT / "captures").glob("*.http"))
HAR_SCHEMA = "har-schema@2.0.0"


@pytest.fixture(scope="module")
def har_validator():
    folder = npm_package(HAR_SCHEMA) / "lib"
    schemas = {path.name: json.loads(path.read_text()) for path in folder.glob("*.json")}
    registry = Registry().with_resources(
        (f"{name}#", Resource.from_contents(schema, default_specification=DRAFT6)) for name, schema in schemas.items())
    registry = registry.with_resources((name, Resource.from_contents(schema, default_specification=DRAFT6))
                                       for name, schema in schemas.items())
    return jsonschema.Draft6Validator(schemas["har.json"], registry=registry,
                                      format_checker=jsonschema.Draft6Validator.FORMAT_CHECKER)


def _odd_session() -> Capture:
    """What a capture may hold that HAR has no plain place for: no times, no response, a query."""
    return Capture(exchanges=[
        Exchange(number=1, request=Request(method="GET", target="/tasks?state=working&page=", headers=[
            ("Host", "127.0.0.1:41241")])),
        Exchange(number=1, webhook=True, request=Request(method="POST", target="/hooks", headers=[
            ("Host", "127.0.0.1:41250"), ("Content-Type", "application/json")], body=b'{"statusUpdate": {}}'),
            response=Response(status=204, reason="No Content"),
            meta=ExchangeMeta(start="2026-01-01T00:00:01.000000Z", end="2026-01-01T00:00:01.002000Z",
                              server="127.0.0.1:41250")),
    ])


def _har(path: Path) -> dict:
    return json.loads(capture_to_har(read_capture(path)))


def test_every_har_written_is_valid_har_1_2(har_validator, kit):
    sessions = [read_capture(path) for path in [*CAPTURES, *sorted(kit.glob("*.http"))]] + [_odd_session()]
    for session in sessions:
        har = json.loads(capture_to_har(session))
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in har_validator.iter_errors(har)]
        assert not errors, errors[:5]
    # the validator is not idle: what the writer leaves out is caught
    broken = _har(CAPTURES[0])
    del broken["log"]["entries"][0]["timings"]
    broken["log"]["pages"][0]["startedDateTime"] = "yesterday"
    assert len(list(har_validator.iter_errors(broken))) == 2


def test_the_session_is_one_page_that_every_entry_names():
    for path in CAPTURES:
        log = _har(path)["log"]
        assert [page["id"] for page in log["pages"]] == ["page_1"]
        assert {entry["pageref"] for entry in log["entries"]} == {"page_1"}
        assert log["pages"][0]["startedDateTime"] == min(entry["startedDateTime"] for entry in log["entries"])
    log = _har(ROOT / "captures" / "07-push-webhook.http")["log"]
    assert log["pages"][0]["title"] == "A2A traffic to 127.0.0.1:51241"  # the webhooks' receiver is no agent
    query = json.loads(capture_to_har(_odd_session()))["log"]["entries"][0]["request"]["queryString"]
    assert query == [{"name": "state", "value": "working"}, {"name": "page", "value": ""}]


#: Chrome DevTools' HAR import, as its Network panel runs it on a dropped file, and what it made of each entry
DEVTOOLS_IMPORT = """async (text) => {
  const {HARFormat, Importer} = await import('devtools://devtools/bundled/models/har/har.js');
  const requests = Importer.Importer.requestsFromHARLog(new HARFormat.HARRoot(JSON.parse(text)).log);
  const seen = [];
  for (const request of requests) {
    const content = await request.requestContentData();
    const sent = await request.requestFormData();
    seen.push({url: request.url(), method: request.requestMethod, status: request.statusCode,
               type: request.resourceType().name(), documentURL: request.documentURL,
               requestHeaders: request.requestHeaders().map(h => [h.name, h.value]),
               responseHeaders: request.responseHeaders.map(h => [h.name, h.value]),
               query: (request.queryParameters || []).map(p => [p.name, p.value]),
               sent: sent, body: content.text === undefined ? null : content.text,
               start: request.startTime, end: request.endTime});
  }
  return seen;
}"""


@pytest.fixture(scope="module")
def devtools(browser):
    page = browser.new_page()
    page.goto("devtools://devtools/bundled/devtools_app.html", timeout=30000)
    yield page
    page.close()


@pytest.mark.browser
def test_chrome_devtools_imports_every_entry_as_the_capture_has_it(devtools, kit):
    for path in [*CAPTURES, *sorted(kit.glob("*.http"))]:
        capture = read_capture(path)
        seen = devtools.evaluate(DEVTOOLS_IMPORT, capture_to_har(capture).decode())
        assert len(seen) == len(capture.exchanges), path.name
        har = json.loads(capture_to_har(capture))["log"]["entries"]
        # DevTools lists entries by start (a stable sort): webhooks among the calls they came during
        pairs = sorted(zip(har, capture.exchanges, strict=True), key=lambda pair: pair[0]["startedDateTime"])
        first = pairs[0][0]["request"]["url"]
        for (entry, exchange), request in zip(pairs, seen, strict=True):
            where = f"{path.name} exchange {exchange.number}"
            assert (request["method"], request["url"]) == (exchange.request.method, entry["request"]["url"]), where
            assert request["type"] == "fetch", where  # the Fetch/XHR filter shows it
            assert request["documentURL"] == first, where  # under the session's page
            assert request["requestHeaders"] == [list(h) for h in exchange.request.headers], where
            assert request["sent"] == (exchange.request.body.decode() or None), where
            if exchange.meta.start:
                assert request["end"] >= request["start"] > 0, where
            else:  # a documentation capture has no times: HAR's epoch, which DevTools shows as unknown
                assert request["start"] == request["end"] == -1, where
            if exchange.response is None:
                assert request["status"] == 0, where
                continue
            assert request["status"] == exchange.response.status, where
            assert request["responseHeaders"] == [list(h) for h in exchange.response.headers], where
            if exchange.response.body:
                assert request["body"] == exchange.response.body.decode(), where


@pytest.mark.browser
def test_chrome_devtools_reads_queries_and_a_session_without_times(devtools):
    seen = devtools.evaluate(DEVTOOLS_IMPORT, capture_to_har(_odd_session()).decode())
    assert [(r["method"], r["status"]) for r in seen] == [("GET", 0), ("POST", 204)]
    assert seen[0]["query"] == [["state", "working"], ["page", ""]]
    assert seen[1]["sent"] == '{"statusUpdate": {}}'
