"""Run a model on the benchmark through an OpenAI-compatible endpoint, from the command line.

    manage.py run_inference --user ada --model Qwen/Qwen2.5-7B-Instruct \\
        --endpoint vllm-gpu1 --parameters 7          # an endpoint an admin registered
    manage.py run_inference --user ada --model gpt-4o --weights closed \\
        --base-url https://api.openai.com/v1 --api-key-stdin < key.txt   # ada's own
    manage.py run_inference --user ada --model Qwen/Qwen2.5-7B-Instruct --endpoint vllm-gpu1 \
        --parameters 7 --track sql --split validation   # a track beside QA
    manage.py run_inference --resume 12        # carry on where run 12 stopped
    manage.py run_inference --cancel 12

By default the run executes here, in the foreground, with a progress line; its submission is
then scored here too. ``--enqueue`` leaves it to the worker on the inference queue instead.

An own endpoint's key is read from standard input, never from the command line (where
``ps`` and the shell's history would show it).
"""

from __future__ import annotations

import sys
import time
from argparse import ArgumentParser
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from hctqa.core.disclosure import DISCLOSURE_MARGIN
from hctqa.core.prompts import PROMPT_STYLES, TABLE_FORMATS
from hctqa.core.wording import counted
from leaderboard.management.arguments import decimal_argument
from leaderboard.models import (
    DataScope,
    EvalSplit,
    InferenceRun,
    Modality,
    RunStatus,
    Status,
    Visibility,
    Weights,
)
from leaderboard.services import (
    InferenceRunInput,
    inference_run_cancel,
    inference_run_create,
    inference_run_execute,
    inference_run_resume,
    submission_score,
)
from leaderboard.services.baselines import describe_track_score
from leaderboard.services.inference import Progress
from plumbing.errors import ApplicationError
from tracks.registry import TRACKS

# The option that gives a field, where its name is not the field's.
_OPTIONS = {
    "model_name": "--model",
    "parameters_billions": "--parameters",
    "data_scope": "--scope",
    "api_key": "--api-key-stdin",
    "use_cache": "--no-cache",
    "system_role": "--no-system-role",
    "visibility": "--private",
}


