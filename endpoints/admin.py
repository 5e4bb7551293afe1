from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError

from endpoints.models import Endpoint
from endpoints.services import endpoint_fields_checked
from plumbing.errors import ApplicationError


class EndpointForm(forms.ModelForm):
    """The registry's rules, as the API applies them; models one per line."""

    model_names = forms.CharField(
        label="Models",
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="One model name per line, as the endpoint knows it; none: any model.",
    )

    class Meta:
        model = Endpoint
        fields = [
            "name",
            "base_url",
            "api_key_env",
            "model_names",
            "description",
            "open_to_researchers",
            "users",
            "groups",
            "is_active",
        ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["model_names"] = "\n".join(self.instance.model_names)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        try:
            checked = endpoint_fields_checked(
                name=data.get("name") or "",
                base_url=data.get("base_url") or "",
                api_key_env=data.get("api_key_env") or "",
                model_names=(data.get("model_names") or "").splitlines(),
                description=data.get("description") or "",
            )
        except ApplicationError as exc:
            raise ValidationError({exc.field or "__all__": exc.message}) from None
        data.update(checked)
        return data


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    form = EndpointForm
    list_display = ("name", "base_url", "api_key_env", "is_active", "open_to_researchers")
    list_filter = ("is_active", "open_to_researchers")
    search_fields = ("name", "base_url", "description")
    filter_horizontal = ("users", "groups")
    readonly_fields = ("created_at", "updated_at")
