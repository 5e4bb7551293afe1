from __future__ import annotations

import math
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import Token

from hctqa.accounts import selectors, services
from hctqa.accounts.addresses import client_address
from hctqa.accounts.forms import ResearcherSignUpForm
from hctqa.accounts.lockout import lockout_of
from hctqa.core.wording import counted
from hctqa.errors import ApplicationError


def sign_up(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("accounts:account")
    form = ResearcherSignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = services.researcher_sign_up(
                username=form.cleaned_data["username"],
                email=form.cleaned_data["email"],
                password=form.cleaned_data["password1"],
                address=client_address(request),
            )
        except ApplicationError as exc:
            form.add_error(exc.field, exc.message)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(
                request, f"Welcome, {user.username}. Your researcher account is ready."
            )
            return redirect("accounts:account")
    status = 400 if request.method == "POST" else 200
    return render(request, "accounts/sign_up.html", {"form": form}, status=status)


@login_required
def account(request: HttpRequest) -> HttpResponse:
    token = Token.objects.filter(user=request.user).first()
    roles = sorted(request.user.groups.values_list("name", flat=True))
    context = {
        "token": token,
        "roles": roles,
        "account": selectors.account_of(user=request.user),
        "test_split_open": selectors.can_submit_to_test_split(user=request.user),
        "open_test_submissions": settings.OPEN_TEST_SUBMISSIONS,
    }
    return render(request, "accounts/account.html", context)


@login_required
@require_POST
def token_rotate(request: HttpRequest) -> HttpResponse:
    replaced = Token.objects.filter(user=request.user).exists()
    services.api_token_rotate(user=request.user)
    messages.success(
        request,
        "A new API token was created; the previous one no longer works."
        if replaced
        else "Your API token was created.",
    )
    return redirect("accounts:account")


def locked_out(
    request: HttpRequest, original_response: HttpResponse | None, credentials: Any
) -> HttpResponse:
    """django-axes' answer to a client locked out after too many failed log-ins: a page for
    the log-in forms, JSON for the API, both 429 with Retry-After and when to try again."""
    lockout = lockout_of(request, credentials)
    wait = lockout.seconds_left
    if lockout.by_address:
        limit = settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS
        why = (
            f"Too many failed log-ins from your address ({limit} within "
            f"{counted(settings.LOGIN_LOCKOUT_MINUTES, 'minute')}, whichever the username): "
            "logging in from it is locked, to every account."
        )
    else:
        why = (
            "Too many failed log-ins to this account from your address: logging in to it "
            "from here is locked."
        )
    message = (
        f"{why} Try again after {lockout.until:%H:%M} UTC (in "
        f"{counted(math.ceil(wait / 60), 'minute')}). Each further failure starts the wait "
        "again. Forgot your password? Ask the platform's admins."
    )
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse(
            {"detail": message, "retry_after_seconds": wait}, status=429
        )
    else:
        response = render(
            request,
            "accounts/locked_out.html",
            {"message": message, "minutes": math.ceil(wait / 60)},
            status=429,
        )
    response["Retry-After"] = str(wait)
    return response
