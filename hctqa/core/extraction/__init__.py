"""Table extraction: from the cells of a PDF page or an HTML page to the canonical CSV.

- ``layout``: what the table rules read from a page (words, characters, ruling segments),
  from a PDF's text layer or from OCR alike;
- ``extract``: the tables of a page (``extract_page``) or of a drawn box (``extract_box``),
  from a layout, as ``table.Table`` values; ``python -m hctqa.core.extraction`` prints them;
- ``table``: one extracted table: cells with spans and flags, headers, title and notes;
- ``grid``: merged cells on a grid, recovered from cell boxes, written as the canonical CSV;
- ``html``: every ``<table>`` of a saved web page, spans from ``rowspan``/``colspan``;
- ``pdf``: pdfplumber on one page: ruled tables first, text alignment otherwise, crops;
- ``documents``: what kind of file an upload is, and whether a PDF can be read at all;
- ``worker``: pages in a child process, so that a page that takes too long can be stopped;
- ``metrics``: TEDS, exact match and cell precision and recall of an extraction.

None of it imports Django.
"""
