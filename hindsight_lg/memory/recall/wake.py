"""When a cold memory wakes: a direct hit, by a rule calibrated to the embedder.

Cold memories (weak from disuse, or consolidated episodes) are left out of
recall unless a query bears on them directly. "Directly" cannot be one cosine
constant: all-MiniLM-L6-v2 gives a question and the statement that answers it
0.35-0.9 in English, while two unrelated Chinese sentences already score about
0.7 with it, and bge-m3 sits higher again. So the rule is measured on the
embedder in use.

**Calibration.** :data:`PAIRS` holds short (question, statement-that-answers-it)
pairs, English and Chinese, on everyday topics. Every question is embedded
against every statement of its script; the pairs that do *not* belong together
give the embedder's own distribution of unrelated similarities, mean ``mu`` and
spread ``sigma``. The dense floor of a script is ``mu + z * sigma`` with ``z``
the normal quantile of ``1 - policy.cold_wake_false_rate`` (1% by default:
about one unrelated memory in a hundred clears it). A query containing Chinese,
Japanese or Korean characters uses the CJK floor, any other the Latin one. The
calibration embeds 64 short texts once per engine (about 0.1 s with MiniLM on
one core); :meth:`HindsightMemory.warm_up` does it at open, so no recall pays
for it. ``policy.cold_wake_similarity`` set to a number replaces
both measured floors (the design's seed was 0.85, calibrated to bge-m3).

**The rule.** A cold memory wakes when, on the dense or on the lexical path,

1. its score clears the floor: the calibrated dense floor, or
   ``policy.lexical_score_floor`` (BM25's "more than common words" level);
2. and it is a top hit: at least ``policy.cold_wake_share`` (0.9) of the best
   score that path gave any memory, active or cold, in this recall.

Episodes that consolidation moved cold are not weak (decay moves only memories
whose strength fell below ``policy.cold_threshold``; consolidation leaves theirs
as it was): their semantic summary answers for them, so they wake only for a
near-duplicate dense match, ``policy.consolidated_wake_similarity`` (0.85).

The second condition keeps a cold memory that is merely on the topic asleep
while a better match exists; the first keeps a store of only cold memories
from waking its best hit for a question it does not answer. The lexical path
matters for embedders that separate a language poorly (MiniLM on Chinese).

**Cost.** One extra lexical query over cold memories per recall (served from
the read cache); the dense path already searched active and cold memories.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist, fmean, pstdev

import numpy as np

from hindsight_lg._text import has_cjk
from hindsight_lg.embeddings.base import Embedder
from hindsight_lg.memory.policy import Policy

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


@dataclass(frozen=True, slots=True)
class WakeRule:
    """Dense floors per script, measured on one embedder (see the module docstring).

    Example:
        >>> rule = WakeRule(model_id="m", floors={"latin": 0.3, "cjk": 0.9})
        >>> rule.floor("Where does Lena live?"), rule.floor("我住在哪里？")
        (0.3, 0.9)
    """

    model_id: str
    floors: dict[str, float]
    unrelated: dict[str, tuple[float, float]] | None = None

    def floor(self, query: str) -> float:
        """The dense floor for ``query``'s script."""
        return self.floors["cjk" if has_cjk(query) else "latin"]


def measure(embedder: Embedder, false_rate: float) -> WakeRule:
    """Calibrate the dense floors on ``embedder`` (embeds :data:`PAIRS` once)."""
    z = NormalDist().inv_cdf(1.0 - false_rate)
    floors: dict[str, float] = {}
    unrelated: dict[str, tuple[float, float]] = {}
    for script, pairs in PAIRS.items():
        vectors = np.asarray(
            embedder.embed([q for q, _ in pairs] + [s for _, s in pairs]),
            dtype=np.float64,
        )
        n = len(pairs)
        sims = vectors[:n] @ vectors[n:].T
        off = [float(sims[i, j]) for i in range(n) for j in range(n) if i != j]
        mu, sigma = fmean(off), pstdev(off)
        unrelated[script] = (round(mu, 4), round(sigma, 4))
        floors[script] = round(mu + z * sigma, 4)
    return WakeRule(embedder.model_id, floors, unrelated)


def rule_for(embedder: Embedder, policy: Policy) -> WakeRule:
    """The rule for ``embedder`` under ``policy`` (a fixed floor if it sets one)."""
    if policy.cold_wake_similarity is not None:
        fixed = float(policy.cold_wake_similarity)
        return WakeRule(embedder.model_id, {"latin": fixed, "cjk": fixed})
    return measure(embedder, policy.cold_wake_false_rate)


def wakes(score: float, best: float, floor: float, share: float) -> tuple[bool, str]:
    """Whether a cold memory's path score wakes it, and the reason in words.

    Example:
        >>> wakes(0.62, 0.64, 0.28, 0.9)
        (True, '0.620 >= floor 0.280 and >= 0.9 x best 0.640')
        >>> wakes(0.21, 0.64, 0.28, 0.9)[1]
        '0.210 below floor 0.280'
    """
    if score < floor:
        return False, f"{score:.3f} below floor {floor:.3f}"
    if score < share * best:
        return False, f"{score:.3f} below {share:g} x best {best:.3f}"
    return True, f"{score:.3f} >= floor {floor:.3f} and >= {share:g} x best {best:.3f}"
