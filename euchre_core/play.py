"""The rules of play on small ints: tables built once from the trump rules, and
the straight-line checker of whole tricks that the replay runs.

Cards are ints ``6 * suit + rank``, their index in :data:`~euchre_core.cards.DECK`;
seats are ints 0..3 (N E S W).  The cards the four seats hold are one int: bit
``24 * seat + card`` is set while that seat holds that card (a seat's *lane*).
A play's code is ``24 * seat + card``, the number of its own bit.

Every table here is built from :func:`~euchre_core.cards.effective_suit` and
:func:`~euchre_core.cards.card_power` (:func:`build_tables`; written out once in
:mod:`euchre_core.play_tables` and proven equal), so the rules keep one source:

* ``EFFECTIVE[trump][code]``: the effective suit of the card played;
* ``SUIT_MASK[trump][suit]``: the cards (lane 0) whose effective suit is ``suit``;
* ``FOLLOW[trump][led][code]``: what the player must not hold when making this
  play: the led suit's cards in the player's lane when the card is not of the
  led suit, else 0;
* ``RANK_KEY[trump][led][code]``: ``4 * (card_power + 1) + seat``.  The highest
  ``card_power`` wins a trick (:func:`~euchre_core.cards.trick_winner`), and a
  led card always has power >= 0, so the maximum key of a trick is unique and
  its low two bits name the winner;
* ``LEAD[trump][code]``: the ``FOLLOW`` and ``RANK_KEY`` tables of the trick
  this play leads;
* ``BIT_FOR[seat][code]``: the play's bit when ``seat`` is the one to play,
  else :data:`POISON`, a bit no hand ever has.

With them one test checks a whole trick's turn order, cards held and following
suit (``H`` the hands, ``m`` the sum of the plays' ``BIT_FOR``, ``f`` the sum of
their ``FOLLOW``): ``H & (m + f) == m``.  The seat lanes never overlap, so ``+``
stands for ``|`` (CPython specialises ``+`` on ints, not ``|``).

:func:`trick_block` returns the checker for ``tricks`` whole tricks of ``size``
cards, generated from the one template :data:`TRICK_TEMPLATE` (as ``dataclasses``
generates ``__init__``).  It only says whether the tricks are legal and who won
each; when they are not, the caller replays the same plays through
``Game.play_run``, which finds the first bad play and says why.  The tests prove
the two agree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from . import play_tables as _tables
from .cards import DECK, SEATS, Seat, Suit, card_power, effective_suit

LANE: Final = 24
"""Bits per seat in the hands int."""
POISON: Final = 1 << (4 * LANE)
"""A bit above every lane: in a trick's sum it makes the test fail (a play out of turn)."""

SUITS: Final[tuple[Suit, ...]] = tuple(Suit)
SUIT_INDEX: Final[dict[Suit, int]] = {suit: index for index, suit in enumerate(SUITS)}
SEAT_INDEX: Final[dict[Seat, int]] = {seat: index for index, seat in enumerate(SEATS)}
CARD_INDEX: Final = {card: index for index, card in enumerate(DECK)}

_CODES: Final = range(4 * LANE)

Table = tuple[tuple[int, ...], ...]
Table3 = tuple[tuple[tuple[int, ...], ...], ...]


