"""Submit a predictions file for a researcher, as the submit page and the API do."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError

from leaderboard import services
from leaderboard.management.arguments import decimal_argument
from leaderboard.models import DataScope, EvalSplit, Modality, TableFormat, Visibility, Weights
from leaderboard.services.baselines import describe_track_score
from plumbing.errors import ApplicationError
from tracks.registry import TRACKS


class Command(BaseCommand):
    help = (
        "Submit a predictions file for a user, exactly as the submit page and the API do: "
        "every check in one pass (the file, the metadata, the split, today's test-split "
        "limit), then queued for the scoring worker (--wait: scored here). QA: JSONL of "
        "question_id and response; a track: JSON lines of id and prediction."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--user", required=True, help="the researcher it is submitted for")
        parser.add_argument("--track", choices=list(TRACKS), default="qa")
        parser.add_argument("--mode", choices=["", "region", "page"], default="")
        parser.add_argument("--split", choices=EvalSplit.values, required=True)
        parser.add_argument("--model-name", required=True)
        parser.add_argument("--weights", choices=Weights.values, required=True)
        parser.add_argument("--parameters", type=decimal_argument, help="billions")
        parser.add_argument("--modality", choices=Modality.values, default=Modality.TEXT)
        parser.add_argument("--table-format", choices=TableFormat.values, help="qa only")
        parser.add_argument("--scope", choices=DataScope.values, help="qa only (default real)")
        parser.add_argument("--organisation", default="")
        parser.add_argument("--description", default="")
        parser.add_argument("--private", action="store_true")
        parser.add_argument("--wait", action="store_true", help="score it here, now")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            user = get_user_model().objects.get(username=options["user"])
        except get_user_model().DoesNotExist:
            raise CommandError(f"There is no user {options['user']!r}") from None
        qa = options["track"] == "qa"
        data = services.SubmissionInput(
            model_name=options["model_name"],
            weights=options["weights"],
            modality=options["modality"],
            table_format=options["table_format"] or (TableFormat.PAPER if qa else "other"),
            split=options["split"],
            data_scope=(options["scope"] or DataScope.REAL) if qa else "",
            organisation=options["organisation"],
            parameters_billions=options["parameters"],
            description=options["description"],
            visibility=Visibility.PRIVATE if options["private"] else Visibility.PUBLIC,
            track=options["track"],
            mode=options["mode"] or ("region" if options["track"] == "extraction" else ""),
        )
        try:
            with path.open("rb") as handle:
                submission = services.submission_create(
                    owner=user, data=data, predictions=File(handle, name=path.name)
                )
        except ApplicationError as exc:
            lines = [
                (f"{p.field}: " if p.field else "")
                + p.message
                + "".join(f"\n  {d}" for d in p.details)
                for p in exc.problems
            ]
            raise CommandError("Nothing was submitted.\n" + "\n".join(lines)) from None
        except PermissionDenied as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Submission {submission.pk} is queued: {submission.get_absolute_url()}")
        if not options["wait"]:
            return
        services.submission_score(submission_id=submission.pk)
        submission.refresh_from_db()
        if submission.is_qa:
            score = submission.score_for()
            shown = (
                f"recall {score.recall:.3f}" if score and score.recall is not None else "withheld"
            )
            self.stdout.write(f"Submission {submission.pk} is {submission.status}: {shown}")
        else:
            self.stdout.write(describe_track_score(submission))
