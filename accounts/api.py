"""The API's log-in: an API token for a username and password."""

from __future__ import annotations

from typing import Any

from rest_framework.authtoken.views import ObtainAuthToken

from plumbing.throttles import ScopedRateThrottle


class TokenObtainApi(ObtainAuthToken):
    """DRF's token endpoint, watched by django-axes like the log-in form: failures count
    towards a lockout, and a locked-out client gets 429 whatever the password."""

    # DRF's view turns throttling off; this one counts requests per address
    # (API_THROTTLE_AUTH), failed or not.
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "auth"

    def get_serializer_context(self) -> dict[str, Any]:
        # django-axes reads and marks the Django request (its middleware turns the mark into
        # the lockout response), not DRF's wrapper around it.
        return {**super().get_serializer_context(), "request": self.request._request}
