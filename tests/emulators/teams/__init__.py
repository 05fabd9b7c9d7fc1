"""A Microsoft Teams emulator: Bot Connector, token service and signing keys."""

from tests.emulators.teams.emulator import Posted, TeamsEmulator

__all__ = ["Posted", "TeamsEmulator"]
