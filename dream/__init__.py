"""Dream: nightly consolidation of a memoryfs store."""
