"""The agent's address, not the recorder's: a recording made through a listener (the client
pointed at 127.0.0.1:51241, the recorder passing calls to the agent on 41241, as each exchange's
`#@ server:` says) names the agent in the report's titles, Agents section and diagrams."""

from __future__ import annotations

from a2a_capture.report import render, walkthrough
from tests.conftest import ROOT

MISTAKES = str(ROOT / "captures" / "09-mistakes.http")


def test_the_report_names_the_agent_and_says_which_listener_it_was_recorded_through():
    model = walkthrough.build([MISTAKES])
    runner = next(agent for agent in model.agents if agent.name == "test-runner")
    assert runner.origin == "http://127.0.0.1:41241" and runner.listener == "http://127.0.0.1:51241"
    assert runner.interfaces == ["JSONRPC 1.0 http://127.0.0.1:41241/a2a/jsonrpc",
                                 "HTTP+JSON 1.0 http://127.0.0.1:41241/a2a/rest"]
    for figure in (model.sequence_svg, model.sequence_narrow_svg, model.sequence_mermaid):
        assert "5124" not in figure and "127.0.0.1:41241" in figure
    assert next(iter(model.exchanges)).heading == "1 · discover http://127.0.0.1:41241 at /.well-known/agent.json"
    html = render.render(walkthrough.build([MISTAKES]), "html")
    assert "recorded through <code>http://127.0.0.1:51241</code>" in html
    assert "Host: 127.0.0.1:51241" in html  # the listing is the wire, as it was
