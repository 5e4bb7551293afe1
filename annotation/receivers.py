"""What annotation does when the dataset below it imports tables (``dataset.signals``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from django.utils import timezone

from annotation.models import AnnotationSource, PropertyAnnotation

_BATCH = 500


def resolved_table_properties(
    sender: Any, *, table_ids: Collection[str], **kwargs: Any
) -> dict[str, dict]:
    """An adjudicated resolution, not the release, decides the properties of a resolved
    table: the import keeps these."""
    return dict(
        PropertyAnnotation.objects.filter(
            source=AnnotationSource.RESOLUTION, table_id__in=list(table_ids)
        ).values_list("table_id", "properties")
    )


def release_labels_keep(sender: Any, *, properties: Mapping[str, dict], **kwargs: Any) -> int:
    """The release's labels, kept as one annotation per table (version bumped on change)."""
    existing = {
        table_id: (pk, props, version)
        for pk, table_id, props, version in PropertyAnnotation.objects.filter(
            source=AnnotationSource.RELEASE, table_id__in=list(properties)
        ).values_list("pk", "table_id", "properties", "version")
    }
    now = timezone.now()
    create, update = [], []
    for table_id, props in properties.items():
        if table_id not in existing:
            create.append(
                PropertyAnnotation(
                    table_id=table_id,
                    source=AnnotationSource.RELEASE,
                    properties=props,
                    version=1,
                    saved_at=now,
                )
            )
            continue
        pk, current, version = existing[table_id]
        if current != props:
            update.append(
                PropertyAnnotation(pk=pk, properties=props, version=version + 1, saved_at=now)
            )
    PropertyAnnotation.objects.bulk_create(create, batch_size=_BATCH)
    PropertyAnnotation.objects.bulk_update(
        update, ["properties", "version", "saved_at"], batch_size=_BATCH
    )
    return len(create) + len(update)
