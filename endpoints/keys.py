"""Keys that researchers give for their own endpoints, sealed while a run needs them.

Fernet (AES-128-CBC with an HMAC-SHA256, from the ``cryptography`` package) under a key
derived from SECRET_KEY with HKDF, so the database alone does not give the key away and the
platform's secret is never used directly. SECRET_KEY_FALLBACKS still open keys sealed before
a rotation. The worker that runs inference needs the web server's SECRET_KEY.
"""

from __future__ import annotations

import base64
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

from hctqa.errors import ApplicationError

_PURPOSE = b"hctqa: endpoint API keys, v1"


@lru_cache(maxsize=4)
def _fernet(secret: str) -> Fernet:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_PURPOSE).derive(
        secret.encode()
    )
    return Fernet(base64.urlsafe_b64encode(derived))


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
