from django.apps import AppConfig


class PlumbingConfig(AppConfig):
    """No models of its own (``jobs.Job`` is abstract): an app so that Celery finds its task,
    the sweeps worker's one sweep of every job kind."""

    name = "plumbing"
    verbose_name = "Shared plumbing"
