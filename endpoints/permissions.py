"""Who may register and change model endpoints (``plumbing.permissions``)."""

from __future__ import annotations

from plumbing.permissions import Rule

MANAGING_ENDPOINTS = Rule("Only admins manage endpoints", ("endpoints.change_endpoint",))
