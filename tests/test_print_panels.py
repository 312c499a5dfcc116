"""Printed, no finding panel of the README example's report splits across pages, and its sequence
diagram, longer than a page, prints in parts each under the lifelines' names: read from the PDF
real headless Chromium makes, page by page (pypdf's text of each page)."""

from __future__ import annotations

import io
import re
import unicodedata

import pytest
from pypdf import PdfReader

from a2a_capture.report import render, walkthrough
from tests.conftest import ROOT
from tests.test_report import open_page


def _squeezed(text: str) -> str:
    """Text without its white space, ligatures as their letters: a PDF's text and the page's break
    lines differently, and the PDF's font draws "ff" and "fi" as one glyph each."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def _split_panels(page) -> tuple[list[str], list[str]]:
    """The printed report's pages' text, and the finding panels no one page holds whole."""
    page.emulate_media(media="print")
    panels = [_squeezed(text) for text in page.eval_on_selector_all(
        "aside.finding", "es => es.filter(e => e.offsetParent !== null).map(e => e.innerText)")]
    pages = [_squeezed(one.extract_text()) for one in PdfReader(io.BytesIO(page.pdf(format="A4"))).pages]
    assert panels and len(pages) > 1
    return pages, [panel[:60] for panel in panels if not any(panel in text for text in pages)]


@pytest.mark.browser
def test_no_finding_panel_splits_across_pages_of_the_readme_example(browser, tmp_path):
    files = sorted(str(path) for path in (ROOT / "captures").glob("*.http"))
    out = tmp_path / "report.html"
    out.write_text(render.render(walkthrough.build(files, groups=[[file] for file in files]), "html"))
    page, _ = open_page(browser, out)
    assert not page.locator(".figure-pages").is_visible()  # on screen, the diagram in one piece
    pages, split = _split_panels(page)
    assert split == [], f"of {len(pages)} pages"
    parts = page.locator(".figure-pages svg.sequence-page")
    assert parts.count() == 3 and not page.locator("svg.sequence").is_visible()
    assert page.locator(".figure-pages a").count() == page.locator("svg.sequence a").count() == 38
    names = _squeezed("client test-runner code-reviewer deployer")  # the lifelines, atop each part
    assert sum(text.count(names) for text in pages) == 3  # each part under them, the whole diagram not printed
    page.close()


@pytest.mark.browser
def test_the_pdf_reading_finds_a_panel_a_page_break_cuts(browser, tmp_path):
    """The same reading on a page whose one panel is taller than the room left on the first page
    and may break: it is found split."""
    out = tmp_path / "split.html"
    words = " ".join(f"word{number}" for number in range(900))
    out.write_text(f"<!doctype html><style>.finding {{ break-inside: auto; }}</style><div style='height: 20cm'></div>"
                   f"<aside class='finding'><p>{words}</p></aside>")
    page, _ = open_page(browser, out)
    pages, split = _split_panels(page)
    assert len(pages) == 2 and len(split) == 1 and split[0].startswith("word0word1word2")
    page.close()


def test_a_diagram_a_page_holds_is_not_cut_and_a_longer_one_is_cut_between_arrows():
    from a2a_capture.report import svg

    arrows = [svg.Arrow(anchor=f"ex-{n}", label=f"call {n}", lifeline="agent", answer="completed", wasted=False,
                        events=0, webhook=False) for n in range(1, 61)]
    assert svg.sequence_pages(["agent"], arrows[:15]) == []
    parts = svg.sequence_pages(["agent"], arrows)
    assert len(parts) == 3 and all(part.count('class="lifeline-name"') == 2 for part in parts)
    drawn = [re.findall(r'<a href="#(ex-\d+)"', part) for part in parts]
    assert [link for part in drawn for link in part] == [f"ex-{n}" for n in range(1, 61)]
    assert all(len(set(re.findall(r'marker id="([^"]+)"', part))) == 1 for part in parts)
    assert len({re.search(r'marker id="([^"]+)"', part).group(1) for part in parts}) == 3