def build_tables() -> tuple[Table, Table, Table3, Table3, Table]:
    """``EFFECTIVE``, ``SUIT_MASK``, ``FOLLOW``, ``RANK_KEY`` and ``BIT_FOR``
    computed from :func:`~euchre_core.cards.effective_suit` and
    :func:`~euchre_core.cards.card_power`: the one source of these tables.

    The module takes them from :mod:`euchre_core.play_tables`, where
    ``scripts/make_play_tables.py`` writes this function's result out (reading
    them costs about 1M instructions at import, computing them 10M);
    ``tests/core/test_core_fast_replay.py`` proves the two equal.
    """
    effective = tuple(
        tuple(SUIT_INDEX[effective_suit(DECK[code % LANE], trump)] for code in _CODES)
        for trump in SUITS
    )
    suit_mask = tuple(
        tuple(
            sum(1 << card for card in range(LANE) if effective[t][card] == suit)
            for suit in range(4)
        )
        for t in range(4)
    )
    follow = tuple(
        tuple(
            tuple(
                0 if effective[t][code] == led else suit_mask[t][led] << (LANE * (code // LANE))
                for code in _CODES
            )
            for led in range(4)
        )
        for t in range(4)
    )
    rank_key = tuple(
        tuple(
            tuple(
                4 * (card_power(DECK[code % LANE], trump, led) + 1) + code // LANE
                for code in _CODES
            )
            for led in SUITS
        )
        for trump in SUITS
    )
    bit_for = tuple(
        tuple(1 << code if code // LANE == seat else POISON for code in _CODES)
        for seat in range(4)
    )
    return effective, suit_mask, follow, rank_key, bit_for


EFFECTIVE: Final[Table] = _tables.EFFECTIVE
SUIT_MASK: Final[Table] = _tables.SUIT_MASK
FOLLOW: Final[Table3] = _tables.FOLLOW
RANK_KEY: Final[Table3] = _tables.RANK_KEY
BIT_FOR: Final[Table] = _tables.BIT_FOR
LEAD: Final[tuple[tuple[tuple[tuple[int, ...], tuple[int, ...]], ...], ...]] = tuple(
    tuple((FOLLOW[t][EFFECTIVE[t][code]], RANK_KEY[t][EFFECTIVE[t][code]]) for code in _CODES)
    for t in range(4)
)


def turn_orders(next_seat: dict[Seat, Seat]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Per leader (0..3), the ``BIT_FOR`` table of each seat in playing order."""
    orders = []
    for leader in SEATS:
        seat, order = leader, []
        for _ in range(4):
            order.append(BIT_FOR[SEAT_INDEX[seat]])
            seat = next_seat[seat]
            if seat is leader:
                break
        orders.append(tuple(order))
    return tuple(orders)


def lanes(hands: Sequence[Sequence[int]]) -> int:
    """The hands int of four seats' card lists (card ints)."""
    return sum(1 << (LANE * seat + card) for seat, cards in enumerate(hands) for card in cards)


TRICK_TEMPLATE: Final = """\
    # trick {trick}: {first} leads {plays}{note}
    {follow}, key = leads[c{first}]
    {bits} = orders[leader]
    m = {m}
    if held & (m{f}) != m:
        return None
    held -= m
    k = key[c{first}]
{keys}    leader = w{trick} = k & 3
"""
"""One trick's check, for the plays ``c{first}`` ... in playing order.  The
winner's key is found by comparisons (calling ``max`` costs more).  The last of
five tricks leaves out following suit: each seat then plays the one card left."""
LAST_TRICK_NOTE: Final = " (the last: each plays its one card, no following to check)"
HIGHER_TEMPLATE: Final = """\
    if key[{play}] > k:
        k = key[{play}]
"""
"""In a trick's check: the key of ``{play}`` when it is the highest so far."""


BLOCK_SIGNATURE: Final = "(held, leader, codes, leads, orders)"
"""The parameters of every trick block (:func:`trick_block`)."""
WRITTEN_SIGNATURE: Final = (
    "(\n    held: int, leader: int, codes: Sequence[int], leads: Any, orders: Any,\n"
    ") -> tuple[int, tuple[int, ...]] | None"
)
"""The same, annotated, as :mod:`euchre_core.play_tables` writes it."""
WRITTEN_BLOCKS: Final = tuple((size, tricks) for size in (4, 3) for tricks in range(1, 6))
"""The block shapes written out in :mod:`euchre_core.play_tables`: four or
three players (one went alone), one to five tricks."""


def block_source(size: int, tricks: int, name: str = "block",
                 signature: str = BLOCK_SIGNATURE) -> str:
    """The source of the checker of ``tricks`` whole tricks of ``size`` cards."""
    names = [f"c{index}" for index in range(size * tricks)]
    lines = [
        f"def {name}{signature}:",
        f"    {', '.join(names)}{',' if len(names) == 1 else ''} = codes",
    ]
    for trick in range(tricks):
        plays = names[trick * size:(trick + 1) * size]
        bits = [f"b{index}" for index in range(size)]
        last = trick == 4  # of five: each seat holds one card
        lines.append(
            TRICK_TEMPLATE.format(
                trick=trick,
                first=trick * size,
                plays=" ".join(plays),
                bits=", ".join(bits) + ("," if size == 1 else ""),
                m=" + ".join(f"{bit}[{play}]" for bit, play in zip(bits, plays)),
                note=LAST_TRICK_NOTE if last else "",
                follow="_" if last else "follow",
                f="" if last else "".join(f" + follow[{play}]" for play in plays[1:]),
                keys="".join(HIGHER_TEMPLATE.format(play=play) for play in plays[1:]),
            ).rstrip("\n")
        )
    winners = ", ".join(f"w{trick}" for trick in range(tricks))
    lines.append(f"    return held, ({winners},)")
    return "\n".join(lines) + "\n"


Block = Callable[..., "tuple[int, tuple[int, ...]] | None"]


def _make_block(size: int, tricks: int) -> Block:
    namespace: dict[str, object] = {}
    exec(compile(block_source(size, tricks), f"<trick block {size}x{tricks}>", "exec"), namespace)
    block = namespace["block"]
    assert callable(block)
    return block


_BLOCKS: dict[tuple[int, int], Block] = dict(_tables.BLOCKS)


def trick_block(size: int, tricks: int) -> Block:
    """The checker of ``tricks`` whole tricks of ``size`` cards: one of
    :data:`WRITTEN_BLOCKS`, written out in :mod:`euchre_core.play_tables` (its
    module's bytecode is cached; compiling a block costs 3M instructions), or
    made on first use.

    ``block(held, leader, codes, LEAD[t], orders)``
    returns ``(held, winners)`` — the hands after the tricks and each trick's
    winner (seat ints) — or None when a play is out of turn, not held, or does not
    follow suit.
    """
    block = _BLOCKS.get((size, tricks))
    if block is None:
        block = _BLOCKS[size, tricks] = _make_block(size, tricks)
    return block
