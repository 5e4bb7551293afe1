from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from hctqa.accounts import services
from hctqa.accounts.models import Account
from hctqa.errors import ApplicationError


class TestSplitApprovedFilter(admin.SimpleListFilter):
    title = "test-split submissions"
    parameter_name = "test_split"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [("approved", "approved"), ("waiting", "not approved")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "approved":
            return queryset.filter(test_split_approved_at__isnull=False)
        if self.value() == "waiting":
            return queryset.filter(test_split_approved_at__isnull=True)
        return queryset


class AccountForm(forms.ModelForm):
    test_split_approved = forms.BooleanField(
        required=False,
        label="Approved for test-split submissions",
        help_text="Who approved it and when are recorded.",
    )

    class Meta:
        model = Account
        fields: list[str] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["test_split_approved"].initial = self.instance.test_split_approved


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    """Approving researchers for test-split submissions: select accounts, then the action.
    The approval records who gave it and when; it is never typed in by hand."""

    list_display = (
        "user",
        "email",
        "created_at",
        "signed_up_from",
        "test_split_approved_at",
        "test_split_approved_by",
    )
    list_filter = (TestSplitApprovedFilter, "created_at")
    search_fields = ("user__username", "user__email", "signed_up_from")
    list_select_related = ("user", "test_split_approved_by")
    readonly_fields = (
        "user",
        "created_at",
        "signed_up_from",
        "test_split_approved_at",
        "test_split_approved_by",
    )
    form = AccountForm
    fields = ("user", "created_at", "signed_up_from", "test_split_approved")
    actions = ("approve_for_test_split", "withdraw_test_split_approval")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # every user has one, made when the user is saved

    def get_fields(self, request: HttpRequest, obj: Account | None = None) -> list[str]:
        fields = list(self.fields)
        if obj is not None and obj.test_split_approved:
            fields += ["test_split_approved_at", "test_split_approved_by"]
        return fields

    def save_model(self, request: HttpRequest, obj: Account, form: Any, change: bool) -> None:
        if "test_split_approved" not in form.changed_data:
            return
        if form.cleaned_data["test_split_approved"]:
            try:
                services.account_approve_for_test_split(user=obj.user, approved_by=request.user)
            except ApplicationError as exc:
                self.message_user(request, exc.message, messages.ERROR)
        else:
            services.account_approval_withdraw(user=obj.user)

    @admin.display(ordering="user__email")
    def email(self, account: Account) -> str:
        return account.user.email

    @admin.action(description="Approve for test-split submissions", permissions=["change"])
    def approve_for_test_split(self, request: HttpRequest, queryset: QuerySet) -> None:
        approved = 0
        for account in queryset.select_related("user"):
            try:
                services.account_approve_for_test_split(user=account.user, approved_by=request.user)
            except ApplicationError as exc:
                self.message_user(request, f"{account.user}: {exc.message}", messages.ERROR)
            else:
                approved += 1
        self.message_user(request, f"{approved} account(s) approved for test-split submissions.")

    @admin.action(description="Withdraw test-split approval", permissions=["change"])
    def withdraw_test_split_approval(self, request: HttpRequest, queryset: QuerySet) -> None:
        for account in queryset.select_related("user"):
            services.account_approval_withdraw(user=account.user)
        self.message_user(request, f"{queryset.count()} account(s) no longer approved.")
