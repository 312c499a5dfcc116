"""Hostile and damaged inputs: each class a user met gets exit 0, 1 or 2, and for 2 one line naming
the file and where; nothing reaches the catch-all "internal error"; output stays valid UTF-8."""

from __future__ import annotations

import gzip
import json
import os

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from a2a_capture.capture.encoding import MAX_DECODED, decode_content
from tests.cli import run
from tests.conftest import DATA

HEAD = "#@ format: a2a-capture/1\n\n"
CALL = '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}'
ANSWER = '{"jsonrpc":"2.0","id":1,"result":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}'
BIG = "9" * 5000  # past Python's integer-string limit (4300 digits)
DEEP = "[" * 100_000 + "]" * 100_000
LONG = "x" * (3 << 20)  # a line longer than the reader's chunk (1 MiB): read on without copying it again each time


def block(meta="", request=None, response=None, number=1, title="call") -> str:
    request = request or f"POST / HTTP/1.1\nHost: a:1\nContent-Type: application/json\n\n{CALL}\n"
    response = response or f"HTTP/1.1 200 OK\ncontent-type: application/json\n\n{ANSWER}\n"
    return f"### {number} · {title}\n{meta}{request}\n{response}\n"


def stream(frames: str) -> str:
    return block(response=f"HTTP/1.1 200 OK\ncontent-type: text/event-stream\n\n{frames}data: {ANSWER}\n\n")


CASES = {
    "huge-content-length": HEAD + block(request=f"POST / HTTP/1.1\nHost: a:1\nContent-Length: {BIG}\n\n{{}}\n"),
    "huge-json-number": HEAD + block(request=f"POST / HTTP/1.1\nHost: a:1\nContent-Type: application/json\n\n"
                                             f'{{"jsonrpc":"2.0","id":{BIG},"method":"GetTask"}}\n'),
    "huge-sse-retry": HEAD + stream(f"retry: {BIG}\n"),
    "non-ascii-sse-retry": HEAD + stream("retry: ١٢٣\n") + stream("retry: ²\n").replace("### 1", "### 2"),
    "deep-json-request": HEAD + block(request=f"POST / HTTP/1.1\nHost: a:1\nContent-Type: application/json\n\n"
                                              f"{DEEP}\n"),
    "deep-json-response": HEAD + block(response=f"HTTP/1.1 200 OK\ncontent-type: application/json\n\n{DEEP}\n"),
    "naive-start-aware-end": HEAD + block(meta="#@ start: 2026-11-30T07:40:01.1\n#@ end: 2026-11-30T07:40:02.1Z\n"),
    "bad-ipv6-target": HEAD + block(request="GET http://[::1/x?token=1 HTTP/1.1\nHost: a:1\n\n"),
    "bad-ipv6-host": HEAD + block(request="GET /.well-known/agent-card.json HTTP/1.1\nHost: [zz::1\n\n"),
    "port-past-65535": HEAD + block(request="GET /.well-known/agent-card.json HTTP/1.1\nHost: a:99999999\n\n"),
    "blank-lines-in-a-body": HEAD + block(request="POST / HTTP/1.1\nHost: a:1\nContent-Type: text/plain\n\nx"
                                                  + "\n" * 100_000 + "y\n"),
    "blank-lines-crlf": (HEAD + block(request="POST / HTTP/1.1\nHost: a:1\n\nx" + "\n" * 50_000 + "y\n"))
    .replace("\n", "\r\n"),
    "no-host": HEAD + block(request=f"POST / HTTP/1.1\nContent-Type: application/json\n\n{CALL}\n"),
    # issue #28's residual inputs: each a one-line error (or an answer) in time that grows with the file
    "huge-block-number": HEAD + block(number=BIG),
    "huge-block-number-later": HEAD + block() + block(number=BIG),
    "huge-webhook-number": HEAD + block() + block(number=BIG).replace("### ", "### webhook ", 1),
    "huge-body-length-pragma": HEAD + block(meta=f"#@ request-body: {BIG} bytes\n"),
    "long-lines": block(request=f"POST / HTTP/1.1\nHost: a:1\nX-Long: {LONG}\n\n{{\"text\":\"{LONG}\"}}\n",
                        title=LONG)
    + block(number=2, meta=f"# {LONG}\n", response=f"HTTP/1.1 200 OK\ncontent-type: text/event-stream\n\n"
                                                 f"data: {LONG}\n\n"),
    "one-long-line": LONG + "\n",
}
INVALID_UTF8 = (HEAD + block(title="bad \udcff", request=f"POST / HTTP/1.1\nHost: a:1\nX-A: \udcfe\n"
                             f"Content-Type: application/json\n\n{CALL[:-1]},\"x\":\"\udcff\"}}\n")
                ).encode("utf-8", "surrogateescape")
