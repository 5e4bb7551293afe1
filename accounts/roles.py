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
    # Those who make the dataset discuss its tables and questions; researchers do not.
    ANNOTATOR: (
        "annotation.annotate_table",
        "annotation.write_question",
        "annotation.verify_question",
        "discussion.view_comment",
        "discussion.add_comment",
    ),
    ADJUDICATOR: (
        "annotation.annotate_table",
        "annotation.write_question",
        "annotation.verify_question",
        "annotation.adjudicate_question",
        "ingest.ingest_document",
        "discussion.view_comment",
        "discussion.add_comment",
    ),
    RESEARCHER: ("leaderboard.add_submission", "leaderboard.add_inferencerun"),
    ADMIN: ("dataset.view_test_gold",),
}

# Apps whose every model permission an admin holds.
ADMIN_APPS = (
    "dataset",
    "annotation",
    "releases",
    "leaderboard",
    "endpoints",
    "ingest",
    "tracks",
    "discussion",
    "accounts",
    "auth",
    "authtoken",
)
