"""harness.core: the bottom layer, the data every other package shares.

Messages (:mod:`~harness.core._messages`), the event stream (:mod:`~harness.events`), how a
run ends (:mod:`~harness.core._terminations`), call records and the budget
(:mod:`~harness.core._budget`), the :class:`~harness.core._result.Result`, and the halt signal
(:mod:`~harness.core._halt`). These modules import nothing from harness but each other and
:mod:`harness.errors`, so providers, tools, telemetry, the kernel and everything above can use
them without import cycles. Users import the public names from :mod:`harness` and
:mod:`harness.events`.
"""