COMMANDS = [["show"], ["show", "--format", "json"], ["analyze"], ["analyze", "--format", "sarif"]]


def assert_contract(result, path) -> None:
    """Exit 0, 1 or 2; for 2 one line that names the file; never the catch-all."""
    stderr = result.stderr.decode("utf-8", "replace")
    assert result.returncode in (0, 1, 2), stderr
    assert "internal error" not in stderr and "Traceback" not in stderr
    if result.returncode == 2:
        lines = [line for line in stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("a2a-capture: error: "), stderr
        assert str(path) in lines[0]
        assert len(lines[0]) < len(str(path)) + 500, lines[0]  # what the file held is named, not echoed whole


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_hostile_class_gets_a_clear_answer(tmp_path, name):
    path = tmp_path / f"{name}.http"
    path.write_text(CASES[name])
    for command in COMMANDS:
        assert_contract(run(*command, str(path)), path)
    report = run("report", str(path), "-o", str(tmp_path / "r.md"))
    assert_contract(report, path)


def test_a_length_past_the_integer_limit_names_its_line(tmp_path):
    path = tmp_path / "pragma.http"
    path.write_text(HEAD + block(meta=f"#@ response-body: {BIG} bytes\n"))
    result = run("show", str(path))
    assert result.returncode == 2
    assert result.stderr.decode().startswith(f"a2a-capture: error: {path}:4:1: expected a body length")
    assert result.stderr.decode().rstrip().endswith("… (5006 characters)")


@pytest.mark.parametrize("header", [f"### {BIG} · call", f"### webhook {BIG}", "### " + "1" * 101])
def test_a_block_number_past_100_digits_says_so(tmp_path, header):
    path = tmp_path / "number.http"
    path.write_text(HEAD + block() + block().replace("### 1 · call", header))
    result = run("analyze", str(path))
    digits = len(header.split()[-1]) if "·" not in header else len(BIG)
    assert result.stderr.decode() == (f"a2a-capture: error: {path}:15:1: expected a block number of at most 100 "
                                      f"digits, found one of {digits} digits\n")


def test_a_100_digit_block_number_is_read(tmp_path):
    path = tmp_path / "number.http"
    path.write_text(HEAD + block(number=int("9" * 100)))
    result = run("show", "--format", "json", str(path))
    assert json.loads(result.stdout)[0]["number"] == int("9" * 100)


def test_invalid_utf8_gives_valid_json_sarif_and_reports(tmp_path):
    path = tmp_path / "bytes.http"
    path.write_bytes(INVALID_UTF8)
    for command in (["show", "--format", "json"], ["analyze", "--format", "json"], ["analyze", "--format", "sarif"]):
        result = run(*command, str(path))
        assert result.returncode in (0, 1), result.stderr
        json.loads(result.stdout.decode("utf-8"))  # valid UTF-8, valid JSON
    for suffix in ("md", "html"):
        out = tmp_path / f"r.{suffix}"
        assert run("report", str(path), "-o", str(out)).returncode == 0
        assert "\\udcff" in out.read_bytes().decode("utf-8")  # the bad byte shown escaped


@pytest.mark.parametrize("command", [["analyze"], ["analyze", "--format", "json"], ["report"],
                                     ["check", "--baseline", "{dir}/b.json", "--update-baseline"]])
def test_output_into_a_missing_folder_is_a_usage_error(tmp_path, command):
    target = tmp_path / "missing" / "out.md"
    command = [part.replace("{dir}", str(tmp_path / "missing")) for part in command]
    args = [*command, str(DATA / "sample-session.http")]
    if "check" not in command:
        args += ["-o", str(target)]
    result = run(*args)
    assert result.returncode == 2
    assert result.stderr.decode().startswith("a2a-capture: error: cannot write ")
    assert "No such file or directory" in result.stderr.decode()


def test_a_port_past_65535_is_a_usage_error(tmp_path):
    result = run("record", "--agent", "http://127.0.0.1:1", "--listen", "127.0.0.1:99999", "-o", str(tmp_path / "x"))
    assert result.returncode == 2
    assert "should be HOST:PORT with a port up to 65535" in result.stderr.decode()


def test_replaying_an_exchange_without_a_host_names_it(tmp_path):
    path = tmp_path / "no-host.http"
    path.write_text(CASES["no-host"])
    result = run("replay", str(path), "--target", "a=http://127.0.0.1:9")
    assert result.returncode == 2
    assert result.stderr.decode() == ("a2a-capture: error: exchange 1 names no agent (no Host header, no absolute "
                                      "URL); replay cannot tell where to send it\n")


def _answering(seen: list):
    """An ASGI app that notes each request's path and headers and answers {}."""

    async def answer(scope, receive, send):
        seen.append((scope["path"], scope["headers"]))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    return answer


def _replay(path, url):
    return run("replay", str(path), "--target", f"a:1={url}", "--no-delay", "--wait-for-state", "0",
               "--wait-for-webhooks", "0")


@pytest.mark.live
def test_replaying_a_target_that_makes_no_url_names_it(tmp_path):
    """Found by replaying fuzzed HAR files: a target `:` made httpx's InvalidURL reach the catch-all."""
    from tests.live import serve

    path = tmp_path / "colon.http"
    path.write_text(HEAD + block(request="GET : HTTP/1.1\nHost: a:1\n\n"))
    with serve(_answering([])) as url:
        result = _replay(path, url)
    assert result.returncode == 2, result.stderr
    assert result.stderr.decode() == (f"a2a-capture: error: exchange 1: '{url}:' is no URL to send it to "
                                      f"(Invalid port: '{url.rsplit(':', 1)[1]}:')\n")


@pytest.mark.live
def test_replay_sends_header_bytes_as_recorded(tmp_path):
    """Found by replaying fuzzed HAR files: a header value that is not ASCII reached the catch-all."""
    from tests.live import serve

    path = tmp_path / "bytes.http"
    path.write_bytes((HEAD + block(request="GET /x HTTP/1.1\nHost: a:1\nX-Name: caf\u00e9 \udcff\n\n"))
                     .encode("utf-8", "surrogateescape"))
    seen = []
    with serve(_answering(seen)) as url:
        result = _replay(path, url)
    assert result.returncode in (0, 1), result.stderr
    assert (b"x-name", "caf\u00e9 \udcff".encode("utf-8", "surrogateescape")) in seen[-1][1]


def test_a_gzip_bomb_is_capped_while_inflating():
    bomb = gzip.compress(b"\0" * (MAX_DECODED + 4096))
    assert decode_content(bomb, "gzip") == bomb  # too large: left as it travelled
    assert decode_content(gzip.compress(b"{}"), "gzip") == b"{}"


HAR_ENTRY = {"startedDateTime": "2026-11-30T07:40:01Z", "time": 1,
             "request": {"method": "GET", "url": "http://a/x", "httpVersion": "HTTP/1.1", "headers": []},
             "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [],
                          "content": {"size": 0, "mimeType": "x", "text": ""}}}
