from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboard"

    def ready(self) -> None:
        from dataset.signals import question_set_changed
        from leaderboard import jobs  # noqa: F401 - registers its job kinds and chores
        from leaderboard.receivers import rescore_after_question_set_change

        question_set_changed.connect(
            rescore_after_question_set_change, dispatch_uid="leaderboard-question-set"
        )
