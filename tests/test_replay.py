"""Replay and regression with real parts: a2a-sdk agents, the a2a-sdk client, mock agents."""

from __future__ import annotations

import asyncio
import json
import subprocess

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest

from a2a_capture import sources
from a2a_capture.capture import read_capture, write_capture
from a2a_capture.replay import client, diff, pace, serve
from a2a_capture.replay.asgi import request_body
from a2a_capture.replay.credentials import Secrets
from tests.builders import block, http_request, http_response
from tests.cli import COMMAND, process_env
from tests.conftest import ROOT
from tests.live import agent, free_port, wait_for_port
from tests.live import serve as serve_app
from tests.test_cli_show import run

CAPTURES = ROOT / "captures"

pytestmark = pytest.mark.live


def runner_agent(**options):
    return agent("test-runner", streaming=options.pop("streaming", True), push=options.pop("push", True), **options)


@pytest.mark.live
def test_replayed_sessions_against_fresh_agents_are_clean():
    # 06-cancel's CancelTask, sent 4 ms after its SendMessage as recorded, lands before the first
    # artifact: the agent's "slow" task holds it for SLOW_START (test below)
    with runner_agent() as url:
        for name in ("02-blocking-send", "03-streaming", "06-cancel", "08-rest-binding"):
            old = read_capture(CAPTURES / f"{name}.http")
            new = client.replay(old, {"test-runner": url})
            changes = diff.compare(old, new)
            assert changes == [], (name, [c.line() for c in changes])
            assert len(new.exchanges) == len(old.exchanges)


@pytest.mark.live
def test_a_slow_task_is_canceled_before_its_first_artifact_whatever_the_step():
    """A cancel sent as soon as the send returns finds no artifact, even with 1 ms agent steps:
    what keeps 06-cancel's replays above from racing the agent."""
    with runner_agent(step=0.001) as url, httpx.Client(timeout=30, headers={"A2A-Version": "1.0"}) as http:
        def call(number: int, method: str, params: dict) -> dict:
            answer = http.post(f"{url}/a2a/jsonrpc", json={"jsonrpc": "2.0", "id": number, "method": method,
                                                            "params": params})
            return answer.json()["result"]

        message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "slow"}]}
        sent = call(1, "SendMessage", {"message": message, "configuration": {"returnImmediately": True}})
        canceled = call(2, "CancelTask", {"id": sent["task"]["id"]})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert "artifacts" not in canceled, canceled["artifacts"]


@pytest.mark.live
def test_server_made_ids_are_learned_and_substituted():
    old = read_capture(CAPTURES / "08-rest-binding.http")
    with runner_agent() as url:
        new = client.replay(old, {"test-runner": url})
    recorded_task = old.exchanges[2].request.target.rsplit("/", 1)[-1]
    sent_task = new.exchanges[2].request.target.rsplit("/", 1)[-1]
    assert sent_task != recorded_task  # the new run's task id, not the recorded one
    assert json.loads(new.exchanges[1].response.body)["task"]["id"] == sent_task
    assert new.exchanges[2].response.status == 200


def _counting_app(hits: list):
    """An ASGI app that notes each path asked for and answers {}."""

    async def counter(scope, receive, send):
        hits.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    return counter


@pytest.mark.live
def test_replay_command_refuses_agents_it_was_not_told_about(tmp_path):
    hits = []
    counter = _counting_app(hits)
    with serve_app(counter) as url:
        result = run("replay", str(CAPTURES / "01-discovery.http"), "--target", f"test-runner={url}")
    assert result.returncode == 2
    assert b"no --target for code-reviewer (127.0.0.1:51242), deployer (127.0.0.1:51243)" in result.stderr
    assert hits == []  # nothing was sent anywhere


def test_a_header_secret_may_be_given_whole_or_as_the_credentials_alone():
    recorded = "Bearer [redacted: bearer credentials, sha256:0b9173]"
    assert Secrets({"Authorization": "Bearer abc"}, environ={}).fill("Authorization", recorded) == "Bearer abc"
    assert Secrets({"authorization": "abc"}, environ={}).fill("Authorization", recorded) == "Bearer abc"
    assert Secrets({"Authorization": "Token x y"}, environ={}).fill("Authorization", recorded) == "Token x y"
    assert Secrets({}, environ={}).fill("Authorization", recorded) is None
    assert Secrets({}, environ={"A2A_CAPTURE_SECRET_AUTHORIZATION": "e"}).fill("Authorization", recorded) == "Bearer e"


