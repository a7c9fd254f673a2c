"""The embedded engine: Dream's default thinking, with no network and no model."""
