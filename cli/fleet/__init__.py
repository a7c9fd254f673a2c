"""``dream fleet``: the command group of the Celery fleet (``cli.fleet.commands``)."""
