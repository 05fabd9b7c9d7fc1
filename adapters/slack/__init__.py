"""Slack: questions as Block Kit messages, answers from clicks, over Socket Mode or HTTP."""

from askbridge.adapters.slack.runtime import SlackConfig, SlackRuntime
from askbridge.adapters.slack.surface import SlackSurface

__all__ = ["SlackConfig", "SlackRuntime", "SlackSurface"]
