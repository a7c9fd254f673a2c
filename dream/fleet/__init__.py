"""``dream fleet``: many users' stores on a Git server, consolidated by Celery workers.

One task per store (``consolidate(store_url)``): a worker takes the store's lock in Redis,
brings its scratch clone up to date and runs ``dream.remote.run_remote`` there, whose push
is a compare-and-swap on the remote's ``main`` (the real guard; the lock only keeps two
workers from doing the same work). A beat schedules the nightly runs over a registry of
stores, spread by a per-store jitter, and enqueues every few minutes the stores whose
remote ``main`` moved since their last run. Per store, Redis keeps what the last run did.

Modules, one concept each: ``config`` (settings from flags and the environment, the Redis
connection, the one error), ``lock`` (the per-store lock), ``registry`` (which stores),
``status`` (what each store's last run did), ``scratch`` (the worker's clones),
``consolidate`` (one store's run, no Celery), ``schedule`` (what is due), ``app`` (the
Celery application and its tasks: the only module that imports Celery).

Celery and redis-py are the ``[fleet]`` extra: nothing here is imported by ``dream`` or
``memoryfs``, and a command without them says ``pip install 'memoryfs[fleet]'``.
"""

from __future__ import annotations