@pytest.mark.live
def test_redacted_credentials_are_restored_only_when_given(tmp_path, monkeypatch):
    seen = []

    async def echo(scope, receive, send):
        while (await receive()).get("more_body"):
            pass
        seen.append(dict(scope["headers"]))
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"ok"})

    port = free_port()
    path = tmp_path / "secret.http"
    path.write_text(block(1, "call", http_request(
        "GET", "/x", ["Authorization: Bearer [redacted: bearer credentials, sha256:abc123]"], host=f"127.0.0.1:{port}"),
        http_response(200, "ok", content_type="text/plain")) + "\n")
    with serve_app(echo, port) as url:
        client.replay(read_capture(path), {f"127.0.0.1:{port}": url})
        client.replay(read_capture(path), {f"127.0.0.1:{port}": url}, {"Authorization": "Bearer real"})
        monkeypatch.setenv("A2A_CAPTURE_SECRET_AUTHORIZATION", "Bearer from-env")
        client.replay(read_capture(path), {f"127.0.0.1:{port}": url})
    assert b"authorization" not in seen[0]  # never the marker
    assert seen[1][b"authorization"] == b"Bearer real"
    assert seen[2][b"authorization"] == b"Bearer from-env"


def _stream_states(base: str) -> list[str]:
    async def session():
        async with httpx.AsyncClient() as http:
            sdk = await create_client(base, ClientConfig(httpx_client=http))
            request = SendMessageRequest(message=Message(message_id="stream-1", role=Role.ROLE_USER,
                                                         parts=[Part(text="run the unit tests")]))
            states = []
            async for event in sdk.send_message(request):
                if event.HasField("task"):
                    states.append(("task", event.task.status.state))
                elif event.HasField("status_update"):
                    states.append(("status", event.status_update.status.state))
                elif event.HasField("artifact_update"):
                    states.append(("artifact", event.artifact_update.artifact.parts[0].text))
            return states
    return asyncio.run(session())


@pytest.mark.live
def test_an_sdk_client_gets_the_same_stream_from_serve_as_from_the_real_agent():
    (mock,) = serve.mock_agents(read_capture(CAPTURES / "03-streaming.http"), speed=0)
    port = free_port()
    mock.public = f"http://127.0.0.1:{port}"
    with serve_app(mock, port) as mock_url:
        from_mock = _stream_states(mock_url)
    with runner_agent() as real_url:
        from_agent = _stream_states(real_url)
    assert from_mock == from_agent
    assert [kind for kind, _ in from_mock] == ["task", "status", "artifact", "artifact", "artifact", "status"]


@pytest.mark.live
def test_serve_names_the_nearest_recording_when_nothing_matches():
    (mock,) = serve.mock_agents(read_capture(CAPTURES / "02-blocking-send.http"))
    with serve_app(mock) as url, httpx.Client() as http:
        other = http.post(f"{url}/a2a/jsonrpc", json={"jsonrpc": "2.0", "id": 9, "method": "SendMessage", "params": {
            "message": {"messageId": "x", "role": "ROLE_USER", "parts": [{"text": "something else"}]}}})
        unknown = http.post(f"{url}/a2a/jsonrpc", json={"jsonrpc": "2.0", "id": 10, "method": "GetTask",
                                                        "params": {"id": "t"}})
    error = other.json()["error"]
    assert other.json()["id"] == 9 and error["data"][0]["reason"] == "NO_RECORDED_MATCH"
    assert "exchange 2 (POST SendMessage) has another body" in error["message"]
    assert "no recorded POST GetTask; recorded here:" in unknown.json()["error"]["message"]


