from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_migrate, post_save


def _ensure_roles(sender: AppConfig, **kwargs: object) -> None:
    from accounts.services import roles_ensure

    roles_ensure()


def _user_saved(
    sender: type, instance: Any, created: bool, update_fields: frozenset[str] | None, **kwargs: Any
) -> None:
    # Users are made in many places (sign-up, the admin, createsuperuser, the demo loader):
    # each gets its account, with its username's skeleton, whichever made it, and a new
    # address loses the old one's confirmation. A save that leaves the name and the address
    # alone (the last-login stamp) changes nothing.
    if kwargs.get("raw") or (
        update_fields is not None and not {"username", "email"} & set(update_fields)
    ):
        return
    from accounts.services import account_sync

    account_sync(user=instance)


class AccountsConfig(AppConfig):
    name = "accounts"
    label = "accounts"
    verbose_name = "Accounts and roles"

    def ready(self) -> None:
        # Permissions exist only after migrate; the role groups are (re)built right then.
        post_migrate.connect(_ensure_roles, sender=self)
        post_save.connect(_user_saved, sender=settings.AUTH_USER_MODEL, dispatch_uid="account")