class Command(BaseCommand):
    help = (
        "Send the benchmark's questions to an OpenAI-compatible endpoint and turn the answers "
        "into a scored leaderboard submission; or resume or cancel a run."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--resume", type=int, metavar="RUN_ID", help="continue a run")
        action.add_argument("--cancel", type=int, metavar="RUN_ID", help="stop a run")
        parser.add_argument(
            "--enqueue",
            action="store_true",
            help="leave the run to the worker on the inference queue instead of running it here",
        )
        new = parser.add_argument_group("a new run")
        new.add_argument("--user", help="the researcher or admin it runs for")
        new.add_argument(
            "--track",
            choices=list(TRACKS),
            default="qa",
            help="qa (default), or a track's items: extraction (a vision model, region "
            "items), transformation (--table-format), sql",
        )
        new.add_argument("--model", help="the model's name as the endpoint knows it")
        where = new.add_mutually_exclusive_group()
        where.add_argument("--endpoint", help="the name of an endpoint an admin registered")
        where.add_argument("--base-url", help="the user's own endpoint, e.g. https://host/v1")
        parser.add_argument(
            "--api-key-stdin",
            action="store_true",
            help="read the own endpoint's key from standard input (for a new run, or to "
            "resume one whose key was erased when it stopped)",
        )
        new.add_argument("--modality", choices=Modality.values, default=Modality.TEXT)
        new.add_argument(
            "--table-format", choices=TABLE_FORMATS, help="default: paper, or image for vision"
        )
        new.add_argument("--prompt-style", choices=PROMPT_STYLES, default="zero_shot")
        new.add_argument(
            "--no-system-role",
            action="store_true",
            help="put the system text in the first user message",
        )
        new.add_argument("--split", choices=EvalSplit.values, default=EvalSplit.TEST)
        new.add_argument(
            "--scope", choices=DataScope.values, default=DataScope.REAL, help="qa only"
        )
        new.add_argument("--temperature", type=float, default=0.0)
        new.add_argument("--max-tokens", type=int, default=128)
        new.add_argument("--concurrency", type=int, default=8, help="requests in flight")
        new.add_argument("--no-cache", action="store_true", help="send every question again")
        new.add_argument("--weights", choices=Weights.values, default=Weights.OPEN)
        new.add_argument("--parameters", type=decimal_argument, help="billions, for open weights")
        new.add_argument("--organisation", default="")
        new.add_argument("--private", action="store_true", help="a private leaderboard entry")
        new.add_argument("--description", default="")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["cancel"]:
                self._cancel(options["cancel"])
            elif options["resume"]:
                self._resume(
                    options["resume"], enqueue=options["enqueue"], api_key=self._key(options)
                )
            else:
                self._create(options)
        except ApplicationError as exc:
            # Every problem, each naming its option unless the message does already.
            lines = []
            for problem in exc.problems:
                field = problem.field or ""
                named = not field or field.replace("_", " ") in problem.message.lower()
                option = _OPTIONS.get(field, f"--{field.replace('_', '-')}")
                lines.append(("" if named else f"{option}: ") + problem.message)
            raise CommandError("\n".join(lines)) from None
        except PermissionDenied as exc:
            raise CommandError(str(exc) or "not allowed") from None

    # --- the three actions

    def _run(self, pk: int) -> InferenceRun:
        try:
            return InferenceRun.objects.select_related("created_by").get(pk=pk)
        except InferenceRun.DoesNotExist:
            raise CommandError(f"There is no inference run {pk}") from None

    def _cancel(self, pk: int) -> None:
        run = self._run(pk)
        run = inference_run_cancel(user=run.created_by, run_id=pk)
        if run.status == RunStatus.CANCELLED:
            self.stdout.write(f"Run {pk} is cancelled; --resume {pk} carries it on.")
        else:
            self.stdout.write(f"Run {pk} will stop within a second.")

    def _key(self, options: dict[str, Any]) -> str:
        if not options["api_key_stdin"]:
            return ""
        key = sys.stdin.readline().strip()
        if not key:
            raise CommandError("--api-key-stdin: standard input gave no key")
        return key

    def _resume(self, pk: int, *, enqueue: bool, api_key: str) -> None:
        run = self._run(pk)
        inference_run_resume(user=run.created_by, run_id=pk, enqueue=enqueue, api_key=api_key)
        if enqueue:
            self.stdout.write(f"Run {pk} is queued for the inference worker.")
            return
        self._execute(pk)

    def _create(self, options: dict[str, Any]) -> None:
        missing = [f"--{n}" for n in ("user", "model") if not options[n]]
        if not options["endpoint"] and not options["base_url"]:
            missing.append("--endpoint (or --base-url)")
        if missing:
            raise CommandError(
                f"A new run needs {', '.join(missing)} (or --resume/--cancel RUN_ID)"
            )
        try:
            user = get_user_model().objects.get(username=options["user"])
        except get_user_model().DoesNotExist:
            raise CommandError(f"There is no user {options['user']!r}") from None
        qa = options["track"] == "qa"
        vision = options["modality"] == Modality.VISION or options["track"] == "extraction"
        data = InferenceRunInput(
            track=options["track"],
            mode="region" if options["track"] == "extraction" else "",
            model_name=options["model"],
            endpoint=options["endpoint"] or "",
            base_url=options["base_url"] or "",
            api_key=self._key(options),
            modality=Modality.VISION if vision else options["modality"],
            table_format=options["table_format"] or ("image" if vision else "paper"),
            prompt_style=options["prompt_style"],
            system_role=not options["no_system_role"],
            split=options["split"],
            data_scope=options["scope"] if qa else "",
            temperature=options["temperature"],
            max_tokens=options["max_tokens"],
            concurrency=options["concurrency"],
            use_cache=not options["no_cache"],
            weights=options["weights"],
            parameters_billions=options["parameters"],
            organisation=options["organisation"],
            visibility=Visibility.PRIVATE if options["private"] else Visibility.PUBLIC,
            description=options["description"],
        )
        run = inference_run_create(user=user, data=data, enqueue=options["enqueue"])
        if options["enqueue"]:
            self.stdout.write(f"Run {run.pk} is queued for the inference worker.")
            return
        where = run.endpoint.name if run.endpoint else run.base_url
        self.stdout.write(f"Run {run.pk}: {run.model_name} at {where}")
        context = run.context_length
        self.stdout.write(
            f"Context length {context:,} tokens, as the endpoint reports it"
            if context
            else "The endpoint does not say the model's context length here"
        )
        self.stdout.write(
            "Prompts over the context length are not answered: scored as empty answers, "
            "and counted on the run and its board row."
        )
        self._execute(run.pk)

    # --- running in the foreground

    def _execute(self, pk: int) -> None:
        tty = self.stdout.isatty()
        last = [0.0]
        latest: list[Progress] = []

        def show(progress: Progress, *, final: bool = False) -> None:
            latest[:] = [progress]
            now = time.monotonic()
            if not final and now - last[0] < (0.5 if tty else 5.0):
                return
            last[0] = now
            rate = progress.sent / progress.elapsed if progress.elapsed else 0.0
            settled = progress.answered + progress.failed + progress.too_long
            line = (
                f"{settled}/{progress.total} settled · {progress.cached} from the cache · "
                f"{progress.failed} without an answer · "
                + (f"{progress.too_long} over the context length · " if progress.too_long else "")
                + f"{rate:.1f} requests/s"
            )
            self.stdout.write(("\r" + line) if tty else line, ending="")
            if not tty:
                self.stdout.write("")

        try:
            outcome = inference_run_execute(run_id=pk, on_progress=show)
        except KeyboardInterrupt:
            raise CommandError(
                f"Interrupted; the answers so far are saved: --resume {pk}"
            ) from None
        if latest:
            show(latest[0], final=True)
        if tty:
            self.stdout.write("")
        run = self._run(pk)
        if run.status != RunStatus.DONE:
            raise CommandError(
                f"Run {pk} is {run.status}: {run.error or outcome}"
                + ("" if run.status == RunStatus.RUNNING else f" (--resume {pk})")
            )
        self.stdout.write(
            f"Run {pk} is done: {run.answered} answered ({run.cached} from the cache), "
            f"{run.failed} rejected by the endpoint, {run.too_long} over the model's context "
            "length (scored as empty answers)."
        )
        submission = run.submission
        if submission is None:
            return
        # The web's worker may have scored it already; scoring twice does the work once.
        submission_score(submission_id=submission.pk)
        submission.refresh_from_db()
        if not submission.is_qa:
            self.stdout.write(describe_track_score(submission))
            return
        score = submission.score_for()
        if submission.status == Status.SCORED and score is not None and score.withheld:
            self.stdout.write(
                f"Submission {submission.pk} scored; its overall figures are withheld: "
                f"they would reveal fewer than {DISCLOSURE_MARGIN + 1} test questions."
            )
        elif submission.status == Status.SCORED and score is not None:
            self.stdout.write(
                self.style.SUCCESS(
                    f"Submission {submission.pk} scored: recall {score.recall:.3f}, CC "
                    f"{score.cc:.3f} over {counted(score.n_questions, 'question')} (2025-05 rules)."
                )
            )
        else:
            self.stdout.write(f"Submission {submission.pk} is {submission.status}.")
