from django.apps import AppConfig


class DatasetConfig(AppConfig):
    name = "dataset"
    verbose_name = "Dataset"
