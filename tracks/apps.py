from django.apps import AppConfig


class TracksConfig(AppConfig):
    name = "tracks"
    verbose_name = "Tracks"

    def ready(self) -> None:
        from tracks import jobs  # noqa: F401 - registers its job kind