HAR_DAMAGE = {
    "request-a-number": (["request"], 5), "headers-a-string": (["request", "headers"], "x"),
    "header-a-number": (["request", "headers"], [5]),
    "header-name-a-number": (["request", "headers"], [{"name": 5, "value": None}]),
    "url-a-number": (["request", "url"], 5), "url-bad-ipv6": (["request", "url"], "http://[::1/x"),
    "status-a-word": (["response", "status"], "x"), "content-a-list": (["response", "content"], []),
    "text-a-number": (["response", "content", "text"], 5), "date-a-number": (["startedDateTime"], 5),
    "time-a-word": (["time"], "x"), "post-data-a-number": (["request", "postData"], 7),
    "bad-base64": (["response", "content"], {"text": "!!", "encoding": "base64"}),
    "text-a-lone-surrogate": (["response", "content", "text"], "\ud800x"),  # found by the fuzzer
    "body-after-a-100": (["response"], {"status": 100, "content": {"text": "x"}}),  # found by the fuzzer
    "reason-with-a-line-break": (["response", "statusText"], "OK\r"),  # found by the fuzzer, as the next two
    "header-value-with-a-vertical-tab": (["request", "headers"], [{"name": "Host", "value": "\x0b"}]),
    "url-port-past-65535": (["request", "url"], "http://a:99999/x"),
    "status-past-999": (["response", "status"], 10**30),
    "method-missing": (["request"], {"url": "http://a/x"}), "method-a-number": (["request", "method"], 5),
    "method-not-a-token": (["request", "method"], "\x80"), "header-name-not-a-token": (["request", "headers"],
                                                                                      [{"name": "a b", "value": ""}]),
    "header-value-with-a-line-break": (["request", "headers"], [{"name": "a", "value": "x\r\nInjected: 1"}]),
    "header-value-null": (["request", "headers"], [{"name": "a", "value": None}]),
    "notes-a-number": (["_a2aNotes"], 5), "event-notes-keyed-by-words": (["_a2aEventNotes"], {"x": ["n"]}),
    "late-body-a-list": (["_a2aLate"], {"body": []}), "event-times-words": (["_a2aEventTimes"], ["x"]),
    "number-a-float": (["_a2aNumber"], 1.5), "number-negative": (["_a2aNumber"], -1),
    "trailers-a-dict": (["_a2aTrailers"], {}),
}


