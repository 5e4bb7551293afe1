from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "ingest"
    verbose_name = "Ingesting new tables"

    def ready(self) -> None:
        from ingest import jobs  # noqa: F401 - registers its job kinds
