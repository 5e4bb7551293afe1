"""The API's JSON parser: DRF's, with nesting bounded (hctqa.core.safe_json)."""

from __future__ import annotations

from typing import IO, Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from hctqa.core.safe_json import MAX_DEPTH, NestingError, check_depth


class BoundedJSONParser(JSONParser):
    """Deeply nested JSON is a 400 that says so, never a RecursionError (a 500)."""

    def parse(
        self,
        stream: IO[bytes],
        media_type: str | None = None,
        parser_context: dict[str, Any] | None = None,
    ) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
            check_depth(data)
        except (RecursionError, NestingError):
            raise ParseError(f"JSON parse error - {NestingError(MAX_DEPTH)}") from None
        return data
