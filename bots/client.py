"""A small async client for the agent API.

`await client.ask(questions)` creates the request and long-polls until it ends;
`await client.ask_form(message, requested_schema)` does the same for a typed form. It survives
a server restart or a dropped connection: creating is idempotent by `request_id`, so it simply
asks again and keeps waiting.
"""

from __future__ import annotations

import hmac
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import aiohttp
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_delay

from askbridge.core.ask import Ask
from askbridge.core.errors import InvalidQuestion
from askbridge.core.models import UserQuestion, UserQuestionResponse
from askbridge.core.retry import doubling
from askbridge.core.subject import Subject, earlier_subject_sha256, subject_sha256
from askbridge.core.surface import SurfaceWords

log = logging.getLogger("askbridge.client")

POLL_S = 60
# A call the server answers at once (all but a long-poll) may take this long. Creating posts the
# question to each platform before it answers, which a platform that is slow or asks it to wait
# (a rate limit's Retry-After, retried twice) may make take many seconds; a server that takes
# the connection but does not answer (stopped, stuck, overloaded) is said after this, instead
# of after a long-poll's limit.
REPLY_WITHIN_S = 30.0
# A long-poll answers after the wait it asked for; the slack is for a busy server and network.
LONG_POLL_SLACK_S = 30.0
# Nothing has been asked yet: a server that is not there should be said at once, while a
# restart of a few seconds is still ridden out.
CREATE_PATIENCE_S = 3.0
RECONNECT_WAIT = doubling(0.25, 5.0, jitter=(1.0, 1.0))
"""Between tries to reach askbridge again: a quarter second, doubling up to 5 s."""


class ClientError(Exception):
    """askbridge answered with an error, or could not be reached for too long."""

    def __init__(self, message: str, status: int = 0, body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body or {}


class Unreachable(ClientError):
    """askbridge could not be reached at the client's URL for as long as the client waits."""


class Unanswered(ClientError):
    """askbridge took the call but did not answer in time: what was asked may yet be done (a
    question created) once the server runs again."""


class InvalidRequest(ClientError):
    """The question was rejected (HTTP 422); `str(error)` says how to fix it."""


class Ended(ClientError):
    """The request ended without answers."""

    def __init__(self, message: str, status_object: dict[str, Any]) -> None:
        super().__init__(message, body=status_object)
        self.status_object = status_object


class Interrupted(Ended):
    """Someone pressed Cancel."""


class Expired(Ended):
    """Nobody answered before the deadline."""


class Withdrawn(Ended):
    """The request was withdrawn."""


class Declined(Ended):
    """Someone declined the typed form (only `ask` of a form raises it; `ask_form` returns
    the decline)."""


@dataclass(frozen=True)
class FormAnswer:
    """How a typed form ended, as MCP elicitation's result says it: `accept` with the `content`
    a person gave (typed as the schema says: integers as int, booleans as bool, dates as ISO
    texts), `decline` (a person said no), or `cancel` (cancelled, expired or withdrawn)."""

    request_id: str
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] = field(default_factory=dict)
    status_object: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, status_object: dict[str, Any]) -> FormAnswer:
        """The answer a form's ended status object carries."""
        return cls(
            request_id=status_object["request_id"],
            action=status_object["action"],
            content=status_object.get("content") or {},
            status_object=status_object,
        )


_ENDINGS: dict[str, type[Ended]] = {
    "cancelled": Interrupted,
    "expired": Expired,
    "withdrawn": Withdrawn,
    "declined": Declined,
}


