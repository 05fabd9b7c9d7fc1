"""What an operator is told when the database's schema is not the one this askbridge uses.

Only the server upgrades a schema (`transactions.migrate`), and nothing downgrades one; a
refusal rolls back before any write, so it can say that nothing was changed.
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


def too_old(found: int, known: int) -> str:
    """A one-off command (`askbridge prune`) found a schema that only a server upgrades: an
    older server may still be running on it, and would then run on a schema it does not know."""
    if not found:
        return (
            "the database holds no askbridge tables, and a command does not make them: check "
            "that ASKBRIDGE_DATABASE_URL names the database the server uses. Nothing in the "
            "database was changed"
        )
    return (
        f"the database's schema is version {found}, and this askbridge uses version {known}; a "
        "command does not upgrade it, as a server of the older askbridge may still be running "
        "on it. Stop that server and start this askbridge's in its place (`askbridge serve` "
        "upgrades the schema), then run the command again. Nothing in the database was changed"
    )


def upgraded_meanwhile(found: int, known: int) -> str:
    """A newer askbridge upgraded the database while this one ran."""
    return (
        f"the database's schema is version {found}, newer than this askbridge knows (up to "
        f"{known}): a newer askbridge upgraded it while this one ran, and this one would "
        "misread what that one writes. Stop this one and run the newer askbridge in its place"
    )


def older_replicas(names: str, found: int, known: int) -> str:
    """Replicas of an older askbridge still use the database this one would upgrade."""
    return (
        f"the database's schema is version {found}, and this askbridge would upgrade it to "
        f"{known}, but replicas of an older askbridge still use it (connections named {names} "
        "in pg_stat_activity), and they would misread what this one writes. Stop every one of "
        "them, then start this askbridge again; replicas of one version cannot share the "
        "database with another's once the schema changes. Nothing in the database was changed"
    )
