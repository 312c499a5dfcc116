"""A report streams: its overview is made of aggregates, and its walkthrough's exchanges are read
again, laid out and let go one at a time as the report is written."""

from __future__ import annotations

import pytest

from a2a_capture.report import render, walkthrough
from a2a_capture.report.render import TemplateError
from tests.conftest import ROOT

CAPTURES = sorted(str(p) for p in (ROOT / "captures").glob("*.http"))


def test_the_walkthrough_is_made_each_time_it_is_read():
    model = walkthrough.build(CAPTURES, groups=[[file] for file in CAPTURES])
    first, again = list(model.exchanges), list(model.exchanges)
    assert len(first) == len(model.exchanges) == model.shown == model.summary["exchanges"] == 46
    assert [view.model_dump() for view in first] == [view.model_dump() for view in again]
    assert first[0] is not again[0]  # made again, not kept
    assert model.exchanges[7].heading == first[7].heading and model.exchanges[-1].anchor == first[-1].anchor
    with pytest.raises(IndexError):
        model.exchanges[46]
    flagged = [view.anchor for view in first if view.findings]
    alone = walkthrough.build(CAPTURES, only_flagged=True, groups=[[file] for file in CAPTURES])
    assert [view.anchor for view in alone.exchanges] == flagged and alone.shown == len(flagged)


def test_the_flagged_exchanges_link_to_each_other_in_order():
    views = [view for view in walkthrough.build(CAPTURES).exchanges if view.findings]
    assert len(views) > 2
    for before, view, after in zip(views, views[1:], views[2:], strict=False):
        assert view.previous_flagged == before.anchor and view.next_flagged == after.anchor
    assert views[0].previous_flagged is None and views[-1].next_flagged is None


@pytest.mark.kit
def test_a_stream_held_too_long_is_listed_with_the_frames_it_had(kit, monkeypatch):
    path = str(kit / "07-auth-required.http")  # a stream whose frames 4 to 6 come after exchange 2
    held = [view.listing for view in walkthrough.build([path]).exchanges]
    assert [listing.count("data: ") for listing in held] == [6, 0]
    monkeypatch.setattr(walkthrough, "MAX_HELD", 0)  # nothing waits: the later frames stay where they are
    views = list(walkthrough.build([path]).exchanges)
    assert [view.listing.count("data: ") for view in views] == [3, 3]  # every frame listed, none lost
    assert "belong to the stream" not in views[1].note


def test_a_report_is_written_as_it_is_made_and_a_failed_one_leaves_nothing(tmp_path):
    model = walkthrough.build(CAPTURES[:3])
    for kind, suffix in (("html", "html"), ("md", "md"), ("summary", "md"), ("listings", "md")):
        out = tmp_path / f"report-{kind}.{suffix}"
        render.write(model, kind, out)
        assert out.read_text() == render.render(model, kind), kind
    own = tmp_path / "mine"
    own.mkdir()
    (own / "report.md.j2").write_text("{% for ex in model.exchanges %}{{ ex.label }}\n{% endfor %}{{ model.nope }}")
    out = tmp_path / "broken.md"
    with pytest.raises(TemplateError):
        render.write(model, "md", out, str(own))
    assert not out.exists()
