"""The benchmark's synthetic generator, ported from its R scripts (SYNTHETIC.md).

- ``rrandom``: R's Mersenne-Twister, sampling, ``round`` and number printing;
- ``collation``: the Windows sort order the original run used;
- ``params``: the three parameter files, read and checked;
- ``tables``: stage 1 (table specs) and stage 2 (relational tables and their pivot to HCTs);
- ``questions`` and ``nltext``: stage 3 (templates, SQL run with sqlite3, question text);
- ``nonsense``: stage 4 (the _NONSEM variant);
- ``pipeline``: all stages with the save rules; ``output``: the released layout on disk.
"""
