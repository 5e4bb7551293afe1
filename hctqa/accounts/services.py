"""Writes to users, roles and API tokens."""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission, User
from django.db import transaction
from django.db.models import Q
from rest_framework.authtoken.models import Token

from hctqa.accounts.roles import ADMIN, ADMIN_APPS, RESEARCHER, ROLE_PERMISSIONS, ROLES
from hctqa.errors import ApplicationError


def _permissions(names: tuple[str, ...]) -> list[Permission]:
    wanted = [tuple(name.split(".", 1)) for name in names]
    query = Q(pk__in=[])
    for app_label, codename in wanted:
        query |= Q(content_type__app_label=app_label, codename=codename)
    found = list(Permission.objects.filter(query))
    if len(found) != len(wanted):
        have = {f"{p.content_type.app_label}.{p.codename}" for p in found}
        missing = sorted(set(names) - have)
        raise ApplicationError(f"permissions not found (run migrate first): {', '.join(missing)}")
    return found


@transaction.atomic
def roles_ensure() -> None:
    """Create the role groups and give each its permissions. Safe to run any number of times."""
    for role in ROLES:
        group, _ = Group.objects.get_or_create(name=role)
        permissions = _permissions(ROLE_PERMISSIONS[role])
        if role == ADMIN:
            permissions += list(Permission.objects.filter(content_type__app_label__in=ADMIN_APPS))
        group.permissions.set(permissions)


@transaction.atomic
def user_role_add(*, user: User, role: str) -> None:
    if role not in ROLES:
        raise ApplicationError(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
    user.groups.add(Group.objects.get(name=role))
    if role == ADMIN and not user.is_staff:
        # Admins use the Django admin, which requires is_staff.
        user.is_staff = True
        user.save(update_fields=["is_staff"])


@transaction.atomic
def researcher_sign_up(*, username: str, email: str, password: str) -> User:
    """A self-service account with the researcher role."""
    if User.objects.filter(username__iexact=username).exists():
        raise ApplicationError("that username is taken", field="username")
    user = User.objects.create_user(username=username, email=email, password=password)
    user_role_add(user=user, role=RESEARCHER)
    return user


@transaction.atomic
def api_token_rotate(*, user: User) -> Token:
    """Replace the user's API token with a new one; the old one stops working at once."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


# Demo accounts only; load_demo prints these passwords on purpose.
DEMO_PASSWORD_SUFFIX = "-demo-pass"  # noqa: S105


@transaction.atomic
def demo_users_ensure() -> list[tuple[str, str, str]]:
    """One demo account per role, as (username, password, role). Only the demo loader calls
    this; the passwords are printed by the run command, so never use them in production."""
    roles_ensure()
    created = []
    for role in ROLES:
        username, password = role, f"{role}{DEMO_PASSWORD_SUFFIX}"
        user, made = User.objects.get_or_create(username=username)
        if made or not user.check_password(password):
            user.set_password(password)
            user.save()
        if role == ADMIN:
            user.is_superuser = True
            user.save(update_fields=["is_superuser"])
        user_role_add(user=user, role=role)
        created.append((username, password, role))
    return created
