"""The tracks beside QA: table extraction, table transformation (HCT → relational) and
NL-to-SQL, as pure functions the platform's services, commands and tasks call.

- ``shared``: items, submission files, per-item results, splits;
- ``extraction``: items from rendered synthetic tables and real documents, the cell and HTML
  predictions, TEDS, TEDS-Struct, adjacency F1, exact structure, detection; the baselines;
- ``teds``: TEDS computed exactly and fast for tables (two levels under the root);
- ``rendering``: a synthetic HCT drawn to a PDF page and a PNG, with its box known exactly;
- ``transformation``: items, row-level precision, recall and F1, exact table; the unpivot
  baseline;
- ``sql``: NL-to-SQL items, execution accuracy and the QA scorer on the executed result;
- ``sandbox``: the child process that runs submitted SQL under limits;
- ``prompts``: the versioned prompts of the endpoint baselines and strict readers of replies.

- ``figures``: each track's figures as sums over items, for any part of the items and their
  bootstrap intervals.

``docs/tracks.md`` and each track's page (``docs/track-*.md``) state every contract. None of
it imports Django.
"""
