"""Anonymous visitors' public pages, kept whole in the "pages" cache (``public_page``).

A page is kept with the database tables its queries read, each with the token the table had
before it was read. Every INSERT, UPDATE, DELETE or TRUNCATE that any process sends through
Django gives its table a new token once it is committed, so the next request for a page
that read the table renders it again, whichever service, command, task or admin form made
the change (a new score, a visibility change, an import, an annotation, a release). Watching
the SQL rather than calling a hook from each service means that a new write path cannot
forget it; bulk_create and queryset updates, which send no model signal, are seen too.

Only pages rendered for a visitor with no session, no messages and no CSRF token are kept,
and only such visitors are served them: a logged-in user never gets a kept page, and no
page made for one is kept. PAGE_CACHE_SECONDS bounds how long a page is kept at all, for
changes made outside Django (psql by hand) or by a worker on a host that shares no cache.

A page is kept only for a query string made of the parameters its view reads (``params``, or
the fields of its ``form``), under a key built from them in one order: a stranger adding
unknown parameters gets the page rendered, not a new entry, so they can neither fill the
cache nor push the pages others read out of it. The tables' tokens live in a cache of their
own ("page_tokens"), which pages never cull; a token lost all the same is replaced by a new
one, which makes the pages that read its table out of date, never current again.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.apps import apps
from django.conf import settings
from django.contrib.messages import get_messages
from django.core.cache import caches
from django.db import connection, transaction
from django.forms import Form
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers
from django.utils.translation import get_language

from plumbing.commit import platform_commit

CACHE = "pages"
TOKENS = "page_tokens"
# Every page depends on it: a TRUNCATE (a database flushed) renews it.
EVERY_TABLE = "*"
# A page larger than this is rendered each time rather than kept.
MAX_PAGE_BYTES = 2 * 1024 * 1024
# A query string longer than this, or holding a longer value, is rendered each time.
MAX_QUERY_CHARS = 1000
MAX_PARAM_CHARS = 200
# The request headers a kept page varies on besides the URL: htmx asks for fragments of the
# same URLs (HX-Request), and these say which.
HTMX_HEADERS = ("HX-Request", "HX-Target", "HX-Boosted", "HX-History-Restore-Request")
# Columns no page shows: an UPDATE setting only these changes no page (workers beat every
# few seconds while they score, and the board would be rendered again at each beat).
UNSHOWN_COLUMNS = frozenset({"heartbeat_at"})

_WRITE = re.compile(
    r'\s*(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+"?([\w.]+)"?',
    re.IGNORECASE,
)
_TRUNCATE = re.compile(r"\s*TRUNCATE\b", re.IGNORECASE)
# An UPDATE that sets plain values only, each column to a parameter.
_UPDATE_VALUES = re.compile(
    r'\s*UPDATE\s+"?[\w.]+"?\s+SET\s+((?:"\w+" = %s)(?:, "\w+" = %s)*)(?:\s+WHERE\s|\s*$)',
    re.IGNORECASE,
)
_ASSIGNED = re.compile(r'"(\w+)" = %s')
_QUOTED = re.compile(r'"([^"]+)"')


class _Reads:
    """The tables a page being rendered has read, with their tokens before the read."""

    __slots__ = ("tokens", "uncommitted")

    def __init__(self) -> None:
        self.tokens: dict[str, str] = {}
        # Read inside a transaction: uncommitted rows or an old snapshot may be in the page.
        self.uncommitted = False


_reads: ContextVar[_Reads | None] = ContextVar("page_cache_reads", default=None)
_tables: frozenset[str] | None = None


def _known_tables() -> frozenset[str]:
    global _tables
    if _tables is None:
        models = apps.get_models(include_auto_created=True)
        _tables = frozenset(m._meta.db_table for m in models)
    return _tables


def _token_key(table: str) -> str:
    return f"table:{table}"


def renew(tables: Iterable[str]) -> None:
    """New tokens for these tables: every kept page that read one of them is out of date."""
    caches[TOKENS].set_many({_token_key(t): uuid.uuid4().hex for t in tables}, timeout=None)


def _tokens(tables: Iterable[str]) -> dict[str, str]:
    """The tables' current tokens, given one if they have none (first use, or evicted: a new
    token only makes pages that read the table out of date)."""
    cache = caches[TOKENS]
    keys = {_token_key(t): t for t in tables}
    found = cache.get_many(keys)
    missing = [k for k in keys if k not in found]
    for key in missing:
        cache.add(key, uuid.uuid4().hex, timeout=None)
    if missing:
        found.update(cache.get_many(missing))
    return {keys[k]: v for k, v in found.items()}


def written_tables(sql: str) -> set[str]:
    """The tables a statement writes ({} for a read, and for an update of heartbeats only)."""
    if _TRUNCATE.match(sql):
        return {EVERY_TABLE}
    match = _WRITE.match(sql)
    if match is None:
        return set()
    assignments = _UPDATE_VALUES.match(sql)
    if assignments and set(_ASSIGNED.findall(assignments.group(1))) <= UNSHOWN_COLUMNS:
        return set()
    return {match.group(1)}


class _Renewal:
    """Renews the tables a transaction wrote once it commits (dropped if it rolls back)."""

    def __init__(self) -> None:
        self.tables: set[str] = set()

    def __call__(self) -> None:
        renew(self.tables)


def _note_write(conn: Any, tables: set[str]) -> None:
    if not conn.in_atomic_block:
        renew(tables)
        return
    # One renewal per transaction. A savepoint rolled back drops the renewal it registered
    # (Django removes its callbacks), and the next write registers another.
    pending = next((f for _, f, _ in conn.run_on_commit if isinstance(f, _Renewal)), None)
    if pending is None:
        pending = _Renewal()
        transaction.on_commit(pending, using=conn.alias)
    pending.tables |= tables


def watch_queries(execute: Callable, sql: Any, params: Any, many: bool, context: dict) -> Any:
    """A database execute wrapper on every connection (see apps.py): records what a page
    being rendered reads, and renews what every statement writes."""
    conn = context["connection"]
    reads = _reads.get()
    if reads is not None:
        if conn.in_atomic_block:
            reads.uncommitted = True
        tables = (
            set(_QUOTED.findall(sql)) & _known_tables()
            if isinstance(sql, str)
            else set(_known_tables())
        )
        new = tables - reads.tokens.keys()
        if new:
            # Before the query: a change committed between the two makes the page out of
            # date at once, never the other way round.
            reads.tokens.update(_tokens(new))
    result = execute(sql, params, many, context)
    written = written_tables(sql) if isinstance(sql, str) else {EVERY_TABLE}
    if written:
        _note_write(conn, written)
    return result


def _may_use_cache(request: HttpRequest) -> bool:
    """A GET from a visitor who cannot be logged in and has no message waiting, outside a
    transaction (the tests' own, whose rows are not committed)."""
    return (
        settings.PAGE_CACHE_SECONDS > 0
        and request.method == "GET"
        and settings.SESSION_COOKIE_NAME not in request.COOKIES
        and "messages" not in request.COOKIES
        and "Authorization" not in request.headers
        and not connection.in_atomic_block
    )


@dataclass(frozen=True)
class Params:
    """The query parameters a view reads: ``multiple`` ones may be repeated (check boxes)."""

    single: frozenset[str] = frozenset()
    multiple: frozenset[str] = frozenset()

    @classmethod
    def of(cls, names: Iterable[str], form: type[Form] | None) -> Params:
        single, multiple = set(names), set()
        for name, field in (form.base_fields if form else {}).items():
            (multiple if getattr(field.widget, "allow_multiple_selected", False) else single).add(
                name
            )
        return cls(frozenset(single), frozenset(multiple))


def canonical_query(request: HttpRequest, params: Params) -> str | None:
    """The query string in one order (names sorted, a repeated parameter's values sorted and
    each once), or None when the page should not be kept for it: a parameter the view does
    not read, a single one repeated, or a value too long."""
    raw = request.META.get("QUERY_STRING", "")
    if len(raw) > MAX_QUERY_CHARS:
        return None
    pairs = []
    for name, values in request.GET.lists():
        if any(len(v) > MAX_PARAM_CHARS for v in values):
            return None
        if name in params.multiple:
            values = sorted(set(values))
        elif name not in params.single or len(values) > 1:
            return None
        pairs += [(name, v) for v in values]
    return urlencode(sorted(pairs))


def _page_key(request: HttpRequest, query: str) -> str:
    parts = [
        platform_commit(),
        request.scheme,
        request.get_host(),
        request.path,
        query,
        get_language() or "",
        *(request.headers.get(h, "") for h in HTMX_HEADERS),
    ]
    return "page:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _may_keep(request: HttpRequest, response: HttpResponse, reads: _Reads) -> bool:
    """Nothing in the page is the visitor's own: no CSRF token, no message, no session, no
    user; and it reflects committed rows."""
    return (
        response.status_code == 200
        and not response.streaming
        and not response.cookies
        and len(response.content) <= MAX_PAGE_BYTES
        and not reads.uncommitted
        and not request.META.get("CSRF_COOKIE_NEEDS_UPDATE")
        and not request.user.is_authenticated
        and not request.session.modified
        and len(get_messages(request)) == 0
    )


View = Callable[..., HttpResponse]


def public_page(
    view: View | None = None, *, params: Iterable[str] = (), form: type[Form] | None = None
) -> Any:
    """Keep the view's pages for anonymous visitors until a table they read changes: as
    ``@public_page`` for a page read without a query string, as ``@public_page(form=...,
    params=(...))`` for one that reads these parameters."""
    declared = Params.of(params, form)

    def decorate(view: View) -> View:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            query = canonical_query(request, declared) if _may_use_cache(request) else None
            if query is None:
                response = view(request, *args, **kwargs)
            else:
                response = _cached(request, query, lambda: view(request, *args, **kwargs))
            # Kept or not, the page differs for a logged-in user (Cookie) and for htmx.
            patch_vary_headers(response, ("Cookie", "HX-Request"))
            return response

        return wrapped

    return decorate if view is None else decorate(view)


def _cached(request: HttpRequest, query: str, render: Callable[[], HttpResponse]) -> HttpResponse:
    cache = caches[CACHE]
    key = _page_key(request, query)
    kept = cache.get(key)
    if kept is not None:
        tokens, status, headers, content = kept
        if _tokens(tokens) == tokens:
            response = HttpResponse(content, status=status)
            for name, value in headers:
                response[name] = value
            return response
    reads = _Reads()
    reads.tokens.update(_tokens([EVERY_TABLE]))
    started = _reads.set(reads)
    try:
        response = render()
    finally:
        _reads.reset(started)
    if _may_keep(request, response, reads):
        headers = list(response.headers.items())
        kept = (reads.tokens, response.status_code, headers, response.content)
        cache.set(key, kept, timeout=settings.PAGE_CACHE_SECONDS)
    return response
