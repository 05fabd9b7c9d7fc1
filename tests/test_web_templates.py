"""The page's markup comes only from templates that escape every value: no template and no
module of the web adapter turns escaping off or marks text safe, so nothing an agent or a person
wrote reaches the HTML as markup. Nothing is marked safe anywhere today; should something ever
need to be, it belongs in one place that this file names."""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
import pytest

from askbridge.adapters.web import render

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "adapters" / "web"
TEMPLATES = sorted((WEB / "templates").glob("*.html"))

UNSAFE_IN_TEMPLATES = {
    "a value marked safe": re.compile(r"\|\s*safe\b"),
    "escaping turned off or on by hand": re.compile(r"\{%-?\s*autoescape\b"),
    "raw, unparsed text": re.compile(r"\{%-?\s*raw\b"),
    "Markup built in a template": re.compile(r"\bMarkup\b"),
}
UNSAFE_IN_PYTHON = {
    "markupsafe's Markup, which is never escaped": re.compile(r"\bMarkup\b|\bmarkupsafe\b"),
    "an object that renders itself as HTML": re.compile(r"__html__"),
    "escaping turned off": re.compile(r"autoescape\s*=\s*(False|select_autoescape)"),
    "html.escape at a call site, instead of a template": re.compile(
        r"\bhtml\.escape\b|\bfrom html import\b.*\bescape\b"
    ),
    "a second template environment": re.compile(r"\bEnvironment\("),
}
ONE_ENVIRONMENT = WEB / "render.py"


def test_the_templates_are_there() -> None:
    assert {path.name for path in TEMPLATES} >= {
        "base.html",
        "form.html",
        "index.html",
        "outcome.html",
        "notice.html",
        "out_of_date.html",
        "parts.html",
    }


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda path: path.name)
def test_no_template_lets_text_through_unescaped(path: Path) -> None:
    source = path.read_text()
    found = [what for what, pattern in UNSAFE_IN_TEMPLATES.items() if pattern.search(source)]
    assert found == [], f"{path.name}: {', '.join(found)}"


REWORDING = re.compile(
    r"\|\s*(lower|upper|capitalize|title|replace|trim)\b"
    r"|\.(lower|upper|capitalize|title|replace|strip|lstrip|rstrip)\("
)
"""A template changing the case or the ends of a text: words a person reads are core's, written
once in the form each surface shows them (`core.changes.CHANGE_HINT` was lowercased here)."""


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda path: path.name)
def test_no_template_rewords_what_it_is_given(path: Path) -> None:
    found = [match.group(0) for match in REWORDING.finditer(path.read_text())]
    assert found == [], f"{path.name}: {', '.join(found)}"


def test_no_module_of_the_web_adapter_marks_text_safe() -> None:
    found = []
    for path in sorted(WEB.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            for what, pattern in UNSAFE_IN_PYTHON.items():
                allowed = what == "a second template environment" and path == ONE_ENVIRONMENT
                if pattern.search(line) and not (allowed and "jinja2.Environment(" in line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {what}")
    assert found == []


def test_the_one_environment_escapes_every_template_and_fails_on_a_missing_value() -> None:
    environment = render.TEMPLATES
    assert environment.autoescape is True
    assert environment.undefined is jinja2.StrictUndefined
    for path in TEMPLATES:
        template = environment.get_template(path.name)
        assert template.environment is environment
    assert environment.from_string("{{ text }}").render(text="<b a='1'>&") == (
        "&lt;b a=&#39;1&#39;&gt;&amp;"
    )
    with pytest.raises(jinja2.UndefinedError, match="'heading' is undefined"):
        environment.get_template("form.html").render(title="t", version=1, watching="")
