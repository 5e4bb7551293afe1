"""The platform's roles, as Django groups, and the permissions each one carries."""

from __future__ import annotations

ANNOTATOR = "annotator"
ADJUDICATOR = "adjudicator"
RESEARCHER = "researcher"
ADMIN = "admin"
ROLES = (ANNOTATOR, ADJUDICATOR, RESEARCHER, ADMIN)

# "app_label.codename" for each role. Admins get every permission of the platform's apps on
# top of these (see services.roles_ensure).
ROLE_PERMISSIONS: dict[str, tuple[str, ...]] = {
    ANNOTATOR: (
        "annotation.annotate_table",
        "annotation.write_question",
        "annotation.verify_question",
    ),
    ADJUDICATOR: (
        "annotation.annotate_table",
        "annotation.write_question",
        "annotation.verify_question",
        "annotation.adjudicate_question",
        "ingest.ingest_document",
    ),
    RESEARCHER: ("leaderboard.add_submission", "leaderboard.add_inferencerun"),
    ADMIN: ("annotation.view_test_gold",),
}

# Apps whose every model permission an admin holds.
ADMIN_APPS = (
    "annotation",
    "releases",
    "leaderboard",
    "endpoints",
    "ingest",
    "accounts",
    "auth",
    "authtoken",
)
