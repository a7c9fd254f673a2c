"""The files of memory/ as objects: pages, links, claims, fact lines, sources, transcripts."""
