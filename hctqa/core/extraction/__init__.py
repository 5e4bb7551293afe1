"""Table extraction: from the words of a PDF page or the cells of an HTML page to tables.

- ``layout``: what the table rules read from a page (words, characters, ruling segments),
  from a PDF's text layer or from OCR alike;
- ``extract``: the tables of a page (``extract_page``) or of a drawn box (``extract_box``),
  from a layout, as ``table.Table`` values; ``python -m hctqa.core.extraction`` prints them;
- ``detect``: where a page's tables are, with their titles and notes;
- ``structure``: one table's columns, rows, headers and spans from its words and rules,
  read by ``lines`` (words made pieces, lines and phrases; kinds of text), ``columns``,
  ``headers``, ``rows`` and ``spans`` (the grid being read; rules that draw every cell);
- ``table``: one extracted table: cells with spans and flags, headers, title and notes;
- ``grid``: merged cells on a grid, recovered from cell boxes, written as the canonical CSV;
- ``html``: every ``<table>`` of a saved web page, spans from ``rowspan``/``colspan``;
- ``pdf``: a PDF page for the ingest worker: its candidates, crops and page image;
- ``documents``: what kind of file an upload is, and whether a PDF can be read at all;
- ``worker``: pages in a child process, so that a page that takes too long can be stopped;
- ``metrics``: TEDS, exact match, cell precision and recall, the competition's relations;
- ``icdar``: the ICDAR 2013 Table Competition's ground truth, for the benchmark and tests.

None of it imports Django.
"""
