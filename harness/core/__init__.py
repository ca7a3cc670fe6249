"""harness.core: the bottom layer, the data every other package shares.

Messages (:mod:`~harness.core.messages`), the event stream (:mod:`~harness.core.events`), how a
run ends (:mod:`~harness.core.terminations`), call records and the budget
(:mod:`~harness.core.budget`), the :class:`~harness.core.result.Result`, and the halt signal
(:mod:`~harness.core.halt`). These modules import nothing from harness but each other and
:mod:`harness.errors`, so providers, tools, telemetry, the kernel and everything above can use
them without import cycles. Users import the public names from :mod:`harness` and
:mod:`harness.events`.
"""
