"""Running the project's migrations to a given state inside a test, for the tests of data
migrations."""

from __future__ import annotations

from django.apps.registry import Apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets: list[tuple[str, str]]) -> Apps:
    """Migrate the test database to ``targets`` and return the models as they are there. A
    target ``(app, None)`` takes the app's migrations all back."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    applied = [t for t in targets if t[1] is not None]
    return MigrationExecutor(connection).loader.project_state(applied).apps


def latest() -> list[tuple[str, str]]:
    """Every app's last migration."""
    return MigrationExecutor(connection).loader.graph.leaf_nodes()
