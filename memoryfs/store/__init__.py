"""The store itself: the Git repository, memory.toml, atomic writes, safe reads, hashes, slugs."""