class AskbridgeClient:
    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        reconnect_for_s: float = 300.0,
        session: aiohttp.ClientSession | None = None,
        notice: Callable[[str], None] | None = None,
        create_patience_s: float = CREATE_PATIENCE_S,
        reply_within_s: float = REPLY_WITHIN_S,
    ) -> None:
        """`notice` hears when the server becomes unreachable and when it is back;
        `reply_within_s` is how long a call other than a long-poll may take."""
        self.url = url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._reconnect_for_s = reconnect_for_s
        self._create_patience_s = create_patience_s
        self._reply_within_s = reply_within_s
        self._session = session
        self._own_session = session is None
        self._notice = notice or log.info
        self._lost = False

    async def __aenter__(self) -> AskbridgeClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._own_session and self._session is not None:
            await self._session.close()
            self._session = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

    async def ask(
        self,
        questions: Ask | Sequence[UserQuestion | dict[str, Any]],
        *,
        target: str | dict[str, Any] | list[str | dict[str, Any]] | None = None,
        timeout_s: float | None = None,
        context: str | None = None,
        request_id: str | None = None,
        **policy: Any,
    ) -> UserQuestionResponse:
        """Ask and wait for the answers; raise Interrupted, Expired or Withdrawn otherwise.

        `questions` is an `Ask`, or the questions with the other fields as keywords;
        `policy` takes the other fields of the API: answerers, quorum, on_timeout,
        remind_after_s, allow_other, allow_notes, callback_url, escalation, subject,
        requested_by, no_self_approval. InvalidRequest, before
        anything is sent, when a rule refuses the ask.
        """
        body = request_body(questions, target, timeout_s, context, request_id, **policy)
        created = await self._call(
            "POST", "/v1/questions", json=body, patience_s=self._create_patience_s
        )
        # Waiting re-creates with the same body (idempotent) if the server lost the request.
        final = await self.wait(created["request_id"], recreate=body)
        return outcome(final)

    async def ask_form(
        self,
        message: str,
        requested_schema: Mapping[str, Any] | None = None,
        *,
        url: str | None = None,
        target: str | dict[str, Any] | list[str | dict[str, Any]] | None = None,
        timeout_s: float | None = None,
        context: str | None = None,
        request_id: str | None = None,
        **policy: Any,
    ) -> FormAnswer:
        """Ask people to fill in a typed form and wait until it ends: its action and typed
        content. `requested_schema` is MCP elicitation's (a flat object of strings, numbers,
        integers, booleans and enums); `url`, instead, asks a person to open a link and say
        Done or Decline. `policy` takes the other fields of the API: answerers, quorum,
        on_timeout ({"content": {...}}, "decline" or "expire"), remind_after_s, callback_url,
        escalation, subject, requested_by, no_self_approval. InvalidRequest, before anything
        is sent, when a rule refuses the form."""
        form: dict[str, Any] = {"message": message}
        if requested_schema is not None:
            form["requested_schema"] = dict(requested_schema)
        if url is not None:
            form["url"] = url
        fields = {"target": target, "timeout_s": timeout_s, "context": context, **policy}
        fields["request_id"] = request_id
        given = {key: value for key, value in fields.items() if value is not None}
        body = checked({"form": form, **given}).body()
        created = await self._call(
            "POST", "/v1/questions", json=body, patience_s=self._create_patience_s
        )
        return FormAnswer.of(await self.wait(created["request_id"], recreate=body))

    async def create(
        self,
        questions: Ask | Sequence[UserQuestion | dict[str, Any]],
        *,
        target: str | dict[str, Any] | list[str | dict[str, Any]] | None = None,
        timeout_s: float | None = None,
        context: str | None = None,
        request_id: str | None = None,
        **policy: Any,
    ) -> dict[str, Any]:
        body = request_body(questions, target, timeout_s, context, request_id, **policy)
        return await self._call(
            "POST", "/v1/questions", json=body, patience_s=self._create_patience_s
        )

    async def get(self, request_id: str, wait_s: float = 0) -> dict[str, Any]:
        if not wait_s:
            return await self._call("GET", f"/v1/questions/{request_id}")
        return await self._call(
            "GET", f"/v1/questions/{request_id}?wait={wait_s:g}", limit_s=wait_s + LONG_POLL_SLACK_S
        )

    async def wait(
        self,
        request_id: str,
        *,
        recreate: dict[str, Any] | None = None,
        poll_s: float = POLL_S,
        seen: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Long-poll until the request ends. A long-poll returns at once when the request
        ends, else after `poll_s`; `seen` hears the status object each one returns."""
        while True:
            try:
                found = await self.get(request_id, poll_s)
            except ClientError as error:
                # A server that lost the request (or a fresh one) gets it again, same id.
                if error.status != 404 or not recreate:
                    raise
                found = await self._call("POST", "/v1/questions", json=recreate)
            if found["status"] != "waiting":
                return found
            if seen is not None:
                seen(found)

    async def withdraw(self, request_id: str) -> dict[str, Any]:
        return await self._call("DELETE", f"/v1/questions/{request_id}")

    async def events(
        self, request_id: str | None = None, since: str | None = None
    ) -> list[dict[str, Any]]:
        """The audit trail, oldest first."""
        query = {k: v for k, v in (("request_id", request_id), ("since", since)) if v}
        body = await self._call("GET", "/v1/events", params=query)
        events: list[dict[str, Any]] = body["events"]
        return events

    async def export_audit(
        self,
        write: Callable[[bytes], object],
        *,
        request_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> None:
        """Stream the audit log with its hashes (`GET /v1/audit/export`, JSON lines) into
        `write`, a line at a time."""
        query = {
            k: v for k, v in (("request_id", request_id), ("since", since), ("until", until)) if v
        }
        async with self.session.get(
            f"{self.url}/v1/audit/export",
            params=query,
            headers=self._headers,
            timeout=aiohttp.ClientTimeout(total=None, sock_read=POLL_S),
        ) as response:
            if response.status >= 400:
                body = await _json(response)
                message = body.get("error") or f"HTTP {response.status}"
                raise ClientError(str(message), response.status, body)
            async for line in response.content:
                write(line)

    async def _call(
        self,
        method: str,
        path: str,
        *,
        patience_s: float | None = None,
        limit_s: float | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """One API call; connection failures are retried for `patience_s` (default: the
        client's reconnect_for_s); each try may take `limit_s` (default: reply_within_s)."""
        patience = self._reconnect_for_s if patience_s is None else patience_s
        limit = self._reply_within_s if limit_s is None else limit_s

        def lost(state: RetryCallState) -> None:
            if not self._lost:
                self._lost = True
                error = state.outcome.exception() if state.outcome else None
                why = described(error) if error is not None else "no answer"
                self._notice(f"askbridge at {self.url} is unreachable ({why}); retrying")

        try:
            async for attempt in AsyncRetrying(
                wait=RECONNECT_WAIT,
                stop=stop_after_delay(patience),
                retry=retry_if_exception_type((aiohttp.ClientConnectionError, TimeoutError)),
                before_sleep=lost,
                reraise=True,
            ):
                with attempt:
                    return await self._call_once(method, path, limit, **kwargs)
        except aiohttp.ConnectionTimeoutError as error:
            raise self._unreachable(error) from error
        except TimeoutError as error:
            # Connected, and the request sent: the server took it and said nothing.
            raise Unanswered(
                f"askbridge at {self.url} did not answer within {limit:g} s; check that "
                "`askbridge serve` there is not stopped or overloaded (its log says what it is "
                "doing)"
            ) from error
        except aiohttp.ClientConnectionError as error:
            raise self._unreachable(error) from error
        raise AssertionError("retrying ends in a return or an error")

    def _unreachable(self, error: BaseException) -> Unreachable:
        return Unreachable(
            f"askbridge at {self.url} is unreachable ({described(error)}); is `askbridge serve` "
            "running there?"
        )

    async def _call_once(
        self, method: str, path: str, limit_s: float, **kwargs: Any
    ) -> dict[str, Any]:
        if self._lost:
            await self._probe()
        async with self.session.request(
            method,
            self.url + path,
            headers=self._headers,
            timeout=aiohttp.ClientTimeout(total=limit_s),
            **kwargs,
        ) as response:
            body = await _json(response)
            if response.status == 401:
                raise ClientError(self._refused(), response.status, body)
            if response.status >= 400:
                kind = InvalidRequest if response.status == 422 else ClientError
                message = body.get("error") or f"HTTP {response.status}"
                raise kind(str(message), response.status, body)
            return body

    def _refused(self) -> str:
        """Why the server refused the token: the server's words name the header to send,
        which this client sends when it has a token."""
        if self._headers:
            why = "the API token given is not the server's"
        else:
            why = "it needs an API token, and none was given"
        return f"askbridge at {self.url} refused this request: {why}"

    async def _probe(self) -> None:
        """After an outage: a quick call, so that the way back is told at once, not when a
        long-poll that may wait a minute ends."""
        async with self.session.get(
            f"{self.url}/healthz", timeout=aiohttp.ClientTimeout(total=self._reply_within_s)
        ) as response:
            await response.read()
        self._lost = False
        self._notice(f"askbridge at {self.url} is reachable again")


def described(error: BaseException) -> str:
    """An error as a few words: its text, or its kind when it has none (a timeout has none)."""
    return str(error) or type(error).__name__


def request_body(
    questions: Ask | Sequence[UserQuestion | dict[str, Any]],
    target: str | dict[str, Any] | list[str | dict[str, Any]] | None = None,
    timeout_s: float | None = None,
    context: str | None = None,
    request_id: str | None = None,
    **policy: Any,
) -> dict[str, Any]:
    """The body of `POST /v1/questions`, checked here by the server's own rules."""
    fields = {"target": target, "timeout_s": timeout_s, "context": context, **policy}
    fields["request_id"] = request_id
    given = {key: value for key, value in fields.items() if value is not None}
    if isinstance(questions, Ask):
        if given:
            raise TypeError(f"an Ask carries its own fields; got {', '.join(given)} as well")
        return checked(questions).body()
    raw: dict[str, Any] = {
        "questions": [
            q.model_dump(mode="json") if isinstance(q, UserQuestion) else q for q in questions
        ]
        if isinstance(questions, list | tuple)
        else questions
    }
    return checked({**raw, **given}).body()


def subject_matches(decision: Mapping[str, Any], subject: Subject) -> bool:
    """Whether `decision` (a status object, or a webhook's body) was made about exactly
    `subject` (a JSON object, or a text): its subject_sha256 is the SHA-256 of the RFC 8785
    canonical JSON of what the agent is about to do. Check it before acting on an approval.
    A decision made before askbridge used RFC 8785 carries the digest of the earlier canonical
    JSON, which is checked too: both are exact writings of the same value."""
    digest = decision.get("subject_sha256")
    if not isinstance(digest, str):
        return False
    expected = [subject_sha256(subject), earlier_subject_sha256(subject)]
    return any(hmac.compare_digest(digest, e) for e in expected if e is not None)


def _words() -> SurfaceWords:
    # Imported when first needed: the client alone need not load the registry's settings.
    from askbridge.bots.surfaces import surface_words

    return surface_words()


def checked(ask: Ask | Mapping[str, Any]) -> Ask:
    """The ask as the server reads it (`Ask`), with a request_id made up when none is given so
    that asking again is idempotent; InvalidRequest, with the server's text, when refused."""
    if not isinstance(ask, Ask):
        try:
            ask = Ask.parse(ask, _words())
        except InvalidQuestion as error:
            body = {"error": str(error), "details": error.details()}
            raise InvalidRequest(str(error), 422, body) from None
    if ask.request_id is None:
        ask = ask.model_copy(update={"request_id": f"ask_{uuid.uuid4()}"})
    return ask


def outcome(status_object: dict[str, Any]) -> UserQuestionResponse:
    """The answers an ended AskUserQuestion's status object carries; Interrupted, Expired,
    Withdrawn (or Ended) when it has none. A form's is read by `FormAnswer.of`."""
    status = status_object["status"]
    if status == "answered":
        return UserQuestionResponse(
            request_id=status_object["request_id"], answers=status_object["answers"]
        )
    ending = _ENDINGS.get(status, Ended)
    raise ending(status_object.get("error") or status, status_object)


async def _json(response: aiohttp.ClientResponse) -> dict[str, Any]:
    try:
        body = await response.json(content_type=None)
    except ValueError:
        return {"error": (await response.text())[:200]}
    return body if isinstance(body, dict) else {"error": str(body)}
