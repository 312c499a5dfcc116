"""Render a report model with Jinja2 templates: the shipped ones, or a user's own."""

from __future__ import annotations

import re
from collections.abc import Iterator

import jinja2

from a2a_capture.errors import TemplateError, WriteError, open_output, remove_partial, write_text
from a2a_capture.report.walkthrough import ReportModel
from a2a_capture.resources import templates_dir

FORMATS = {"html": "report.html.j2", "md": "report.md.j2", "summary": "report.summary.md.j2",
           "listings": "report.listings.md.j2"}
#: what a pull-request comment or a CI step summary takes
SUMMARY_LIMIT = 64 * 1024
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def _md(text: object) -> str:
    """Text from a capture, made inert in Markdown: no markup, no HTML, no table breaks."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


def _code(text: object) -> str:
    """A Markdown code span that holds any text: delimited by more backticks than it contains."""
    value = " ".join(str(text).split("\n"))
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value.strip() else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"


def _quote(text: object) -> str:
    """Text for a Markdown block quote: escaped, and every line of it still inside the quote."""
    return "\n> ".join(_MD_SPECIAL.sub(r"\\\1", line) for line in str(text).splitlines() or [""])


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in the text."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def environment(user_dir: str | None = None) -> jinja2.Environment:
    search = [user_dir, str(templates_dir())] if user_dir else [str(templates_dir())]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(search),
        # everything from a capture is untrusted: escape it in HTML, always
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["md"] = _md
    env.filters["fence"] = _fence
    env.filters["code"] = _code
    env.filters["quote"] = _quote
    env.filters["linked"] = _linked
    return env


@jinja2.pass_context
def _linked(context, text: str, anchor: str) -> str:
    """A Markdown link to ``anchor`` in the report (``model.links``: the address before the `#`;
    None: a summary read apart from its report, where the text stands alone)."""
    prefix = context["model"].links
    return text if prefix is None else f"[{text}]({prefix}{anchor})"


#: the longest comment GitHub takes, in characters
COMMENT_LIMIT = 65_536


def render(model: ReportModel, output_format: str, user_dir: str | None = None) -> str:
    """The whole report as one text (a test's, a library user's); ``write`` streams it to a file."""
    text = "".join(pieces(model, output_format, user_dir))
    if output_format == "summary" and len(text.encode()) > SUMMARY_LIMIT:
        text = _trim_summary(text)
    return text


def pieces(model: ReportModel, output_format: str, user_dir: str | None = None) -> Iterator[str]:
    """The report as Jinja2 makes it, a piece at a time (``Template.generate``): the walkthrough's
    exchanges are read and let go as their pieces pass, so no whole report is ever held."""
    try:
        template = environment(user_dir).get_template(FORMATS[output_format])
        yield from template.generate(model=model)
    except jinja2.TemplateNotFound as error:
        raise TemplateError(f"template {error.name} not found in {user_dir or templates_dir()}") from None
    except jinja2.TemplateError as error:
        raise TemplateError(f"template error: {error}") from None


#: pieces gathered before a write: Jinja2 hands over many small ones
_WRITE_AT = 1 << 16


def write(model: ReportModel, output_format: str, path, user_dir: str | None = None) -> None:
    """The report written to ``path`` as it is made (a summary, small and trimmed to its limit,
    whole); a report that fails half-way leaves no file behind."""
    if output_format == "summary":
        write_text(path, render(model, output_format, user_dir))
        return
    stream = open_output(path)
    try:
        with stream:
            waiting, size, total = [], 0, 0
            for piece in pieces(model, output_format, user_dir):
                waiting.append(piece)
                size += len(piece)
                total += len(piece)
                if size >= _WRITE_AT:
                    stream.write("".join(waiting))
                    waiting, size = [], 0
            if output_format == "md" and total > COMMENT_LIMIT:  # said where a reader of the Markdown sees it
                waiting.append(f"\n> This report is {total:,} characters, over the {COMMENT_LIMIT:,} a GitHub "
                               "comment takes: post `report --summary` there and link this.\n")
            stream.write("".join(waiting))
    except BrokenPipeError:  # the reader of standard output stopped reading: not an error
        raise
    except OSError as error:
        remove_partial(path)
        raise WriteError(path, error.strerror or str(error)) from None
    except BaseException:
        remove_partial(path)
        raise


def _trim_summary(text: str) -> str:
    """Cut a summary at a line boundary so it fits where summaries go, and say so."""
    tail = "\n\n… the summary is cut here to stay under 64 KB; the full report has the rest.\n"
    budget = SUMMARY_LIMIT - len(tail.encode()) - 16
    kept = text.encode()[:budget].decode("utf-8", "ignore")
    return kept[: kept.rfind("\n")] + tail

