"""Logging filters."""

from __future__ import annotations

import logging


class ExpectedRefusals(logging.Filter):
    """A 403 is the platform working as meant (a researcher opening an annotation tool): one
    INFO line with the path, not a WARNING with the traceback of the PermissionDenied."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
            record.levelno = logging.INFO
            record.levelname = "INFO"
        return True
