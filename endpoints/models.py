"""OpenAI-compatible endpoints that admins register for question generation and inference runs."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Q


class Endpoint(models.Model):
    """Where a model answers, and the name of the environment variable on the worker that
    holds its key. The key is only ever sent to this base URL. Researchers choose an
    endpoint by name; they never see or choose the variable."""

    name = models.SlugField(
        max_length=64, unique=True, help_text="How people choose it, e.g. vllm-gpu1."
    )
    base_url = models.CharField(
        "base URL",
        max_length=500,
        help_text="e.g. http://gpu-host:8000/v1 or https://api.openai.com/v1",
    )
    api_key_env = models.CharField(
        "key variable",
        max_length=100,
        blank=True,
        help_text="The NAME of the environment variable holding the key on the worker (one "
        "that ENDPOINT_KEY_VARIABLES allows); blank for a server without keys.",
    )
    model_names = models.JSONField(
        "models",
        default=list,
        blank=True,
        help_text="The model names runs may ask for; none listed: any.",
    )
    description = models.CharField(max_length=300, blank=True)
    open_to_researchers = models.BooleanField(
        default=False, help_text="Everyone with the researcher role may use it."
    )
    users = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="+", help_text="May use it."
    )
    groups = models.ManyToManyField(
        Group, blank=True, related_name="+", help_text="Their members may use it."
    )
    is_active = models.BooleanField(
        "active", default=True, help_text="Inactive: no new run, and no run resumes, on it."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        permissions = [("use_any_endpoint", "Can use every active endpoint")]
        constraints = [
            models.CheckConstraint(
                condition=~Q(name="") & ~Q(base_url=""), name="endpoint_name_and_url_given"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def serves(self, model_name: str) -> bool:
        return not self.model_names or model_name in self.model_names
