from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm


class ResearcherSignUpForm(UserCreationForm):
    email = forms.EmailField(required=True)

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")
