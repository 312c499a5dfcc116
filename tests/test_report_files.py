"""Reports of several files: every exchange number a reader meets says which file it is of."""

from __future__ import annotations

import re

from a2a_capture.report import render, walkthrough
from tests.builders import fetch_card, write
from tests.conftest import ROOT

CAPTURES = [str(ROOT / "captures" / name) for name in ("04-polling.http", "07-push-webhook.http", "09-mistakes.http")]


def _each_file():
    return walkthrough.build(CAPTURES, groups=[[file] for file in CAPTURES])


def test_each_file_names_the_file_of_every_exchange_a_finding_mentions():
    model = _each_file()
    messages = [f.message for f in model.findings]
    assert not [m for m in messages if re.search(r"\bexchange \d", m, re.IGNORECASE)], messages
    push = next(f for f in model.findings if f.rule == "capability-push")
    assert "whose card (09-mistakes #7) says capabilities.pushNotifications: false" in push.message
    assert any("04-polling #2 asked to return immediately" in m for m in messages)
    markdown = render.render(model, "md")
    assert "whose card (09-mistakes \\#7)" in markdown and "(exchange 7)" not in markdown
    costliest = max((f for f in model.findings if f.outcome == "wasted"), key=lambda f: f.cost or 0.0)
    named = costliest.where.replace("#", "\\#")  # the costliest wasted round trip, by the name of its file
    assert re.fullmatch(r"\d\d-[a-z-]+ \\#\d+", named) and f"Worst wasted round trip: [{named}](#{costliest.anchor})" \
        in markdown
    summary = render.render(model, "summary")
    assert "(exchange " not in summary and "whose card (09-mistakes \\#7)" in summary
    html = render.render(model, "html")
    assert "whose card (09-mistakes #7)" in html and "(exchange 7)" not in html
    ids = set(re.findall(r'\bid="([^"]+)"', html))
    assert {"f3-ex-7", "f3-ex-8", "ex-2"} <= ids
    assert not {target for target in re.findall(r'href="#([^"]+)"', html)} - ids  # every link lands


def test_each_file_sequence_in_markdown_says_where_each_file_starts():
    mermaid = _each_file().sequence_mermaid
    notes = [line.strip() for line in mermaid.splitlines() if line.strip().startswith("Note over")]
    assert notes == ["Note over client: 04-polling", "Note over client: 07-push-webhook",
                     "Note over client: 09-mistakes"]
    assert "webhook 1: webhook" not in mermaid and "agent1->>client: webhook 1\n" in mermaid


def test_a_webhook_is_named_as_one():
    model = _each_file()
    names = {view.name for view in model.exchanges if view.webhook}
    assert "07-push-webhook webhook 1" in names and not any("#webhook" in name for name in names)
    webhooks = str(ROOT / "captures" / "07-push-webhook.http")
    alone = walkthrough.build([webhooks])
    assert "Webhook 1" in {view.name for view in alone.exchanges}


def test_one_session_of_several_files_names_the_file_a_message_names(tmp_path):
    first = write(tmp_path, fetch_card(1), name="first.http")
    second = write(tmp_path, fetch_card(1), name="second.http")
    model = walkthrough.build([str(first), str(second)])
    refetch = next(f for f in model.findings if f.rule == "card-refetch")
    assert refetch.where == "second #1"
    assert "first #1 had already fetched it" in refetch.message and "of first.http" not in refetch.message
