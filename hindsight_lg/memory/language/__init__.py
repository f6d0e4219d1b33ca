"""Language: what a turn says, read without a model or with one.

``encode`` splits a turn into events and classifies them (English and Chinese
heuristics), ``relations`` reads who is related to whom, ``timeparse`` reads
time phrases, and ``extract`` is the LLM extractor whose output is validated
into the same drafts.
"""

from __future__ import annotations
