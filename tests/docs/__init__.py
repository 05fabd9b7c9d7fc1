"""The documentation site's build: reference pages generated from the code, and its pictures."""
