"""Developer-only tools, not shipped in the package: run from a clone (``python -m devtools.lc0cmp ...``)."""
