"""Agent hosts whose own prompts askbridge answers: Claude Code's hooks and the Agent SDK."""
