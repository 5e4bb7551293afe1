from __future__ import annotations

import math
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import Token

from accounts import selectors, services
from accounts.forms import ApprovalRequestForm, EmailPreferencesForm, ResearcherSignUpForm
from accounts.lockout import lockout_of
from accounts.models import Notification
from accounts.permissions import DECIDING_APPROVALS
from hctqa.core.wording import counted
from plumbing.client_addresses import client_address
from plumbing.errors import ApplicationError
from plumbing.permissions import requires
from plumbing.redirects import local_url


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
                request,
                f"Welcome, {user.username}. Your researcher account is ready. To confirm your "
                "email address, follow the link we sent to it.",
            )
            return redirect("accounts:account")
    status = 400 if request.method == "POST" else 200
    return render(request, "accounts/sign_up.html", {"form": form}, status=status)


def _account_page(
    request: HttpRequest,
    *,
    approval_form: ApprovalRequestForm | None = None,
    status: int = 200,
) -> HttpResponse:
    user = request.user
    token = Token.objects.filter(user=user).first()
    roles = sorted(user.groups.values_list("name", flat=True))
    account = selectors.account_of(user=user)
    context = {
        "token": token,
        "roles": roles,
        "account": account,
        "email_confirmed": bool(account and account.email_confirmed),
        "confirmation_sent_at": services.email_confirmation_sent_last(user=user),
        "test_split_open": selectors.can_submit_to_test_split(user=user),
        "open_test_submissions": settings.OPEN_TEST_SUBMISSIONS,
        "approval_request": selectors.approval_request_latest(user=user),
        "approval_form": approval_form or ApprovalRequestForm(),
        "email_form": EmailPreferencesForm(
            initial={
                "on_scoring": bool(account and account.email_on_scoring),
                "on_mention": bool(account and account.email_on_mention),
            }
        ),
    }
    return render(request, "accounts/account.html", context, status=status)


@login_required
def account(request: HttpRequest) -> HttpResponse:
    return _account_page(request)


@login_required
@require_POST
def approval_request(request: HttpRequest) -> HttpResponse:
    """The researcher's "Ask for approval" button, with its note."""
    form = ApprovalRequestForm(request.POST)
    if form.is_valid():
        try:
            services.approval_request_make(user=request.user, note=form.cleaned_data["note"])
        except ApplicationError as exc:
            form.add_error("note" if exc.field == "note" else None, exc.message)
        else:
            messages.success(
                request,
                "Your request is with the platform's admins; you will be told here (and by "
                "email) when one of them has decided.",
            )
            return redirect("accounts:account")
    return _account_page(request, approval_form=form, status=400)


@login_required
@require_POST
def email_preferences(request: HttpRequest) -> HttpResponse:
    form = EmailPreferencesForm(request.POST)
    form.is_valid()  # two checkboxes: always valid
    account = services.email_preferences_set(
        user=request.user,
        on_scoring=form.cleaned_data["on_scoring"],
        on_mention=form.cleaned_data["on_mention"],
    )
    if account.email_confirmed:
        messages.success(request, f"Saved: emails go to {request.user.email}.")
    elif request.user.email:
        messages.warning(
            request,
            f"Saved, but no email goes to {request.user.email} until you confirm it: follow "
            "the link we sent to it, or send it again.",
        )
    else:
        messages.warning(
            request,
            "Saved, but your account has no email address: ask an admin to add one.",
        )
    return redirect("accounts:account")


@login_required
@require_POST
def email_confirmation_send(request: HttpRequest) -> HttpResponse:
    """The "Send the link again" button."""
    try:
        services.email_confirmation_send(user=request.user)
    except ApplicationError as exc:
        messages.error(request, f"No link was sent: {exc.message}.")
    else:
        days = counted(services.CONFIRMATION_MAX_AGE.days, "day")
        messages.success(
            request,
            f"A new link is on its way to {request.user.email}; it works for {days}.",
        )
    return redirect(reverse("accounts:account") + "#email-address")


@login_required
def email_confirm(request: HttpRequest, token: str) -> HttpResponse:
    """The page the emailed link opens: one button confirms (a mail scanner that opens the
    link confirms nothing), logged in as the account the link is for."""
    try:
        if request.method == "POST":
            account = services.email_confirm(user=request.user, token=token)
            messages.success(request, f"Thank you: {account.email_confirmed_address} is confirmed.")
            return redirect(reverse("accounts:account") + "#email-address")
        account = services.email_confirmation_check(user=request.user, token=token)
    except ApplicationError as exc:
        context = {"error": exc.message}
        return render(request, "accounts/email_confirm.html", context, status=400)
    return render(request, "accounts/email_confirm.html", {"account": account})


@login_required
@requires(DECIDING_APPROVALS)
def approval_requests(request: HttpRequest) -> HttpResponse:
    context = {
        "waiting": selectors.approval_requests_waiting(),
        "decided": selectors.approval_requests_decided(),
    }
    return render(request, "accounts/approval_requests.html", context)


@login_required
@require_POST
@requires(DECIDING_APPROVALS)
def approval_request_decide(request: HttpRequest, request_id: int) -> HttpResponse:
    decision = request.POST.get("decision", "")
    if decision not in ("approve", "decline"):
        messages.error(request, "Nothing was decided: choose Approve or Decline.")
    else:
        try:
            decided = services.approval_request_decide(
                request_id=request_id, admin=request.user, approve=decision == "approve"
            )
        except ApplicationError as exc:
            messages.error(request, f"Nothing was decided: {exc.message}.")
        else:
            outcome = "approved" if decided.approved else "declined"
            messages.success(
                request, f"The request of {decided.user.username} is {outcome}; they are told."
            )
    fallback = reverse("accounts:approval_requests")
    return redirect(local_url(request, request.POST.get("next", ""), fallback))


@login_required
def notifications(request: HttpRequest) -> HttpResponse:
    items = selectors.notifications_of(user=request.user)
    return render(request, "accounts/notifications.html", {"items": items})


def _followed_here(request: HttpRequest) -> bool:
    """The person followed a link on this site (or typed the address), not another site's
    link or image: the browser says so (Sec-Fetch-Site), or an older one sends our Referer."""
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None:
        return site in ("same-origin", "none")
    referer = request.headers.get("Referer", "")
    return bool(referer) and url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )


@login_required
def notification_open(request: HttpRequest, notification_id: int) -> HttpResponse:
    """Follow a notification's link, marking it read when the person followed it here: a
    GET another site makes marks nothing."""
    item = get_object_or_404(Notification, pk=notification_id, recipient=request.user)
    if _followed_here(request):
        services.notifications_mark_read(user=request.user, notification_id=item.pk)
    return redirect(local_url(request, item.url, reverse("accounts:notifications")))


@login_required
@require_POST
def notifications_read(request: HttpRequest) -> HttpResponse:
    count = services.notifications_mark_read(user=request.user)
    messages.success(request, f"Marked {counted(count, 'notification')} read.")
    return redirect("accounts:notifications")


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
