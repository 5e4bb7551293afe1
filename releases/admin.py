from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse

from plumbing.errors import ApplicationError
from releases import selectors, services
from releases.models import Edition, Release, ReleaseBuild, ReleasePush


class _ReadOnlyAdmin(admin.ModelAdmin):
    """A release never changes once cut, and builds are records of work: read them here; cut
    releases at /releases/ or with manage.py cut_release."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class PushForm(forms.Form):
    repo = forms.CharField(
        label="Repository",
        max_length=200,
        help_text="The dataset repository on the Hub, ORG/NAME; made when it does not exist.",
    )
    edition = forms.ChoiceField(choices=Edition.choices, initial=Edition.PUBLIC)
    allow_full_edition = forms.BooleanField(
        required=False,
        label="Allow the full edition",
        help_text="It holds the test split's gold answers, SQL and relational tables; it goes "
        "only to a private repository.",
    )


@admin.register(Release)
class ReleaseAdmin(_ReadOnlyAdmin):
    list_display = ("version", "title", "created_at", "created_by", "commit")
    search_fields = ("version", "title")
    exclude = ("changelog", "files")
    actions = ["push_to_hub"]

    def has_push_permission(self, request: HttpRequest) -> bool:
        return selectors.can_cut_release(request.user)

    @admin.action(description="Push to the Hugging Face Hub", permissions=["push"])
    def push_to_hub(self, request: HttpRequest, queryset: QuerySet[Release]) -> HttpResponse | None:
        """Asks for the repository and the edition, then queues the push (the worker reads
        HF_TOKEN from its environment); the push is followed under Release pushes."""
        if queryset.count() != 1:
            self.message_user(request, "Choose one release to push.", messages.ERROR)
            return None
        release = queryset.get()
        form = PushForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            try:
                push = services.release_push_start(
                    user=request.user, version=release.version, **form.cleaned_data
                )
            except ApplicationError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
            else:
                url = reverse("admin:releases_releasepush_change", args=[push.pk])
                self.message_user(
                    request,
                    f"Release {release.version} ({push.edition} edition) is being pushed to "
                    f"{push.repo}; follow it at {request.build_absolute_uri(url)}",
                    messages.SUCCESS,
                )
                return None
        context = {
            **self.admin_site.each_context(request),
            "title": f"Push release {release.version} to the Hugging Face Hub",
            "release": release,
            "form": form,
            "opts": self.model._meta,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/releases/push.html", context)


@admin.register(ReleaseBuild)
class ReleaseBuildAdmin(_ReadOnlyAdmin):
    list_display = ("id", "version", "status", "progress", "created_at", "finished_at")
    list_filter = ("status",)


@admin.register(ReleasePush)
class ReleasePushAdmin(_ReadOnlyAdmin):
    list_display = ("id", "release", "edition", "repo", "status", "stage", "created_at")
    list_filter = ("status", "edition")
    list_select_related = ("release",)
    search_fields = ("release__version", "repo")
