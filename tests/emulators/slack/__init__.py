"""A local Slack for end-to-end tests: Web API, Socket Mode, signed HTTP interactions,
response_urls, modals and simulated people, spoken to by the unmodified slack_sdk / slack_bolt
clients.

    async with SlackEmulator() as slack:
        slack.add_user("U1", "alice")
        client = AsyncWebClient(token=slack.identity.bot_token, base_url=slack.api_url)
"""

from .api_log import ApiCall, BlockRejection
from .blocks import block_texts, has_interactive_elements, visible_text
from .delivery import Delivery, Tamper, Via, signature
from .emulator import SlackEmulator
from .mrkdwn import Mentions, MrkdwnMarkup, mentions, mrkdwn_markup, mrkdwn_mentions
from .person import NothingSent, Person
from .response_url import ResponseUrlCall
from .validation import validate_blocks, validate_view
from .views import OpenView, ViewSubmission, answer_of
from .workspace import Channel, Ephemeral, Identity, Message, User

__all__ = [
    "ApiCall",
    "BlockRejection",
    "Channel",
    "Delivery",
    "Ephemeral",
    "Identity",
    "Mentions",
    "Message",
    "MrkdwnMarkup",
    "NothingSent",
    "OpenView",
    "Person",
    "ResponseUrlCall",
    "SlackEmulator",
    "Tamper",
    "User",
    "Via",
    "ViewSubmission",
    "answer_of",
    "block_texts",
    "has_interactive_elements",
    "mentions",
    "mrkdwn_markup",
    "mrkdwn_mentions",
    "signature",
    "validate_blocks",
    "validate_view",
    "visible_text",
]
