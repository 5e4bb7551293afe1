"""Option types the leaderboard's commands share."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation


def decimal_argument(value: str) -> Decimal:
    """A number of billions, exactly as given (argparse says an invalid one is invalid)."""
    try:
        return Decimal(value)
    except InvalidOperation:
        raise ValueError(value) from None
