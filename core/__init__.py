"""The askbridge question broker: models, validation, lifecycle, store and agent API.

Nothing in this package knows about a chat platform; surfaces plug in through
`core.surface.Surface`.
"""
