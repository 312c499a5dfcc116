"""Render a report model with Jinja2 templates: the shipped ones, or a user's own."""

from __future__ import annotations

import re

import jinja2

from a2a_capture.errors import A2ACaptureError
from a2a_capture.report.walkthrough import ReportModel
from a2a_capture.resources import templates_dir

FORMATS = {"html": "report.html.j2", "md": "report.md.j2"}
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


class TemplateError(A2ACaptureError):
    """A template is missing or broken."""


def _md(text: object) -> str:
    """Text from a capture, made inert in Markdown: no markup, no HTML, no table breaks."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


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
    return env


def render(model: ReportModel, output_format: str, user_dir: str | None = None) -> str:
    try:
        template = environment(user_dir).get_template(FORMATS[output_format])
        return template.render(model=model)
    except jinja2.TemplateNotFound as error:
        raise TemplateError(f"template {error.name} not found in {user_dir or templates_dir()}") from None
    except jinja2.TemplateError as error:
        raise TemplateError(f"template error: {error}") from None
