"""The page model Dream writes with: subject pages, their claims, sources, profile and rendering."""
