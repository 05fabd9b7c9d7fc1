"""Typed forms: what a person is asked to fill in, in MCP elicitation's restricted JSON Schema.

A form is a `message` and a flat object schema (`requested_schema`, MCP's `requestedSchema`):
strings (with lengths and the formats email, uri, date, date-time), numbers and integers with
bounds, booleans, single-choice enums (`enum` + `enumNames`, or `oneOf` of `const`/`title`) and
multi-choice arrays of such an enum, plus `required`. `parse_form` reads one as strictly as
questions are read, in words an agent's model can act on; `check_content` and `read_text`
check what a person or a deadline gives, and keep its types.

The engine keeps a form's values the way it keeps answers, as text keyed by field name: each
value is its RFC 8785 canonical JSON (`encode`), so votes agree exactly when every value is
equal, and `decode` gives the typed values back losslessly.

The rest of askbridge imports forms from here; each part has its own module: the models
(`form_schema`), the schema read (`form_parsing`), values checked (`form_checks`), and values
kept and shown (`form_values`).
"""

from __future__ import annotations

from askbridge.core.form_checks import FieldProblem as FieldProblem
from askbridge.core.form_checks import FormRefused as FormRefused
from askbridge.core.form_checks import check_content as check_content
from askbridge.core.form_checks import check_value as check_value
from askbridge.core.form_checks import read_input as read_input
from askbridge.core.form_checks import read_text as read_text
from askbridge.core.form_parsing import as_uri as as_uri
from askbridge.core.form_parsing import parse_form as parse_form
from askbridge.core.form_schema import FEW_FIELDS as FEW_FIELDS
from askbridge.core.form_schema import (
    MAX_CHOICE_TITLE_CHARS as MAX_CHOICE_TITLE_CHARS,
)
from askbridge.core.form_schema import (
    MAX_CHOICE_VALUE_CHARS as MAX_CHOICE_VALUE_CHARS,
)
from askbridge.core.form_schema import MAX_CHOICES as MAX_CHOICES
from askbridge.core.form_schema import MAX_DESCRIPTION_CHARS as MAX_DESCRIPTION_CHARS
from askbridge.core.form_schema import MAX_FIELDS as MAX_FIELDS
from askbridge.core.form_schema import MAX_MESSAGE_CHARS as MAX_MESSAGE_CHARS
from askbridge.core.form_schema import MAX_NAME_CHARS as MAX_NAME_CHARS
from askbridge.core.form_schema import MAX_SAFE_INTEGER as MAX_SAFE_INTEGER
from askbridge.core.form_schema import MAX_TEXT_CHARS as MAX_TEXT_CHARS
from askbridge.core.form_schema import MAX_TITLE_CHARS as MAX_TITLE_CHARS
from askbridge.core.form_schema import Choice as Choice
from askbridge.core.form_schema import FieldKind as FieldKind
from askbridge.core.form_schema import Form as Form
from askbridge.core.form_schema import FormField as FormField
from askbridge.core.form_values import decode as decode
from askbridge.core.form_values import encode as encode
from askbridge.core.form_values import filled_in as filled_in
from askbridge.core.form_values import number_range as number_range
from askbridge.core.form_values import number_text as number_text
from askbridge.core.form_values import shown_value as shown_value
