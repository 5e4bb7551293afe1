"""Who may ingest (``plumbing.permissions``): one shared workspace of those with the ingest
permission (adjudicators and admins)."""

from __future__ import annotations

from plumbing.permissions import Rule

INGESTING = Rule("ingesting documents needs the ingest permission", ("ingest.ingest_document",))
