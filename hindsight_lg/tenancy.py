"""Store namespace tuples <-> memory tenants: a lossless, injective mapping.

LangGraph stores address items by a tuple of labels (``("memories", "u42")``);
the memory engine keeps one flat string per tenant (``"u42"``). The mapping:

* the **user layout** ``user_prefix + (user_id,)`` (by default
  ``("memories", user_id)``) maps to the tenant the nodes, the middleware, the
  bridging saver and the memory tools use for that user: the user id itself
  when it is *plain*, else ``"%@"`` and the percent-escaped id;
* every other tuple maps to ``"%/"`` followed by its labels, each
  percent-escaped (``%``, ``/`` and every character a reader cannot see
  become ``%XX`` UTF-8 escapes) and joined with ``/``.

A user id is *plain* when it is a valid memory namespace (non-blank, at most
512 bytes of UTF-8, no character a reader cannot see: controls, format and
default-ignorable code points such as variation selectors and Hangul
fillers, spaces but U+0020; ``hindsight_lg._text.is_hidden``) and does not
start with one of the two markers. So ``"alice"``, ``"bob.smith"``,
``"%61lice"`` and ``"maya@x.com"`` are their own tenants, and tenants starting
with ``%/`` or ``%@`` are reserved for the encoding.

Guarantees: distinct tuples never share a tenant (the three forms cannot
collide: plain ids never start with a marker, and a label's ``/`` is always
escaped); ``labels(tenant(ns)) == ns``; a tenant that is not the canonical
encoding of some tuple decodes to ``None``, so a prefix search matching
decoded tuples label by label can never reach another tenant's items. Limits:
the encoded tenant must fit the 512 bytes of UTF-8 a memory namespace allows;
longer tuples raise ``ValueError``. Cost: linear in the tuple's length.

Example:
    >>> tenants = TenantMap()
    >>> tenants.tenant(("memories", "bob.smith"))
    'bob.smith'
    >>> tenants.tenant(("bob",)), tenants.labels("bob.smith")
    ('%/bob', ('memories', 'bob.smith'))
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hindsight_lg._text import hidden_char, is_hidden
from hindsight_lg.backends import MAX_NAMESPACE_BYTES

__all__ = [
    "DEFAULT_TENANTS",
    "TenantMap",
    "labels_of",
    "tenant_of",
    "user_tenant",
]

_PATH = "%/"
_USER = "%@"
_SEP = "/"
_ESCAPE = re.compile(r"%([0-9A-F]{2})")


def _escape_char(ch: str) -> str:
    return "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))


def _escape(label: str) -> str:
    """``label`` with ``%``, ``/`` and invisible characters percent-escaped."""
    return "".join(
        _escape_char(ch) if ch in "%/" or is_hidden(ch) else ch for ch in label
    )


def _byte_char(byte: int) -> str:
    # ASCII stands for itself; higher bytes use surrogateescape's stand-ins.
    return chr(byte) if byte < 0x80 else chr(0xDC00 + byte)


def _unescape(part: str) -> str | None:
    """The label ``part`` encodes, or ``None`` when it is not a canonical escape."""
    raw = _ESCAPE.sub(lambda m: _byte_char(int(m.group(1), 16)), part)
    try:
        label = raw.encode("utf-8", "surrogateescape").decode("utf-8", "surrogatepass")
    except UnicodeError:
        return None
    return label if _escape(label) == part else None


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _is_plain(user_id: str) -> bool:
    return (
        bool(user_id.strip())
        and _size(user_id) <= MAX_NAMESPACE_BYTES
        and not user_id.startswith((_PATH, _USER))
        and hidden_char(user_id) is None
    )


def _fits(tenant: str, what: object) -> str:
    if _size(tenant) > MAX_NAMESPACE_BYTES:
        raise ValueError(
            f"{what!r} encodes to a tenant of {_size(tenant)} bytes of UTF-8; "
            f"memory namespaces hold at most {MAX_NAMESPACE_BYTES}: use shorter "
            "labels or ids"
        )
    return tenant


@dataclass(frozen=True, slots=True)
class TenantMap:
    """How store namespace tuples map to memory tenants (see the module docs).

    Args:
        user_prefix: the labels before the user id in the user layout;
            ``()`` makes one-label tuples ``(user_id,)`` the user tenants.

    Example:
        >>> TenantMap(user_prefix=("users",)).tenant(("users", "u42"))
        'u42'
    """

    user_prefix: tuple[str, ...] = ("memories",)

    def user_tenant(self, user_id: str) -> str:
        """The tenant of one user: the id itself when plain, else its escape.

        Raises:
            ValueError: the escaped id is longer than a namespace allows.
        """
        if _is_plain(user_id):
            return user_id
        return _fits(_USER + _escape(user_id), user_id)

    def user_namespace(self, user_id: str) -> tuple[str, ...]:
        """The store namespace tuple of a user's memories."""
        return (*self.user_prefix, user_id)

    def tenant(self, namespace: Sequence[str]) -> str:
        """The memory tenant of a store namespace tuple.

        Raises:
            ValueError: an empty tuple, or one too long to encode.
        """
        labels = tuple(namespace)
        if not labels:
            raise ValueError("a store namespace needs at least one label")
        if len(labels) == len(self.user_prefix) + 1 and labels[:-1] == self.user_prefix:
            return self.user_tenant(labels[-1])
        return _fits(_PATH + _SEP.join(_escape(label) for label in labels), labels)

    def labels(self, tenant: str) -> tuple[str, ...] | None:
        """The store namespace tuple of a tenant, ``None`` for a non-canonical one."""
        if tenant.startswith(_PATH):
            parts = [_unescape(p) for p in tenant[len(_PATH) :].split(_SEP)]
            found = None if None in parts else tuple(p for p in parts if p is not None)
        elif tenant.startswith(_USER):
            user = _unescape(tenant[len(_USER) :])
            found = None if user is None else self.user_namespace(user)
        else:
            found = self.user_namespace(tenant) if _is_plain(tenant) else None
        if found is None or self.tenant(found) != tenant:
            return None
        return found


DEFAULT_TENANTS = TenantMap()


def tenant_of(namespace: Sequence[str]) -> str:
    """The memory tenant of a store namespace tuple, with the default layout."""
    return DEFAULT_TENANTS.tenant(namespace)


def labels_of(tenant: str) -> tuple[str, ...] | None:
    """The store namespace tuple of a tenant (inverse of :func:`tenant_of`)."""
    return DEFAULT_TENANTS.labels(tenant)


def user_tenant(user_id: str) -> str:
    """The tenant of one user (the same under every layout)."""
    return DEFAULT_TENANTS.user_tenant(user_id)
