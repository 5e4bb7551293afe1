from django.apps import AppConfig


class DiscussionConfig(AppConfig):
    name = "discussion"
    verbose_name = "Discussion of tables and questions"

    def ready(self) -> None:
        from accounts.selectors import NOTIFICATION_CHECKS
        from discussion.selectors import mentions_withdrawn

        if mentions_withdrawn not in NOTIFICATION_CHECKS:
            NOTIFICATION_CHECKS.append(mentions_withdrawn)
