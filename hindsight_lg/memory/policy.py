"""One object holding every tunable of the engine, with the design's seed values."""

from __future__ import annotations

from dataclasses import dataclass, field

from hindsight_lg.model import Kind


def _half_lives() -> dict[Kind, float]:
    return {
        Kind.PREFERENCE: 90.0,
        Kind.TASK: 30.0,
        Kind.FACT: 14.0,
        Kind.EVENT: 14.0,
        Kind.QUERY: 1.0,
        Kind.EMOTION: 7.0,
        Kind.EXPERIENCE: 180.0,
        Kind.RULE: 700.0,
    }


def _importance() -> dict[Kind, float]:
    return {
        Kind.PREFERENCE: 0.8,
        Kind.TASK: 0.7,
        Kind.FACT: 0.5,
        Kind.EVENT: 0.5,
        Kind.QUERY: 0.2,
        Kind.EMOTION: 0.4,
        Kind.EXPERIENCE: 0.6,
        Kind.RULE: 0.9,
    }


def _score_weights() -> dict[str, float]:
    return {"similarity": 0.4, "recency": 0.2, "importance": 0.25, "graph": 0.15}


def _fusion_weights() -> dict[str, float]:
    return {
        "dense": 1.0,
        "lexical": 1.0,
        "entity": 0.5,
        "time": 0.5,
        "emotion": 0.3,
        "feedback": 0.5,
        "hop": 0.3,
    }


def _probe_weights() -> dict[str, float]:
    return {
        "entity": 1.0,
        "text": 0.5,
        "emotion": 0.6,
        "goal": 0.8,
        "time": 0.8,
        "feedback": 0.7,
        "speaker": 0.3,
        "hop": 0.3,
    }


