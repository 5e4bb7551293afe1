"""Keys that researchers give for their own endpoints, sealed while a run needs them, and
the keyed hash that names a credential without keeping it.

Fernet (AES-128-CBC with an HMAC-SHA256, from the ``cryptography`` package) under a key
derived from SECRET_KEY with HKDF, so the database alone does not give the key away and the
platform's secret is never used directly. SECRET_KEY_FALLBACKS still open keys sealed before
a rotation. The worker that runs inference needs the web server's SECRET_KEY.

``credential_digest`` is an HMAC-SHA256 under another HKDF-derived key: the response cache
tells one credential from another by it. Only the current SECRET_KEY counts there, so a
rotation starts the cache afresh rather than keep a hash an old secret could recompute.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

from plumbing.errors import ApplicationError

_PURPOSE = b"hctqa: endpoint API keys, v1"
_DIGEST_PURPOSE = b"hctqa: credentials of cached inference answers, v1"


@lru_cache(maxsize=8)
def _derived(secret: str, purpose: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose).derive(
        secret.encode()
    )


@lru_cache(maxsize=4)
def _fernet(secret: str) -> Fernet:
    return Fernet(base64.urlsafe_b64encode(_derived(secret, _PURPOSE)))


def credential_digest(key: str) -> str:
    """A keyed hash of an endpoint key ("" for none): equal for equal keys, and useless to
    anyone without SECRET_KEY, so it can be stored where the key may not."""
    secret = _derived(settings.SECRET_KEY, _DIGEST_PURPOSE)
    return hmac.new(secret, key.encode(), hashlib.sha256).hexdigest()


def _sealer() -> MultiFernet:
    secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    return MultiFernet([_fernet(s) for s in secrets])


def api_key_seal(key: str) -> str:
    return _sealer().encrypt(key.encode()).decode("ascii")


def api_key_unseal(sealed: str) -> str:
    try:
        return _sealer().decrypt(sealed.encode("ascii")).decode()
    except (InvalidToken, ValueError):
        raise ApplicationError(
            "The endpoint's key cannot be opened where the run executes: the worker needs the "
            "same SECRET_KEY as the web server. Resume the run and give the key again"
        ) from None
