from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation and verification"

    def ready(self) -> None:
        from annotation import jobs, receivers  # noqa: F401 - jobs registers its job kinds
        from dataset.signals import release_labels_imported, table_properties_decided

        table_properties_decided.connect(
            receivers.resolved_table_properties, dispatch_uid="annotation-resolutions"
        )
        release_labels_imported.connect(
            receivers.release_labels_keep, dispatch_uid="annotation-release-labels"
        )
