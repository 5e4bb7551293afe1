"""The cache of anonymous visitors' public pages (``pages.public_page``)."""
