"""askbridge with the real `claude` CLI and the Claude Agent SDK, against a fake Anthropic API."""
