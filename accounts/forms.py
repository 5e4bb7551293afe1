from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm

from accounts.models import APPROVAL_NOTE_MAX


class ResearcherSignUpForm(UserCreationForm):
    email = forms.EmailField(required=True)

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")


class ApprovalRequestForm(forms.Form):
    note = forms.CharField(
        max_length=APPROVAL_NOTE_MAX,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="A short note for the admins",
        error_messages={
            "required": "Say who you are and what you want to evaluate, so the admins can decide."
        },
        help_text="Your name, your affiliation and the model you want to evaluate "
        f"(at most {APPROVAL_NOTE_MAX} characters).",
    )


class EmailPreferencesForm(forms.Form):
    on_scoring = forms.BooleanField(
        required=False, label="When a submission or inference run of mine is scored or fails"
    )
    on_mention = forms.BooleanField(
        required=False, label="When someone mentions me (@name) in a discussion"
    )
