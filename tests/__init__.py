"""The test suite. Its folders mirror the packages (``memoryfs/``, ``dream/``, ``cli/``);
``e2e/`` runs the whole system through the CLIs, in processes, with crashes and races.

Every test folder is a package, so ``tests/dream`` is ``tests.dream`` and never shadows the
real ``dream``. The shared helpers live in ``support/``, which is not a package: pyproject's
``pythonpath`` puts it on ``sys.path`` so tests import them by name (``dream_fixtures``).
"""
