"""Local emulators of chat platforms, spoken to over their real HTTP/WebSocket protocols."""
