"""Content-free receipts: lineage receipts per tier transition, their log, read receipts."""
