"""Publishing a release's Hugging Face folder to a dataset repository on the Hub: one commit
that makes the repository hold exactly the folder, tagged with the version.

Every request to the Hub has a time limit: ``huggingface_hub``'s shared HTTP client is
replaced by one whose transport applies the limit to every request, those the library sends
without one included, and retries are the library's few. Xet storage is turned off for the
upload: its client sends requests of its own that no limit here reaches, so large files go by
the Hub's LFS transfer instead. The token is passed to each call and never written anywhere;
error messages never hold it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from hctqa.core.wording import counted
from plumbing.errors import ApplicationError

# The repository's own git settings stay (the Hub makes it with the repository).
KEPT_FILES = frozenset({".gitattributes"})
_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")

Report = Callable[[str], None]


class HubError(ApplicationError):
    """The Hub refused, failed or did not answer in time."""


@dataclass(frozen=True)
class HubCommit:
    url: str
    oid: str
    files: int
    removed: int


def check_repo_id(repo_id: str) -> str:
    """``ORG/NAME`` as the Hub accepts it, or ``ApplicationError`` saying what one looks like."""
    repo_id = repo_id.strip()
    if not _REPO_ID.fullmatch(repo_id) or ".." in repo_id or "--" in repo_id:
        raise ApplicationError(
            f"Not a Hub repository: {repo_id!r}; give ORG/NAME (letters, digits, '-', '_', "
            "'.'; no '--' or '..')",
            field="repo",
        )
    return repo_id


class _TimedTransport(httpx2.HTTPTransport):
    def __init__(self, seconds: float) -> None:
        super().__init__()
        self._timeout = httpx2.Timeout(seconds).as_dict()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        # Also for the requests the library sends with no time limit (timeout=None).
        request.extensions["timeout"] = self._timeout
        return super().handle_request(request)


def _use_timed_client(seconds: float) -> None:
    from huggingface_hub import constants, set_client_factory

    constants.HF_HUB_DISABLE_XET = True
    set_client_factory(
        lambda: httpx2.Client(follow_redirects=True, transport=_TimedTransport(seconds))
    )


def _explained(exc: Exception, *, doing: str, endpoint: str, timeout: float, token: str) -> str:
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(exc, httpx2.TimeoutException):
        message = f"the Hub at {endpoint} did not answer within {timeout:g} s while {doing}"
    elif isinstance(exc, HfHubHTTPError) and exc.response is not None:
        status = exc.response.status_code
        said = (exc.server_message or "").strip()[:300]
        reason = {
            401: "the Hub refused the token (check HF_TOKEN)",
            403: "the token may not do this (it needs write access to the repository)",
            404: "the Hub does not know the repository, or the token may not see it",
        }.get(status, f"the Hub answered {status}")
        message = f"{reason} while {doing}" + (f": {said}" if said else "")
    elif isinstance(exc, httpx2.HTTPError):
        message = f"cannot reach the Hub at {endpoint} while {doing} ({type(exc).__name__})"
    else:
        message = f"the Hub's library failed while {doing}: {str(exc)[:300]}"
    return message.replace(token, "***") if token else message


def publish(
    *,
    repo_id: str,
    files: Sequence[tuple[str, Path]],
    tag: str,
    message: str,
    description: str,
    token: str,
    endpoint: str,
    timeout: float,
    private: bool,
    report: Report | None = None,
) -> HubCommit:
    """Make ``repo_id`` (a dataset repository, made when missing, private when ``private``)
    hold exactly ``files`` (path in the repository, file here) in one commit, and tag it.

    Refused: a tag that exists already (a version is published once), and a ``private`` push
    to a repository that is not private. Raises ``HubError`` saying what went wrong."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.errors import EntryNotFoundError, RevisionNotFoundError

    _use_timed_client(timeout)
    api = HfApi(endpoint=endpoint, token=token)

    committed: list[str] = []  # the commit's id, once made

    def step(doing: str, call: Callable[[], Any]) -> Any:
        if report is not None:
            report(doing[0].upper() + doing[1:])
        try:
            return call()
        except (httpx2.HTTPError, OSError, ValueError, RuntimeError) as exc:
            why = _explained(exc, doing=doing, endpoint=endpoint, timeout=timeout, token=token)
            if committed:
                raise HubError(
                    f"The commit {committed[0]} was made but not tagged: {why}; push again to "
                    "tag it"
                ) from None
            raise HubError(f"Nothing was published: {why}") from None

    kind = "dataset"
    step(
        f"making the repository {repo_id}",
        lambda: api.create_repo(repo_id, repo_type=kind, exist_ok=True, private=private or None),
    )
    if private and not step(
        "reading the repository's visibility",
        lambda: api.dataset_info(repo_id).private,
    ):
        raise HubError(
            f"Nothing was published: {repo_id} is public, and the full edition holds the test "
            "split's gold answers; push it to a private repository"
        )
    refs = step(
        "reading the repository's tags", lambda: api.list_repo_refs(repo_id, repo_type=kind)
    )
    if any(t.name == tag for t in refs.tags):
        raise HubError(
            f"Nothing was published: {repo_id} has a tag {tag} already; a release is published "
            "once, and its tag never moves"
        )

    def listing() -> list[str]:
        try:
            return api.list_repo_files(repo_id, repo_type=kind)
        except (EntryNotFoundError, RevisionNotFoundError):
            return []  # a repository without a commit yet

    ours = {path for path, _ in files}
    stale = [p for p in step("listing the repository's files", listing) if p not in ours]
    stale = [p for p in stale if p not in KEPT_FILES]
    operations: list[Any] = [
        CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(local)) for path, local in files
    ]
    operations += [CommitOperationDelete(path_in_repo=p) for p in stale]
    commit = step(
        f"uploading {counted(len(files), 'file')} as one commit",
        lambda: api.create_commit(
            repo_id,
            operations,
            commit_message=message,
            commit_description=description,
            repo_type=kind,
        ),
    )
    committed.append(commit.oid)
    step(
        f"tagging the commit {tag}",
        lambda: api.create_tag(
            repo_id, tag=tag, revision=commit.oid, tag_message=message, repo_type=kind
        ),
    )
    return HubCommit(url=commit.commit_url, oid=commit.oid, files=len(files), removed=len(stale))