@pytest.mark.parametrize("name", sorted(HAR_DAMAGE))
def test_har_members_of_the_wrong_type(tmp_path, name):
    import copy

    entry = copy.deepcopy(HAR_ENTRY)
    where, value = HAR_DAMAGE[name]
    target = entry
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    path = tmp_path / f"{name}.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": [HAR_ENTRY, entry]}}))
    result = run("show", str(path))
    assert_contract(result, path)
    member = "$.log.entries[1]." + ".".join(where)  # the exact member (or one inside it) is named
    assert result.stderr.decode().startswith(f"a2a-capture: error: {path}: {member}"), result.stderr


HAR_LOG_DAMAGE = {
    "creator-a-string": ({"creator": "x"}, "$.log.creator: expected an object or null, found a string ('x')"),
    "creator-name-a-list": ({"creator": {"name": []}}, "$.log.creator.name: expected a string or null, found a list"),
    "notes-a-string": ({"_a2aNotes": "x"}, "$.log._a2aNotes: expected a list or null, found a string ('x')"),
    "meta-key-not-a-pragma-key": ({"_a2aMeta": [["\u0000ormat", "x"]]},
                                  "$.log._a2aMeta[0][0]: expected a #@ key (letters, digits, '-', '_' or '.'), "
                                  "found a string ('\\x00ormat')"),
    "meta-not-pairs": ({"_a2aMeta": [["a"]]}, "$.log._a2aMeta[0]: expected a pair [a #@ key (letters, "
                                         "digits, '-', '_' or '.'), a string], found a list"),
    "huge-time": ({"entries": [{**HAR_ENTRY, "time": 1e308}]}, None),
}


@pytest.mark.parametrize("name", sorted(HAR_LOG_DAMAGE))
def test_har_log_members_of_the_wrong_type(tmp_path, name):
    members, message = HAR_LOG_DAMAGE[name]
    path = tmp_path / f"{name}.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": [HAR_ENTRY], **members}}))
    result = run("analyze", str(path))
    assert_contract(result, path)
    if message is None:
        assert result.returncode == 0
    else:
        assert result.stderr.decode() == f"a2a-capture: error: {path}: {message}\n"


@pytest.mark.parametrize("text", ['{"log": ' + DEEP + "}", '{"log": {"entries": {}}}', "[]",
                                  '{"log": {"entries": [' + BIG + "]}}"])
def test_har_files_that_are_not_har(tmp_path, text):
    path = tmp_path / "x.har"
    path.write_text(text)
    result = run("analyze", str(path))
    assert result.returncode == 2
    assert_contract(result, path)


# -- the fuzzer: mutations of a real capture, through the reader, analyzer and both reports ------------

SEED = (DATA / "sample-session.http").read_bytes()
EXAMPLES = int(os.environ.get("A2A_CAPTURE_FUZZ_EXAMPLES", "60"))
TOKENS = [b"\n", b"\n\n", b"\r\n", b"### 2 \xc2\xb7 x\n", b"#@ response-body: 3 bytes\n", b"HTTP/1.1 200 OK\n",
          b"data: {}\n\n", b"retry: 99999\n", b"\xff", b"[" * 50, b"Content-Length: 99999999999999999999\n",
          b"Host: [::1\n", b"#@ start: 2026-01-01T00:00:00\n", b"Content-Encoding: gzip\n", b"9" * 30]


@st.composite
def mutated(draw) -> bytes:
    data = bytearray(SEED)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["insert", "delete", "flip"]))
        if action == "insert":
            data[at:at] = draw(st.sampled_from(TOKENS) | st.binary(max_size=12))
        elif action == "delete":
            del data[at:at + draw(st.integers(1, 200))]
        elif at < len(data):
            data[at] = draw(st.integers(0, 255))
    return bytes(data)


#: issue #28's residual inputs, each a named regression case the fuzzer runs first, every time
RESIDUAL = ("huge-block-number", "huge-block-number-later", "huge-webhook-number", "huge-body-length-pragma",
            "one-long-line")


def _residual(test):
    for name in RESIDUAL:
        test = example(data=CASES[name].encode())(test)
    return test


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=mutated())
@_residual
def test_fuzzed_captures_keep_the_contract(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "fuzzed.http"
    path.write_bytes(data)
    for command in (["show", "--format", "json"], ["analyze", "--format", "sarif"]):
        result = run(*command, str(path))
        assert_contract(result, path)
        if result.returncode in (0, 1):
            json.loads(result.stdout.decode("utf-8"))
    for suffix in ("md", "html"):
        assert_contract(run("report", str(path), "-o", str(folder / f"r.{suffix}")), path)
