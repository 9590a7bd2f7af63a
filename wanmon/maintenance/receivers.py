"""The maintenance app's one signal receiver: announced circuits are matched again when the inventory gains or
renames circuits.

A carrier's notice often names a circuit before it is in the inventory; its window keeps the id
(``unmatched_objects``) and :func:`~wanmon.maintenance.services.maintenance_window_rematch` matches it once the
circuit exists. Why a ``post_save`` receiver and not a call from the inventory's services: the inventory sits
below the maintenance app (``.importlinter``: it may not import it), and circuits are written three ways, by
``circuit_upsert`` (topology imports), by the API's CRUD and by the admin, which save the model themselves. The
signal of the model is the one place all three pass, without the inventory knowing of maintenance. The receiver
holds no logic: it enqueues the rematch task once per transaction, after the commit.
"""

from __future__ import annotations

import logging

from django.db import transaction

logger = logging.getLogger(__name__)

#: Saving these fields of a circuit (or a new circuit) may match an announced id.
MATCHED_FIELDS = frozenset({"cid", "carrier"})


def rematch_enqueue() -> None:
    """Queue the rematch; without a broker, do it here (the commit is done: nothing must be lost)."""
    from wanmon.maintenance.services import maintenance_window_rematch
    from wanmon.maintenance.tasks import maintenance_window_rematch_task

    try:
        maintenance_window_rematch_task.apply_async(retry=False)
    except Exception as exc:  # noqa: BLE001 - the broker's failure must not lose the rematch
        logger.warning("could not enqueue the maintenance rematch; matching now", extra={"error": str(exc)})
        maintenance_window_rematch()


def circuit_saved(sender, instance, created: bool, update_fields=None, **kwargs) -> None:
    """post_save of inventory.Circuit: rematch after the commit, once per transaction."""
    if not created and update_fields is not None and not MATCHED_FIELDS & set(update_fields):
        return
    connection = transaction.get_connection()
    if any(callback is rematch_enqueue for _, callback, _ in connection.run_on_commit):
        return  # already queued by an earlier circuit of this transaction (a topology import saves many)
    transaction.on_commit(rematch_enqueue, robust=True)
