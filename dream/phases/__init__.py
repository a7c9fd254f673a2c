"""The consolidation pipeline: orient, summarize, attach, wiki, then the re-check of citations.

Phases may import the page model (dream.wiki), the language modules, engines and gates; gates and
engines never import a phase."""
