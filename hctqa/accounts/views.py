from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import Token

from hctqa.accounts import services
from hctqa.accounts.forms import ResearcherSignUpForm
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
    return render(request, "accounts/account.html", {"token": token, "roles": roles})


@login_required
@require_POST
def token_rotate(request: HttpRequest) -> HttpResponse:
    services.api_token_rotate(user=request.user)
    messages.success(request, "A new API token was created; the previous one no longer works.")
    return redirect("accounts:account")
