"""Durability: an acknowledged capture survives a crash and reaches the store.

``spool`` is the write-ahead file, ``durable`` spools a capture and hands it
on, ``worker`` runs captures behind the turn (``lanes``: one queue per
tenant), ``commit`` writes captures to the store in batches (group commit),
``stage`` holds them until then, per tenant, and ``staging`` lets a batch
read its own writes. Nothing here knows the encode pipeline: the engine hands in the
callable that turns a capture into records.
"""

from __future__ import annotations

from hindsight_lg.memory.durability.durable import SpooledCapture
from hindsight_lg.memory.durability.spool import Spool
from hindsight_lg.memory.durability.worker import CaptureWorker

__all__ = ["CaptureWorker", "Spool", "SpooledCapture"]
