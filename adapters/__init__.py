"""Surfaces where people answer: the local web page, Slack and Discord."""
