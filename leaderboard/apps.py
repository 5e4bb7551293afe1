from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboard"

    def ready(self) -> None:
        from dataset.signals import question_set_changed
        from leaderboard import jobs  # noqa: F401 - registers its job kinds and chores
        from leaderboard.receivers import (
            baselines_after_items_built,
            rescore_after_question_set_change,
        )
        from tracks.signals import items_built

        question_set_changed.connect(
            rescore_after_question_set_change, dispatch_uid="leaderboard-question-set"
        )
        items_built.connect(baselines_after_items_built, dispatch_uid="leaderboard-baselines")
