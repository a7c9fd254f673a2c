"""memoryfs: long-term memory for AI agents as Markdown files in a Git repository.

The library: store, pages, links, transcripts, ingestion, validation, index,
search, materializer, receipts. It knows nothing of ``dream`` or ``cli``.
"""

__version__ = "0.1.0"
