"""What an operator is told when the database's schema is not the one this askbridge uses.

Nothing downgrades a schema (`transactions.migrate`); the refusal rolls back before any
write, so it can say that nothing was changed.
"""

from __future__ import annotations


def too_new(found: int, known: int) -> str:
    """A newer askbridge upgraded the database: this one would misread what it wrote."""
    return (
        f"the database's schema is version {found}, newer than this askbridge knows (up to "
        f"{known}): a newer askbridge upgraded it, and this one would misread what that one "
        "writes. Run the newer askbridge, or, to go back to this one, restore the backup "
        "taken before the upgrade. Nothing in the database was changed"
    )
