"""The agent WebSocket's frames, written by the functions that write them on the wire.

OpenAPI cannot describe a WebSocket; so that this page cannot drift from it either, each frame
askbridge sends is made here by the code that sends it, from an example request.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from askbridge.core.models import Person, Request, Status, Target, UserQuestion, Vote
from askbridge.core.permissions import permission_questions, permission_response
from askbridge.core.wire import (
    ASK,
    FORM,
    FORM_RESPONSE,
    INTERRUPT,
    PERMISSION,
    RESPONSE,
    form_response,
    interrupt,
    permission_answer,
    question_response,
)

FORM_ASKED = {
    "request_id": "form_7a1e",
    "message": "Which ticket is this deploy for?",
    "requested_schema": {
        "type": "object",
        "properties": {
            "ticket": {"type": "integer", "title": "Ticket", "minimum": 1},
            "urgent": {"type": "boolean", "title": "Urgent", "default": False},
        },
        "required": ["ticket"],
    },
}
PROMPT = {
    "tool_name": "Bash",
    "action": "run a command",
    "input": {"command": "make deploy"},
    "details": "in /work/app",
}


def socket_page() -> str:
    question = {
        "question": "Which database should we use?",
        "header": "Database",
        "multiSelect": False,
        "options": [
            {"label": "PostgreSQL", "description": "Relational with advanced features"},
            {"label": "SQLite", "description": "Lightweight embedded database"},
        ],
    }
    frames: list[tuple[str, str, Any]] = [
        ("in", ASK, {ASK: {"request_id": "ask_5f0c", "questions": [question]}}),
        ("in", FORM, {FORM: FORM_ASKED}),
        ("in", PERMISSION, {PERMISSION: PROMPT}),
        ("out", RESPONSE, question_response("ask_5f0c", {"Database": "PostgreSQL"})),
        (
            "out",
            f"{FORM_RESPONSE} (filled in)",
            form_response("form_7a1e", "accept", {"ticket": 4711, "urgent": False}),
        ),
        ("out", f"{FORM_RESPONSE} (declined)", form_response("form_7a1e", "decline")),
        ("out", f"{INTERRUPT} (bare)", interrupt()),
        ("out", f"{INTERRUPT} (with `?interrupt=tagged`)", interrupt("ask_5f0c")),
        ("out", "PermissionResponse", permission_response(PROMPT, _allowed_once())),
        (
            "out",
            "PermissionResponse (denied with a reason, with `?reasons=true`)",
            permission_answer(PROMPT, _denied_with_a_reason(), reasons=True),
        ),
    ]
    lines = []
    for direction, name, frame in frames:
        heading = "sent by the agent" if direction == "in" else "sent by askbridge"
        lines += [f"### {name}, {heading}", "", "```json", json.dumps(frame), "```", ""]
    approval = permission_questions(PROMPT)[0]
    lines += [
        "### How a PermissionRequest is asked",
        "",
        "The prompt above becomes this one question on every surface:",
        "",
        "```json",
        json.dumps(approval, indent=2, ensure_ascii=False),
        "```",
        "",
    ]
    return "\n".join(lines)


def _allowed_once() -> Request:
    """A permission request that someone answered with "Allow once"."""
    return _answered("Allow once")


def _denied_with_a_reason() -> Request:
    """A permission request that alice denied, with a note."""
    return _answered("Deny", "use the staging database")


def _answered(choice: str, note: str = "") -> Request:
    question = UserQuestion.model_validate(permission_questions(PROMPT)[0])
    now = datetime(2026, 1, 1, tzinfo=UTC)
    who = Person(platform="web", id="local", name="web user" if not note else "alice")
    answers = {question.header: choice}
    notes = {question.header: note} if note else {}
    return Request(
        request_id="perm_1",
        questions=(question,),
        targets=(Target(platform="web"),),
        status=Status.ANSWERED,
        answers=answers,
        answered_by=who,
        votes=(Vote(person=who, answers=answers, at=now, notes=notes),),
        created_at=now,
        ended_at=now,
    )
