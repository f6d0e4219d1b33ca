"""Namespace tuples map to memory tenants losslessly; prefixes never cross tenants."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.base import check_namespace
from hindsight_lg.store import HindsightStore
from hindsight_lg.tenancy import TenantMap, labels_of, tenant_of, user_tenant
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend

# Labels built to collide: separators, escapes, markers, look-alikes, blanks.
_HOSTILE = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            ".",
            "/",
            "%",
            "%2F",
            "%25",
            "%/",
            "%@",
            "%61lice",
            "alice",
            "\u0430lice",  # Cyrillic a
            "a\u200blice",  # zero-width space
            "bob.smith",
            "bob",
            "smith",
            "memories",
            "\ud800",
            "a/b",
            "\x00",
            "\u202e",
        ]
    ),
    st.text(max_size=6),
)
_TUPLE = st.lists(_HOSTILE, min_size=1, max_size=3).map(tuple)


@given(_TUPLE, _TUPLE)
def test_distinct_tuples_never_share_a_tenant(
    a: tuple[str, ...], b: tuple[str, ...]
) -> None:
    """Encoding is injective, round-trips, and yields a valid memory namespace."""
    ta, tb = tenant_of(a), tenant_of(b)
    assert check_namespace(ta) == ta
    assert labels_of(ta) == a
    assert (ta == tb) == (a == b)


@given(st.text(min_size=1, max_size=12), _TUPLE)
def test_a_user_tenant_is_reached_only_by_its_own_user_layout(
    user: str, other: tuple[str, ...]
) -> None:
    """Only ("memories", user) maps to the tenant the nodes use for that user."""
    tenant = user_tenant(user)
    assert tenant_of(("memories", user)) == tenant
    assert (tenant_of(other) == tenant) == (other == ("memories", user))


@given(st.text(max_size=20))
def test_any_string_decodes_to_a_tuple_that_encodes_back_or_to_none(
    tenant: str,
) -> None:
    """Decoding is strict: a non-canonical tenant decodes to None, never to a neighbour."""
    labels = labels_of(tenant)
    assert labels is None or tenant_of(labels) == tenant


@settings(max_examples=30, deadline=None)
@given(st.lists(_TUPLE, min_size=2, max_size=4, unique=True), _TUPLE)
def test_prefix_search_never_returns_another_tuples_items(
    spaces: list[tuple[str, ...]], prefix: tuple[str, ...]
) -> None:
    """A search under a prefix returns exactly the items whose tuple starts with it."""
    with HindsightMemory(InMemoryBackend(), HashingEmbedder()) as engine:
        store = HindsightStore(engine)
        stored = []
        for n, space in enumerate(spaces):
            try:
                store.batch([_put(space, f"k{n}")])
            except ValueError:
                continue  # refused at the door (a lone surrogate): nothing kept
            stored.append((n, space))
        found = {(i.namespace, i.key) for i in _search(store, prefix)}
        expected = {(s, f"k{n}") for n, s in stored if s[: len(prefix)] == prefix}
        assert found == expected


def _put(space: tuple[str, ...], key: str) -> object:
    from langgraph.store.base import PutOp

    return PutOp(space, key, {"content": "note"})


def _search(store: HindsightStore, prefix: tuple[str, ...]) -> list[object]:
    from langgraph.store.base import SearchOp

    # batch() skips BaseStore's label checks, so hostile labels reach the store.
    return list(store.batch([SearchOp(prefix, limit=100)])[0] or [])


def test_the_reported_cross_tenant_reaches_are_closed() -> None:
    """bob.smith is not under ("bob",), ("acme","bob") is not acme.bob, %61lice is not alice."""
    with HindsightMemory(InMemoryBackend(), HashingEmbedder()) as engine:
        store = HindsightStore(engine)
        engine.capture("I prefer green tea over coffee", namespace="bob.smith")
        engine.capture("I prefer black coffee", namespace="%61lice")
        store.put(("acme", "bob"), "k", {"content": "acme note about tea"})
        assert store.search(("bob",)) == []
        assert store.search(("alice",)) == []
        assert engine.recall("tea", namespace="acme.bob").memories == []
        assert {i.namespace for i in store.search(("memories",))} == {
            ("memories", "bob.smith"),
            ("memories", "%61lice"),
        }


def test_the_user_prefix_is_configurable() -> None:
    """TenantMap(user_prefix=("users",)) makes ("users", id) the user's tenant."""
    tenants = TenantMap(user_prefix=("users",))
    assert tenants.tenant(("users", "u1")) == "u1"
    assert tenants.labels("u1") == ("users", "u1")
    assert tenants.tenant(("memories", "u1")) == "%/memories/u1"


def test_hostile_tuples_round_trip_on_milvus_lite(milvus_pool: object) -> None:
    """Quotes, backslashes, markers and look-alikes survive Milvus Lite filters."""
    from langgraph.store.base import GetOp

    embedder = HashingEmbedder()
    backend = milvus_pool.get(  # type: ignore[attr-defined]
        "tenancy", dim=embedder.dim, model_id=embedder.model_id
    )
    spaces = [
        ("memories", 'o"brien'),
        ("memories", "back\\slash"),
        ("a/b", "%2F"),
        ("a", "b"),
        ("%/a",),
        ("memories", "\u0430lice"),
        ("memories", "alice"),
        ("",),
    ]
    with HindsightMemory(backend, embedder) as engine:
        store = HindsightStore(engine)
        for n, space in enumerate(spaces):
            store.batch([_put(space, f"k{n}")])
        for n, space in enumerate(spaces):
            [item] = store.batch([GetOp(space, f"k{n}")])
            assert item is not None and (item.namespace, item.key) == (space, f"k{n}")
        assert {(i.namespace, i.key) for i in _search(store, ("a",))} == {
            (("a", "b"), "k3")
        }
        assert {i.key for i in _search(store, ("memories",))} == {
            "k0",
            "k1",
            "k5",
            "k6",
        }
        for tenant in engine.namespaces():
            engine.forget(tenant)


def test_too_long_to_encode_is_a_clear_error() -> None:
    """A tuple or id past a namespace's 512 bytes raises ValueError saying so."""
    import pytest

    assert user_tenant("é" * 256) == "é" * 256  # 512 bytes: still plain
    with pytest.raises(ValueError, match="512"):
        user_tenant("é" * 257)
    with pytest.raises(ValueError, match="512"):
        tenant_of(("docs", "x" * 600))