@pytest.mark.live
def test_serve_command_as_a_mock_agent(tmp_path):
    port = free_port()
    process = subprocess.Popen([*COMMAND, "serve", str(CAPTURES / "02-blocking-send.http"), "--listen",
                                f"test-runner=127.0.0.1:{port}", "--no-delay"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, env=process_env())
    try:
        wait_for_port(port)
        card = httpx.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json").json()
        assert card["supportedInterfaces"][0]["url"] == f"http://127.0.0.1:{port}/a2a/jsonrpc"
    finally:
        process.terminate()
        output = process.communicate(timeout=10)[0].decode()
    assert f"serving test-runner (2 recorded exchanges) at http://127.0.0.1:{port}" in output


@pytest.mark.live
def test_a_changed_agent_fails_diff_and_check(tmp_path):
    original = CAPTURES / "03-streaming.http"
    baseline = tmp_path / "baseline.json"
    assert run("check", str(original), "--baseline", str(baseline), "--update-baseline").returncode == 0
    replayed = tmp_path / "new" / "03-streaming.http"  # re-recorded under the same name
    replayed.parent.mkdir()
    with runner_agent(streaming=False) as url:  # the agent lost its streaming capability
        result = run("replay", str(original), "--target", f"test-runner={url}", "-o", str(replayed))
    assert result.returncode == 1
    assert b"~ 2 -> 2 POST SendStreamingMessage" in result.stdout
    assert run("diff", str(original), str(replayed)).returncode == 1
    checked = run("check", str(replayed), "--baseline", str(baseline))
    assert checked.returncode == 1
    assert b"capability-streaming" in checked.stdout and b"--update-baseline" in checked.stdout


def test_check_baseline_survives_rerecording(tmp_path):
    baseline = tmp_path / "baseline.json"
    mistakes = CAPTURES / "09-mistakes.http"
    assert run("check", str(mistakes), "--baseline", str(baseline)).returncode == 1
    assert run("check", str(mistakes), "--baseline", str(baseline), "--update-baseline").returncode == 0
    data = json.loads(baseline.read_text())
    assert all(set(item) == {"rule", "operation", "agent", "file", "count"} for item in data["findings"])
    assert not any("127.0.0.1" in item["agent"] for item in data["findings"])  # card names, not ports
    passed = run("check", str(mistakes), "--baseline", str(baseline))
    assert passed.returncode == 0 and b"check passed" in passed.stdout
    # the same session recorded again on other ports, with other ids, still passes
    capture = read_capture(mistakes)
    for exchange in capture.exchanges:  # other ports (the cards say so too), other task ids
        exchange.request.headers = [(k, v.replace("5124", "6124")) for k, v in exchange.request.headers]
        if exchange.response is not None:
            exchange.response.body = exchange.response.body.replace(b"5124", b"6124").replace(b"-4", b"-9")
    moved = tmp_path / "again" / "09-mistakes.http"
    moved.parent.mkdir()
    write_capture(capture, moved)
    assert run("check", str(moved), "--baseline", str(baseline)).returncode == 0


@pytest.mark.live
def test_the_pytest_plugin_records_and_replays(pytester):
    pytester.makepyfile(f"""
        import asyncio, httpx, sys
        sys.path.insert(0, {str(ROOT)!r})
        from tests.live import agent

        def test_record(a2a_record):
            with agent("test-runner", streaming=True, push=True) as url:
                session = a2a_record(url)
                httpx.get(session.url + "/.well-known/agent-card.json", timeout=60)
                parts = [{{"text": "run the unit tests"}}]
                message = {{"messageId": "blocking-1", "role": "ROLE_USER", "parts": parts}}
                httpx.post(session.url + "/a2a/jsonrpc", headers={{"A2A-Version": "1.0"}}, timeout=60, json={{
                    "method": "SendMessage", "params": {{"message": message, "configuration": {{}}}},
                    "id": "1", "jsonrpc": "2.0"}})
                session.assert_operations(["card", "SendMessage"])
                session.assert_no_findings()
                session.assert_matches({str(CAPTURES / "02-blocking-send.http")!r})

        def test_record_finds_a_mistake(a2a_record):
            with agent("test-runner", streaming=False) as url:
                session = a2a_record(url)
                httpx.get(session.url + "/.well-known/agent-card.json", timeout=60)
                httpx.post(session.url + "/a2a/jsonrpc", timeout=60, json={{
                    "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": {{"message": {{"messageId": "m", "role": "ROLE_USER", "parts": [{{"text": "run"}}]}}}}}})
                assert [f.rule for f in session.findings()] == ["version-header-missing"]

        def test_replay(a2a_replay):
            with agent("test-runner", streaming=True, push=True) as url:
                a2a_replay({str(CAPTURES / "06-cancel.http")!r}, {{"test-runner": url}}).assert_clean()
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def _recorder_of_requests(seen: list):
    """An ASGI app that keeps each request's headers and body and answers with the body it got."""

    async def app(scope, receive, send):
        body = await request_body(receive)
        seen.append((dict(scope["headers"]), body))
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body or b"{}"})

    return app


