"""Who may use annotation's pages, API and services (``plumbing.permissions``)."""

from __future__ import annotations

from typing import Any

from plumbing.permissions import Rule


def _may_assign(user: Any, _target: Any) -> bool:
    from annotation.selectors.assignments import may_assign

    return may_assign(user)


_TOOL = "Your role does not include this tool"

# The hub and "My recent work": whoever annotates, writes or verifies.
ANNOTATING = Rule(
    "The annotation tools are for annotators",
    ("annotation.annotate_table", "annotation.write_question", "annotation.verify_question"),
)
PROPERTY_TOOL = Rule(_TOOL, ("annotation.annotate_table",))
QUESTION_TOOL = Rule(_TOOL, ("annotation.write_question",))
# Agreement, resolving table properties, flags.
ADJUDICATION_TOOL = Rule(_TOOL, ("annotation.adjudicate_question",))
# Deciding verifications that disagree.
ADJUDICATING = Rule("Only adjudicators decide disagreements", ("annotation.adjudicate_question",))
VERIFYING = Rule("Only annotators verify questions", ("annotation.verify_question",))
ASSIGNING = Rule(
    "Assigning tables is for adjudicators and admins",
    allows_also=_may_assign,
    hint="An adjudicator or an admin gives out tables to annotate.",
)
GOLD_POOL = Rule("Only admins see the gold pool", ("dataset.view_private_questions",))
GOLD_POOL_CHANGE = Rule("Only admins choose gold-control questions", ("dataset.change_question",))
REINSTATING = Rule(
    "Only admins put an annotator back in the verification pool", ("dataset.change_question",)
)
GENERATING = Rule("Only admins run question generation", ("annotation.add_generationrun",))
SYNTHETIC = Rule("Only admins run the synthetic generator", ("annotation.add_syntheticrun",))
FLAGGING = Rule(
    "Only annotators flag problems",
    ("annotation.annotate_table", "annotation.write_question", "annotation.verify_question"),
)
RESOLVING_FLAGS = Rule("Only adjudicators resolve flags", ("annotation.adjudicate_question",))
DASHBOARD = Rule(
    "The verification dashboard is for adjudicators and admins",
    ("annotation.adjudicate_question", "dataset.change_question"),
)
