"""Links to one request's page on the web page, for a chat message that must cut a tool call.

`ASKBRIDGE_PUBLIC_URL` is where people reach the web page. A link to a request's page carries a
token, the HMAC-SHA256 of the request id under the web page's key: it opens that request's page
and nothing else (another request, the list), and whoever opens it answers under the
request's usual policy, as anyone on the page does. Tokens are compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from urllib.parse import quote

TOKEN_PARAM = "token"
"""The query parameter (and form field) a link's token travels in."""
_PURPOSE = b"askbridge request page v1\x00"
"""Sets these tokens apart from anything else the same key signs (the page's forms)."""


def page_token(key: bytes, request_id: str) -> str:
    """The token that opens `request_id`'s page."""
    signed = _PURPOSE + request_id.encode("utf-8", "replace")
    return hmac.new(key, signed, hashlib.sha256).hexdigest()


def opens(key: bytes, request_id: str, given: object) -> bool:
    """Whether `given` is the token of `request_id`'s page."""
    if not isinstance(given, str) or not given:
        return False
    expected = page_token(key, request_id).encode()
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected)


@dataclass(frozen=True)
class PublicLinks:
    """Where the web page is reached (`url`, no trailing slash), and the key its links are
    signed with."""

    url: str
    key: bytes

    def request_page(self, request_id: str) -> str:
        """The link to `request_id`'s page, with its token."""
        token = page_token(self.key, request_id)
        return f"{self.url}/q/{quote(request_id, safe='')}?{TOKEN_PARAM}={token}"