@pytest.mark.live
def test_secrets_are_restored_by_where_they_were_and_never_written_out(tmp_path):
    seen = []
    port = free_port()
    mark = "[redacted: token, sha256:{}]".format
    path = tmp_path / "secrets.http"
    body = {"a": {"token": mark("aaaaaa")}, "b": {"token": mark("bbbbbb")}, "c": [{"token": mark("aaaaaa")}]}
    path.write_text(block(1, "call", http_request(
        "POST", "/x", ["Content-Type: application/json", "X-Api-Key: [redacted: x-api-key, sha256:cccccc]"], body,
        host=f"127.0.0.1:{port}"), http_response(200, body)) + "\n")
    new = tmp_path / "new.http"
    with serve_app(_recorder_of_requests(seen), port) as url:
        result = run_with_env({"A2A_CAPTURE_SECRET_X_API_KEY": "gamma-key-3"},
                              "replay", str(path), "--target", f"127.0.0.1:{port}={url}", "--no-delay",
                              "--secret", "$.a.token=alpha-secret-1", "--secret", "$.b.token=beta-secret-2",
                              "-o", str(new))
    assert result.returncode == 0, result.stdout + result.stderr
    headers, sent = seen[0]
    assert json.loads(sent) == {"a": {"token": "alpha-secret-1"}, "b": {"token": "beta-secret-2"},
                                "c": [{"token": "alpha-secret-1"}]}  # the same hash: the same value
    assert headers[b"x-api-key"] == b"gamma-key-3"
    written = new.read_bytes()
    for value in (b"alpha-secret-1", b"beta-secret-2", b"gamma-key-3"):
        assert value not in written and value not in result.stdout + result.stderr
    # the agent echoed the body: its answer carries the recorded markers, hashes and all
    answer = json.loads(read_capture(new).exchanges[0].response.body)
    assert answer == body
    assert read_capture(new).exchanges[0].request.header("X-Api-Key") == "[redacted: x-api-key, sha256:cccccc]"


def run_with_env(env: dict[str, str], *args: str):
    return run(*args, env=env)


@pytest.mark.live
def test_a_stopped_agent_is_named_before_anything_is_sent(tmp_path):
    with runner_agent() as url:
        pass  # started and stopped: nothing listens there now
    output = tmp_path / "new.http"
    result = run("replay", str(CAPTURES / "02-blocking-send.http"), "--target", f"test-runner={url}",
                 "-o", str(output))
    assert result.returncode == 2
    expected = f"a2a-capture: error: cannot reach test-runner at {url}: Connection refused"
    assert result.stderr.decode().strip() == expected
    assert result.stdout == b"" and not output.exists()


@pytest.mark.live
def test_a_bad_url_or_output_stops_replay_before_it_sends(tmp_path):
    hits = []
    counter = _counting_app(hits)
    capture = str(CAPTURES / "02-blocking-send.http")
    with serve_app(counter) as url:
        bad_url = run("replay", capture, "--target", "test-runner=notaurl")
        no_folder = run("replay", capture, "--target", f"test-runner={url}", "-o", str(tmp_path / "no" / "x.http"))
    assert bad_url.returncode == 2 and b"Invalid value for '--target': 'notaurl': expected an http:// or https:// URL" \
        in bad_url.stderr
    assert no_folder.returncode == 2 and b"the folder" in no_folder.stderr and b"does not exist" in no_folder.stderr
    assert len(bad_url.stderr.splitlines()) == len(no_folder.stderr.splitlines()) == 1
    assert hits == []


def test_a_missing_webhook_is_named_by_task_and_state():
    old = read_capture(CAPTURES / "07-push-webhook.http")
    new = old.model_copy(deep=True)
    new.exchanges = [e for e in new.exchanges if not (e.webhook and e.number == 2)]
    lines = [change.line() for change in diff.compare(old, new)]
    assert lines == ["- webhook 2 statusUpdate TASK_STATE_WORKING (task 1)"]
    assert diff.compare(old, old) == []


def test_the_recorded_gap_is_from_one_end_to_the_next_start():
    calls = [e for e in read_capture(CAPTURES / "04-polling.http").exchanges if not e.webhook]
    assert pace.recorded_gap(None, calls[0]) == 0
    assert round(pace.recorded_gap(calls[2], calls[3]), 6) == 0.253322  # 49.749616 -> 50.002938
    assert pace.recorded_gap(calls[3], calls[2]) == 0  # overlapping or out of order: no wait


@pytest.mark.live
def test_diff_replay_serve_and_show_take_har_and_flow_files(tmp_path):
    original = CAPTURES / "02-blocking-send.http"
    copies = {}
    for suffix in (".har", ".mitm", ".flow"):
        copies[suffix] = tmp_path / f"02{suffix}"
        assert run("convert", str(original), "-o", str(copies[suffix])).returncode == 0
        compared = run("diff", str(original), str(copies[suffix]))
        assert compared.returncode == 0, compared.stdout
        shown = run("show", "--format", "http", str(copies[suffix]))
        assert shown.returncode == 0 and shown.stdout.startswith(b"#@ format: a2a-capture/1")
    with runner_agent() as url:
        replayed = run("replay", str(copies[".har"]), "--target", f"test-runner={url}", "--no-delay")
    assert replayed.returncode == 0, replayed.stdout
    (mock,) = serve.mock_agents(sources.capture(copies[".mitm"]), speed=0)
    with serve_app(mock) as url:
        assert httpx.get(f"{url}/.well-known/agent-card.json").json()["name"] == "test-runner"
