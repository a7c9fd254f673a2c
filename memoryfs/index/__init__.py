"""Derived views of the tree: INDEX.md, the sessions index, the FTS cache and its units."""
