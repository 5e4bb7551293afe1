"""New tables from outside a release: tables that reviewers accepted from documents."""

from __future__ import annotations

from django.core.files.base import ContentFile

from dataset.models import Table
from hctqa.core.extraction.grid import Grid
from hctqa.core.splits import split_for_table
from hctqa.core.tables import TableFormatError, parse_table
from plumbing.errors import ApplicationError


def table_create(
    *,
    table_id: str,
    source: str,
    canonical_csv: str = "",
    grid: Grid | None = None,
    title: str = "",
    notes: str = "",
    image_png: bytes | None = None,
) -> Table:
    """A new table, in the split the stable hash of its id gives (the rule the release's
    tables follow), with its image if given. It is given as its canonical CSV, which is read
    to check it, or as a grid of merged cells (an editor's corrected table), written as its
    canonical CSV without reading it back: a grid's CSV is that table by construction.
    Refused, with nothing written: a table that cannot be read, or an id already taken. Run
    it in the caller's transaction; if that fails later, the caller deletes ``table.image``."""
    if (grid is None) == (not canonical_csv):
        raise ValueError("give the table's canonical CSV or its grid, not both")
    if grid is not None:
        if grid.n_rows < 1 or grid.n_cols < 1 or any("\x00" in c.text for c in grid.cells):
            raise ApplicationError("the table cannot be read: it has no cells, or a NUL in one")
        canonical_csv = grid.to_canonical()
    else:
        try:
            parse_table(canonical_csv)
        except TableFormatError as exc:
            raise ApplicationError(f"the table cannot be read: {exc}") from None
    if Table.objects.filter(pk=table_id).exists():
        raise ApplicationError(f"a table {table_id} already exists")
    table = Table(
        id=table_id,
        source=source,
        split=split_for_table(table_id),
        canonical_csv=canonical_csv,
        title=title,
        notes=notes,
    )
    if image_png is not None:
        table.image.save(f"{table_id}.png", ContentFile(image_png), save=False)
    try:
        table.save(force_insert=True)
    except BaseException:
        if table.image:
            table.image.delete(save=False)
        raise
    return table
