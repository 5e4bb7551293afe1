from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts import services
from accounts.models import Account, ApprovalRequest, OutgoingEmail
from hctqa.core.wording import counted
from plumbing.errors import ApplicationError


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
        self.message_user(
            request, f"{counted(approved, 'account')} approved for test-split submissions."
        )

    @admin.action(description="Withdraw test-split approval", permissions=["change"])
    def withdraw_test_split_approval(self, request: HttpRequest, queryset: QuerySet) -> None:
        for account in queryset.select_related("user"):
            services.account_approval_withdraw(user=account.user)
        self.message_user(request, f"{counted(queryset.count(), 'account')} no longer approved.")


class WaitingFilter(admin.SimpleListFilter):
    title = "decision"
    parameter_name = "decision"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [("waiting", "waiting"), ("approved", "approved"), ("declined", "declined")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value == "waiting":
            return queryset.filter(decided_at__isnull=True)
        if value in ("approved", "declined"):
            return queryset.filter(approved=value == "approved")
        return queryset


@admin.register(ApprovalRequest)
class ApprovalRequestAdmin(admin.ModelAdmin):
    """Researchers' requests for test-split approval: select them, then Approve or Decline.
    Each researcher is told, as from the approval requests page."""

    list_display = ("user", "created_at", "short_note", "decided_at", "approved", "decided_by")
    list_filter = (WaitingFilter, "created_at")
    search_fields = ("user__username", "user__email", "note")
    list_select_related = ("user", "decided_by")
    readonly_fields = ("user", "note", "created_at", "decided_at", "decided_by", "approved")
    actions = ("approve", "decline")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # researchers ask on their account page

    def has_approve_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("accounts.change_account")

    has_decline_permission = has_approve_permission

    @admin.display(description="note")
    def short_note(self, item: ApprovalRequest) -> str:
        return item.note if len(item.note) <= 80 else item.note[:79] + "…"

    def _decide(self, request: HttpRequest, queryset: QuerySet, *, approve: bool) -> None:
        done = 0
        for item in queryset.filter(decided_at__isnull=True).select_related("user"):
            try:
                services.approval_request_decide(
                    request_id=item.pk, admin=request.user, approve=approve
                )
            except ApplicationError as exc:
                self.message_user(request, f"{item.user}: {exc.message}", messages.ERROR)
            else:
                done += 1
        outcome = "approved" if approve else "declined"
        self.message_user(
            request, f"{counted(done, 'request')} {outcome}; each researcher is told."
        )

    @admin.action(description="Approve for test-split submissions", permissions=["approve"])
    def approve(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._decide(request, queryset, approve=True)

    @admin.action(description="Decline", permissions=["decline"])
    def decline(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._decide(request, queryset, approve=False)


@admin.register(OutgoingEmail)
class OutgoingEmailAdmin(admin.ModelAdmin):
    """Emails sent and waiting, to see what failed and why. Read only."""

    list_display = ("subject", "to_address", "status", "attempts", "created_at", "sent_at")
    list_filter = ("status", "created_at")
    search_fields = ("to_address", "subject")
    readonly_fields = [f.name for f in OutgoingEmail._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
