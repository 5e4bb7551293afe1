from django.apps import AppConfig


class ReleasesConfig(AppConfig):
    name = "releases"
    verbose_name = "Dataset releases"

    def ready(self) -> None:
        from releases import jobs  # noqa: F401 - registers its job kinds
