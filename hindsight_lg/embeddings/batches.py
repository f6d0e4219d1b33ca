"""Texts grouped into forward passes by length, for every encoder engine.

Shared by the FlagEmbedding path (:mod:`hindsight_lg.embeddings.flag`) and
the numpy one (:mod:`hindsight_lg.embeddings.bert`): both pad a pass to its
longest text, and both must group texts alike to cost alike.
"""

from __future__ import annotations

from collections.abc import Sequence

# Padded tokens a batch may carry beyond its real ones before it is cut:
# below this, one more forward pass costs more than the padding.
_PAD_SLACK = 32


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indexes of texts grouped into forward passes, longest texts first.

    A pass pads every text to its longest, so a long text (a whole turn,
    embedded for context) in a batch of short sentences makes the batch cost
    its length times its size: the 51 texts of a 50-sentence turn cost 24x
    what they cost apart. A batch is cut when it is full or when its padding
    would pass both a quarter of its real tokens and :data:`_PAD_SLACK`, so
    no pass does much more than 1.25x the work its texts need.

    Example:
        >>> length_batches([20, 512, 18, 22], batch_size=64)
        [[1], [3, 0, 2]]
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    real = 0
    for i in order:
        size = lengths[i]
        if current:
            padding = lengths[current[0]] * (len(current) + 1) - (real + size)
            wasteful = 4 * padding > real + size and padding > _PAD_SLACK
            if len(current) >= batch_size or wasteful:
                batches.append(current)
                current, real = [], 0
        current.append(i)
        real += size
    if current:
        batches.append(current)
    return batches
