"""Microsoft Teams: questions as Adaptive Cards, answered with Universal Actions, over the
Microsoft 365 Agents SDK."""

from askbridge.adapters.teams.runtime import TeamsConfig, TeamsRuntime

__all__ = ["TeamsConfig", "TeamsRuntime"]