@dataclass(slots=True)
class Policy:
    """Every default of the memory engine in one place.

    Example:
        >>> p = Policy(merge_threshold=0.95)
        >>> p.half_life_days[Kind.PREFERENCE]
        90.0
    """

    half_life_days: dict[Kind, float] = field(default_factory=_half_lives)
    initial_importance: dict[Kind, float] = field(default_factory=_importance)
    score_weights: dict[str, float] = field(default_factory=_score_weights)
    probe_weights: dict[str, float] = field(default_factory=_probe_weights)
    # Encode
    min_salience: float = 0.3
    merge_threshold: float = 0.92
    conflict_candidates: int = 8
    superseded_importance: float = 0.1
    # Share of the whole turn's vector blended into each event split from it.
    context_weight: float = 0.3
    # Turns longer than this (characters) take as their vector the mean of
    # their events' instead of one more model pass over the whole turn: that
    # pass costs as much as the sentences again, and the model reads only the
    # first few hundred words of a long reply anyway.
    context_pass_chars: int = 600
    # Index each event with the rest of its turn's words for lexical search.
    lexical_context: bool = True
    # Share of the thread's previous turn blended into each event's vector,
    # when that turn asked a question (answers rarely repeat their question).
    previous_weight: float = 0.3
    max_content_chars: int = 8000
    # Recall
    default_budget_tokens: int = 1000
    # Hits each search path adds to the pool. Deep enough that a memory a
    # few paths each rank in their second ten to sixth ten still collects
    # every path's score (the noisy-or lifts what several paths agree on):
    # 30 left a long conversation's multi-fact answers outside the pool.
    candidates_per_path: int = 80
    # How many of the best-ranked candidates a reranker re-scores (its cost
    # grows with this; the pool's depth does not change it).
    rerank_candidates: int = 30
    recency_window_days: float = 7.0
    graph_hops: int = 2
    graph_decay: float = 0.5
    graph_seeds: int = 5
    # Activation of the entity node of a name the query's relation word
    # resolved to ("my sister" -> Mei) as an extra diffusion seed.
    coreference_activation: float = 0.0
    # The dense path embeds the question without the names of the people it
    # asks about (memory/language/people.py): a small embedder reads a shared
    # name as most of a short text. False embeds the question whole.
    dense_without_people: bool = True
    # ... and a question about "the user" in the first person the user speaks
    # in ("Where does the user live?" as "Where do I live?"; 用户 as 我).
    dense_first_person: bool = True
    # ... and an English question typed without its mark with one ("where
    # does Maya live" as "where does Maya live?"): the embedder reads the
    # bare words a little away from the question.
    dense_question_mark: bool = True
    feedback_docs: int = 3
    feedback_terms: int = 8
    # A hit lends its words to feedback only when it scores at least this
    # share of the best hit.
    feedback_min_share: float = 0.5
    # The second hop (recall/hop.py): one dense search from the query plus
    # the vectors of its best hop_docs directly supported hits (0: off);
    # its first hop_candidates hits join the pool on the "hop" path.
    hop_docs: int = 2
    hop_candidates: int = 20
    # Against a store whose calls cross a network (a Milvus server) the hop's
    # search is one more round trip after the first, about doubling a recall:
    # it runs there only when this is set.
    hop_over_network: bool = False
    full_text_share: float = 0.1
    # The best this many turns are shown whole (the other events recall found
    # of each follow it); past them, repeated turns come last.
    whole_turns: int = 0
    # Characters of a fragment's turn a line shows around it (0: the fragment
    # alone), for the lines shown in full and for the summarised tail.
    turn_chars_full: int = 300
    turn_chars: int = 0
    # Compact lines show up to turn_chars_near characters of their turn until
    # near_share of the budget is used (full lines count): the words that
    # answer sit beside the best fragments, and the deeper tail keeps the
    # fragments alone so that it still reaches many turns.
    near_share: float = 0.3
    turn_chars_near: int = 250
    # For a question answered by several memories gathered together ("what
    # books has she read?", :mod:`.language.asking`): the share and the
    # window of its near lines. Shorter windows reach more of the turns
    # that answer it; at near_share and turn_chars_near it reads as any other.
    near_share_many: float = 0.3
    turn_chars_near_many: int = 250
    # Lines repeating nearly all of an earlier line's words are dropped.
    drop_near_duplicates: bool = True
    # Read-time order of changes of mind (recall/current.py): within the
    # first newest_first_window directly supported memories, a speaker's
    # later statement on the same subject (memory-to-memory cosine over the
    # floor only newest_first_false_rate of unrelated statements reach),
    # scoring at least newest_first_share of an earlier one, is shown above
    # it, the earlier marked "(earlier)". 0 turns it off.
    newest_first_window: int = 5
    newest_first_share: float = 0.4
    newest_first_false_rate: float = 0.05
    # ... and each must be among the other's newest_first_neighbours nearest
    # memories by that speaker in the recall's pool.
    newest_first_neighbours: int = 2
    # True: one later statement the relevance rule cut may join, riding on the
    # best answer (its support "via earlier"). Off by default: on long chats
    # the joined line was more often on another subject than a change of mind.
    newest_first_joins: bool = False
    # Recall stops where memories score below this share of the best one
    # ("clearly irrelevant"); until then the token budget decides how many.
    stop_below: float = 0.1
    min_strength: float = 0.05
    # Relevance rule (recall/relevance.py): a memory must bear on the query
    # directly (dense cosine over the embedder's calibrated floor, BM25 over
    # lexical_score_floor, or the query's time window) or through graph /
    # feedback of at least relevance_link; with none, recall returns nothing.
    relevance: bool = True
    relevance_false_rate: float = 0.01
    # A fixed cosine floor instead of the calibrated ones.
    relevance_similarity: float | None = None
    relevance_link: float = 0.1
    # A cold memory wakes for a direct hit (see memory/recall/wake.py): its
    # dense similarity clears a floor measured on the embedder (the cosine
    # only this share of unrelated pairs reach), or a number set here; and it
    # scores at least cold_wake_share of its path's best hit.
    cold_wake_similarity: float | None = None
    cold_wake_false_rate: float = 0.01
    cold_wake_share: float = 0.9
    # Episodes consolidation moved cold (at full strength) are answered for
    # by their summary: they wake only for a near-duplicate dense match.
    consolidated_wake_similarity: float = 0.85
    cold_wake_boost: float = 2.0
    recall_timeout_s: float = 0.2
    # A recall reads at most this many characters of its query, and as many
    # of its context (the latest messages first): past it the middle of the
    # query is cut before any reader runs (RecallResult.cut_chars says how
    # much). The embedders read far less (MiniLM 256 tokens); the bound keeps
    # what one tenant sends from holding a recall's threads.
    max_query_chars: int = 4000
    rrf_k: int = 60
    # "rrf" fuses the similarity paths by rank; "noisy-or" by their scores.
    fusion: str = "noisy-or"
    fusion_weights: dict[str, float] = field(default_factory=_fusion_weights)
    lexical_score_floor: float = 3.0
    # Lifecycle
    cold_threshold: float = 0.15
    archive_threshold: float = 0.05
    # Archiving needs weakness AND low importance: a weak memory is archived
    # only when its lasting importance (memory/lifecycle/significance.py) is
    # below this; what a person told about themselves stays cold instead.
    archive_importance: float = 0.5
    reinforce_half_life_factor: float = 1.2
    consolidate_every: int = 500
    experience_confidence: float = 0.6
    experience_confirmations: int = 2

    def half_life(self, kind: Kind) -> float:
        """Half-life in days of a memory of ``kind``."""
        return self.half_life_days.get(Kind(kind), 14.0)

    def importance(self, kind: Kind) -> float:
        """Seed importance of a memory of ``kind``."""
        return self.initial_importance.get(Kind(kind), 0.5)
