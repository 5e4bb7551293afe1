"""Who may change the dataset's own records through its services (``plumbing.permissions``);
the Django admin keeps its model permissions."""

from __future__ import annotations

from plumbing.permissions import Rule

ADDING_COLLECTIONS = Rule("only admins create collections", ("dataset.add_collection",))
