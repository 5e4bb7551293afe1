from typing import Any

from django.apps import AppConfig
from django.db.backends.signals import connection_created


def _watch(sender: type, connection: Any, **kwargs: Any) -> None:
    from pagecache.pages import watch_queries

    # Every connection of every process (web, workers, commands): a write anywhere renews
    # the pages that read its table.
    if watch_queries not in connection.execute_wrappers:
        connection.execute_wrappers.insert(0, watch_queries)


class PageCacheConfig(AppConfig):
    name = "pagecache"
    label = "pagecache"
    verbose_name = "Public page cache"

    def ready(self) -> None:
        connection_created.connect(_watch, dispatch_uid="page-cache-watch")
