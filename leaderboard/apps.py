from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboard"

    def ready(self) -> None:
        from annotation.signals import gold_pool_changed
        from leaderboard.receivers import rescore_after_gold_pool_change

        gold_pool_changed.connect(rescore_after_gold_pool_change, dispatch_uid="leaderboard-gold")
