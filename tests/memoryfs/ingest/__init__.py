"""Tests of ``memoryfs.ingest``."""
