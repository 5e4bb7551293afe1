from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_roles(sender: AppConfig, **kwargs: object) -> None:
    from hctqa.accounts.services import roles_ensure

    roles_ensure()


class AccountsConfig(AppConfig):
    name = "hctqa.accounts"
    label = "accounts"
    verbose_name = "Accounts and roles"

    def ready(self) -> None:
        # Permissions exist only after migrate; the role groups are (re)built right then.
        post_migrate.connect(_ensure_roles, sender=self)
