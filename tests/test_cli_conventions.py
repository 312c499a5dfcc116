"""One set of CLI conventions: the same option names and values mean the same in every command,
old spellings still work, and every usage mistake is one line of the same shape (exit 2)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pytest

from a2a_capture import address
from a2a_capture.cli import main
from a2a_capture.cli.types import FAIL_ON, Duration, Format, HostPort, Named, Setting, Url
from a2a_capture.record import runner
from tests.cli import run
from tests.conftest import DATA, ROOT

CAPTURE = str(ROOT / "captures" / "02-blocking-send.http")

#: boolean flags that are actions or modes, not settings: no --no- form
ACTIONS = {("report", "summary"), ("report", "listings"), ("check", "update_baseline")}


def _options():
    for name, command in sorted(main.commands.items()):
        for param in command.params:
            if isinstance(param, click.Option):
                yield name, param


def _param(command: str, option: str) -> click.Option:
    return next(p for p in main.commands[command].params if option in (*p.opts, *p.secondary_opts))


# -- the same names for the same things -----------------------------------------------------------


def test_every_setting_flag_has_a_no_form():
    for command, param in _options():
        if param.is_flag and not param.hidden and param.flag_value is True and (command, param.name) not in ACTIONS:
            assert param.secondary_opts == [f"--no-{param.opts[0][2:]}"], (command, param.opts)


def test_the_same_option_has_the_same_type_everywhere():
    kinds = {"--format": Format, "--fail-on": type(FAIL_ON), "--proxy": HostPort, "--webhook-listen": HostPort,
             "--listen": Named, "--target": Named, "--agent": Named, "--wait-for-state": Duration,
             "--wait-for-webhooks": Duration, "--secret": Setting}
    seen = set()
    for command, param in _options():
        for option in set(param.opts) & kinds.keys():
            assert isinstance(param.type, kinds[option]), (command, option)
            seen.add(option)
        if "--fail-on" in param.opts:
            assert param.type is FAIL_ON, command
        if "--redact" in param.opts:
            assert param.secondary_opts == ["--no-redact"], command
    assert seen == kinds.keys()
    assert {c for c, p in _options() if "--redact" in p.opts} == {
        "analyze", "check", "convert", "diff", "export", "otel", "record", "replay", "report", "serve", "show", "tidy",
        "view"}


@pytest.mark.parametrize("command, option", [("record", "--listen"), ("record", "--proxy"), ("serve", "--listen"),
                                             ("replay", "--webhook-listen")])
@pytest.mark.parametrize("text, host, port", [("[::1]:8080", "::1", 8080), ("localhost:1", "localhost", 1),
                                              (":65535", "127.0.0.1", 65535), ("10.0.0.5:51241", "10.0.0.5", 51241)])
def test_every_host_port_option_reads_the_same_spellings(command, option, text, host, port):
    value = _param(command, option).type.convert(text, None, None)
    assert value in (runner.Listener(host, port), (None, runner.Listener(host, port)))


@pytest.mark.parametrize("command, option", [("record", "--listen"), ("serve", "--listen")])
def test_every_listen_takes_a_name(command, option):
    read = _param(command, option).type.convert
    assert read("echo=[::1]:80", None, None) == ("echo", runner.Listener("::1", 80))
    named = ("127.0.0.1:41241", runner.Listener("127.0.0.1", 51241))
    assert read("127.0.0.1:41241=127.0.0.1:51241", None, None) == named


@pytest.mark.parametrize("command, option", [("record", "--agent"), ("replay", "--target")])
def test_every_agent_url_option_takes_an_optional_name(command, option):
    read = _param(command, option).type.convert
    assert read("http://127.0.0.1:41241", None, None) == (None, "http://127.0.0.1:41241")
    assert read("echo=http://[::1]:41241/a2a?x=1", None, None) == ("echo", "http://[::1]:41241/a2a?x=1")
    assert read("127.0.0.1:41241=https://h", None, None) == ("127.0.0.1:41241", "https://h")


def test_durations_take_units():
    read = Duration().convert
    assert [read(text, None, None) for text in ("5", "2.5s", "500ms", "1m", ".5")] == [5.0, 2.5, 0.5, 60.0, 0.5]


# -- the same mistakes, the same one line ----------------------------------------------------------------

BAD_HOST_PORT = {
    "127.0.0.1:99999": "'127.0.0.1:99999' should be HOST:PORT with a port up to 65535, such as 127.0.0.1:51241 "
                       "or [::1]:51241",
    "::1:8080": "'::1:8080': put an IPv6 host in brackets, such as [::1]:51241",
    "[::g]:80": "'[::g]:80': [::g] is not an IPv6 address in brackets, such as [::1]:51241",
    "127.0.0.1": "'127.0.0.1' should be HOST:PORT with a port up to 65535, such as 127.0.0.1:51241 or [::1]:51241",
    "a b:80": "'a b:80': 'a b' is not a host name or address, such as 127.0.0.1:51241 or [::1]:51241",
}
#: each HOST:PORT option with the rest of a command line that would otherwise be valid
HOST_PORT_USES = [
    ("record", "--listen", ["--agent", "http://127.0.0.1:41241", "-o", "x.http"]),
    ("record", "--proxy", ["-o", "x.http"]),
    ("serve", "--listen", [CAPTURE]),
    ("replay", "--webhook-listen", [CAPTURE, "--target", "http://127.0.0.1:9"]),
]


def _one_line_usage_error(args, option: str, message: str) -> None:
    result = run(*args)
    assert result.returncode == 2, (args, result.stderr)
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"a2a-capture: error: Invalid value for '{option}': {message}"), lines[0]
    assert lines[0].endswith(f" {args[0]} --help)")  # a2a-capture, or python -m a2a_capture.cli
    assert result.stdout == b""


@pytest.mark.parametrize("command, option, rest", HOST_PORT_USES)
@pytest.mark.parametrize("value", BAD_HOST_PORT)
def test_a_bad_host_port_is_the_same_line_in_every_command(command, option, rest, value, tmp_path):
    _one_line_usage_error([command, *rest, option, value], option, BAD_HOST_PORT[value])


def test_port_0_means_a_free_port_only_where_one_can_be_taken():
    _one_line_usage_error(["record", "--proxy", "127.0.0.1:0", "-o", "x.http"], "--proxy",
                          "'127.0.0.1:0' has port 0: give a port from 1 to 65535")
    assert _param("serve", "--listen").type.convert("127.0.0.1:0", None, None)[1].port == 0


@pytest.mark.parametrize("args, option, message", [
    (["show", CAPTURE, "--format", "xml"], "--format", "'xml' is not one of 'text', 'json', 'http'"),
    (["rules", "--format", "xml"], "--format", "'xml' is not one of 'text', 'markdown'"),
    (["analyze", CAPTURE, "--format", "xml"], "--format", "'xml' is not one of 'text', 'json', 'sarif', 'junit'"),
    (["report", CAPTURE, "-o", "r.html", "--format", "xml"], "--format", "'xml' is not one of 'html', 'markdown'"),
    (["analyze", CAPTURE, "--fail-on", "sometimes"], "--fail-on",
     "'sometimes' is not one of 'error', 'warning', 'info', 'never'"),
    (["check", CAPTURE, "--baseline", "b.json", "--fail-on", "sometimes"], "--fail-on",
     "'sometimes' is not one of 'error', 'warning', 'info', 'never'"),
    (["record", "--proxy", ":8080", "-o", "x", "--fail-on", "sometimes", "--", "true"], "--fail-on",
     "'sometimes' is not one of 'error', 'warning', 'info', 'never'"),
    (["replay", CAPTURE, "--target", "a=notaurl"], "--target",
     "'notaurl': expected an http:// or https:// URL with a host, such as http://127.0.0.1:41241"),
    (["replay", CAPTURE, "--target", "=http://h"], "--target", "'=http://h': the NAME before `=` is empty"),
    (["record", "--agent", "ftp://h", "--listen", ":1", "-o", "x"], "--agent",
     "'ftp://h': expected an http:// or https:// URL with a host"),
    (["record", "--agent", "http://h:99999", "--listen", ":1", "-o", "x"], "--agent",
     "'http://h:99999': expected an http:// or https:// URL with a host"),
    (["serve", CAPTURE, "--listen", "=:80"], "--listen", "'=:80': the NAME before `=` is empty"),
    (["replay", CAPTURE, "--target", "http://h", "--secret", "Authorization"], "--secret",
     "'Authorization' should be NAME=VALUE"),
    (["replay", CAPTURE, "--target", "http://h", "--wait-for-state", "soon"], "--wait-for-state",
     "'soon' is not a duration: give seconds, such as 5, 2.5s or 500ms"),
    (["replay", CAPTURE, "--target", "http://h", "--wait-for-webhooks", "-1"], "--wait-for-webhooks",
     "'-1' is not a duration"),
    (["replay", CAPTURE, "--target", "http://h", "--speed", "0"], "--speed", "0.0 is not in the range x>0"),
    (["serve", CAPTURE, "--speed", "-1"], "--speed", "-1.0 is not in the range x>0"),
])
def test_a_bad_value_is_one_line_naming_the_option(args, option, message):
    _one_line_usage_error(args, option, message)


SESSION_COMMANDS = [["analyze", CAPTURE], ["report", CAPTURE, "-o", "r.html"],
                    ["check", CAPTURE, "--baseline", "b.json"], ["export", CAPTURE, "-o", "tables"]]


@pytest.mark.parametrize("command", SESSION_COMMANDS, ids=lambda args: args[0])
@pytest.mark.parametrize("option, value, message", [
    ("--jobs", "0", "0 is not in the range x>=1"),
    ("--engine", "spark", "'spark' is not one of 'local', 'dask'"),
])
def test_the_shared_session_options_fail_alike(command, option, value, message):
    shown = "-j' / '--jobs" if option == "--jobs" else option
    _one_line_usage_error([*command, option, value], shown, message)


@pytest.mark.parametrize("args, line", [
    (["replay", CAPTURE], "a2a-capture: error: Missing option '--target' (see a2a-capture replay --help)"),
    (["show"], "a2a-capture: error: Missing argument 'FILES...' (see a2a-capture show --help)"),
    (["shwo"], "a2a-capture: error: No such command 'shwo'. Did you mean 'show'? (see a2a-capture --help)"),
    (["show", "--colour", CAPTURE],
     "a2a-capture: error: No such option '--colour'. Did you mean '--color'? (see a2a-capture show --help)"),
    (["record", "--proxy", ":8080", "-o", "x", "--check"],
     "a2a-capture: error: --check, --fail-on and --allow-empty go with a command: record ... -- COMMAND "
     "(see a2a-capture record --help)"),
])
def test_every_usage_mistake_is_one_line(args, line):
    result = run(*args)
    assert result.returncode == 2 and result.stderr.decode().splitlines() == [line]


# -- old spellings still work ---------------------------------------------------------------------------


@pytest.mark.parametrize("args, old, new", [
    (["show", CAPTURE, "--format"], "table", "text"),
    (["rules", "--format"], "table", "text"),
    (["rules", "--format"], "md", "markdown"),
    (["analyze", CAPTURE, "--fail-on", "never", "--format"], "table", "text"),
])
def test_old_format_names_are_aliases(args, old, new):
    before, after = run(*args, old), run(*args, new)
    assert before.returncode == after.returncode == 0, before.stderr
    assert before.stdout == after.stdout and after.stdout


def test_report_format_md_is_markdown(tmp_path):
    for name in ("md", "markdown"):
        assert run("report", CAPTURE, "-o", str(tmp_path / name), "--format", name).returncode == 0
    assert (tmp_path / "md").read_text() == (tmp_path / "markdown").read_text()
    assert (tmp_path / "md").read_text().startswith("# ")


def test_convert_names_a_mitmproxy_flow_file_mitm_or_flow(tmp_path):
    for name in ("mitm", "flow"):  # suffixes that tell nothing: only --from/--to say what the files are
        assert run("convert", CAPTURE, "--to", name, "-o", str(tmp_path / f"{name}.out")).returncode == 0
        result = run("convert", str(tmp_path / f"{name}.out"), "--from", name, "-o", str(tmp_path / f"{name}.http"))
        assert result.returncode == 0, result.stderr
    assert (tmp_path / "flow.http").read_bytes() == (tmp_path / "mitm.http").read_bytes() == Path(CAPTURE).read_bytes()
    assert "also called flow" in " ".join(run("convert", "--help").stdout.decode().split())
    assert "| `flow` | `mitm` | `convert --from`, `--to` |" in (ROOT / "docs" / "cli.md").read_text()


def test_help_names_only_the_canonical_spellings():
    for command in ("show", "rules", "report", "tidy", "convert"):
        text = run(command, "--help").stdout.decode()
        assert "table|" not in text and "|table" not in text and "|md]" not in text, command
        assert "show-secrets" not in text, command
    assert "[text|markdown]" in run("rules", "--help").stdout.decode()


@pytest.fixture
def secret_capture(tmp_path):
    text = (DATA / "sample-session.http").read_bytes()
    path = tmp_path / "secret.http"
    host = b"Host: 127.0.0.1:41241\n"
    path.write_bytes(text.replace(host, host + b"Authorization: Bearer sekret_42\n", 1))
    return path


@pytest.mark.parametrize("command, suffix", [("report", ".md"), ("tidy", ".http"), ("convert", ".har")])
def test_show_secrets_is_the_old_spelling_of_no_redact(command, suffix, secret_capture, tmp_path):
    outputs = {}
    for flag in ("--redact", "--no-redact", "--show-secrets"):
        out = tmp_path / f"{flag.strip('-')}{suffix}"
        result = run(command, str(secret_capture), "-o", str(out), flag)
        assert result.returncode == 0, result.stderr
        outputs[flag] = out.read_text()
    assert "sekret_42" in outputs["--no-redact"] and "sekret_42" not in outputs["--redact"]
    assert outputs["--show-secrets"] == outputs["--no-redact"]


def test_no_delay_and_no_redact_keep_their_meaning():
    assert _param("replay", "--no-delay").name == _param("serve", "--no-delay").name == "delay"
    assert _param("record", "--no-redact").default is True and _param("record", "--no-rewrite-cards").default is True


# -- one way to pair a name with an address -------------------------------------------------------------


def test_pair_by_name_then_by_order():
    names = [["echo", "127.0.0.1:1"], ["mail", "127.0.0.1:2"], ["chat", "127.0.0.1:3"]]
    assert address.pair([(None, "a"), ("mail", "m")], names, "--x") == ["a", "m", None]
    assert address.pair([("127.0.0.1:3", "c"), (None, "a"), (None, "b")], names, "--x") == ["a", "b", "c"]
    with pytest.raises(address.AddressError, match="--x names nope, which is none of the agents: echo, mail, chat"):
        address.pair([("nope", "n")], names, "--x")
    assert address.pair([("nope", "n")], names, "--x", others_named=True) == [None, None, None]
    with pytest.raises(address.AddressError, match=r"4 --x for 3 agents \(echo, mail, chat\): 1 left over"):
        address.pair([(None, "a")] * 4, names, "--x")


def test_record_pairs_agents_and_listeners_by_name_or_position():
    one, two = runner.Listener("127.0.0.1", 51241), runner.Listener("127.0.0.1", 51242)
    agents = [("echo", "http://127.0.0.1:41241/"), (None, "http://127.0.0.1:41242")]
    expected = [("http://127.0.0.1:41241", one), ("http://127.0.0.1:41242", two)]
    assert runner.agent_listeners(agents, [(None, one), (None, two)]) == expected
    assert runner.agent_listeners(agents, [("127.0.0.1:41242", two), ("echo", one)]) == expected
    assert runner.agent_listeners(agents, [(None, two), ("echo", one)])[1] == expected[1]
    with pytest.raises(runner.RecordError, match=r"no --listen for http://127\.0\.0\.1:41242"):
        runner.agent_listeners(agents, [("echo", one)])
    args = runner.command("x.http", expected, None, mitmdump="mitmdump")
    assert "reverse:http://127.0.0.1:41242@127.0.0.1:51242" in args


def test_record_names_the_agent_a_listen_does_not_match():
    result = run("record", "--agent", "echo=http://127.0.0.1:41241", "--listen", "ehco=:51241", "-o", "x.http")
    assert result.returncode == 2
    assert result.stderr.decode().splitlines() == [
        "a2a-capture: error: --listen names ehco, which is none of the agents: echo"]


def test_replay_takes_an_unnamed_target_for_the_next_agent():
    from a2a_capture import sources
    from a2a_capture.replay.client import resolve_targets

    capture = sources.capture(CAPTURE)
    by_position = resolve_targets(capture, [(None, "http://127.0.0.1:9/")])
    assert by_position == resolve_targets(capture, {"test-runner": "http://127.0.0.1:9"}) == \
        {"http://127.0.0.1:51241": "http://127.0.0.1:9"}


def test_serve_takes_listeners_by_name_or_position():
    from a2a_capture import sources
    from a2a_capture.replay import serve
    from a2a_capture.replay.runner import assign

    agents = serve.mock_agents(sources.capture(CAPTURE), 0.0)
    where = runner.Listener("::1", 8080)
    assert assign(agents, [(None, where)]) == assign(agents, [("test-runner", where)]) == [(agents[0], where)]
    assert assign(agents, []) == [(agents[0], runner.Listener("127.0.0.1", 0))]


def test_url_type_refuses_what_preflight_would():
    with pytest.raises(click.BadParameter):
        Url().convert("http://:80", None, None)


@pytest.mark.live
def test_record_pairs_named_listeners_through_real_mitmdump(tmp_path):
    from a2a_capture.capture import read_capture
    from tests.live import agent, free_port
    from tests.test_record_command import CLIENT, _record

    output = tmp_path / "named.http"
    first, second = free_port(), free_port()
    with agent("test-runner") as runner_url, agent("deployer") as deployer_url:
        # named in the opposite order to --agent: by position, deployer would get the first port
        done = _record("--agent", f"deploy={deployer_url}", "--agent", f"tests={runner_url}",
                       "--listen", f"tests=127.0.0.1:{first}", "--listen", f"deploy=127.0.0.1:{second}",
                       "-o", str(output), "--", sys.executable, "-c", CLIENT, "0")
    assert done.returncode == 0, done.stderr
    exchanges = read_capture(output).exchanges
    assert exchanges[0].title == "discover deployer"  # the client used the first listener, deployer's
    assert exchanges[0].request.header("host") == f"127.0.0.1:{second}"


def test_docs_cli_shows_a_real_error_line():
    result = run("record", "--agent", "http://127.0.0.1:41241", "--listen", "127.0.0.1:99999", "-o", "x.http")
    assert result.stderr.decode().strip() in (ROOT / "docs" / "cli.md").read_text()


def test_the_docs_name_every_suffix_read_as_a_har_or_flow_file():
    from a2a_capture.sources import CONVERTED

    for doc in ("README.md", "docs/many-sessions.md"):
        text = (ROOT / doc).read_text()
        assert [suffix for suffix in CONVERTED if f"`{suffix}`" not in text] == [], doc


# -- python -m a2a_capture ---------------------------------------------------------------------------


def test_python_m_a2a_capture_runs_the_cli_under_the_name_typed():
    import subprocess

    from tests.cli import process_env

    command = [sys.executable, "-m", "a2a_capture"]
    shown = subprocess.run([*command, "--help"], capture_output=True, text=True, env=process_env(), timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("Usage: python -m a2a_capture [OPTIONS] COMMAND"), shown.stdout
    assert all(name in shown.stdout for name in ("analyze", "check", "record", "report")), shown.stdout
    wrong = subprocess.run([*command, "analyze", "--fail-on", "x", CAPTURE], capture_output=True, text=True,
                           env=process_env(), timeout=120)
    assert wrong.returncode == 2
    assert wrong.stderr.strip().endswith("(see python -m a2a_capture analyze --help)"), wrong.stderr
