"""A kept game as Euchre Game Notation (EGN 1.4, an open JSON format, Apache-2.0).

:func:`to_egn` replays a game's entries with the engine and writes each hand
as an EGN deal: the dealer and upcard, the bidding as EGN's ``calls`` (the
passes before the maker are implied by the rules: each seat before the maker
passed), alone and a lone defender, the discard, the cards dealt and played
(card-level hands), the tricks.  The house rules go to EGN's ``ruleset``;
what EGN cannot say, and what the log does not hold that EGN wants, is said
in one line (:attr:`Egn.note`; also the export's ``metadata.description``).
Seats map to EGN's players 0-3 clockwise: N 0, E 1, S 2, W 3, so EGN's team
0/2 is NS and 1/3 is EW.

The writer is in ``firmware`` (not the engine): EGN is an interchange
format, not a rule of Euchre; it needs only the standard library.
docs/egn.md says how each rule and line maps.
"""

from __future__ import annotations

import json
import time
from typing import Any, Final, NamedTuple

from euchre_core import SEATS, Card, Game, HandResult, Seat, Suit, Team, replay
from euchre_core.events import (
    Call,
    Deal,
    Defend,
    Discard,
    Make,
    Misdeal,
    NewGame,
    Order,
    Pass,
    Play,
    Players,
    Renege,
    SetRules,
    Trick,
    Tricks,
    Upcard,
)
from euchre_core.rules import Rules

EGN_VERSION: Final = "1.4"
FILE_TYPE: Final = "Euchre Game Notation"
MAX_DEALS: Final = 100
"""Deals an EGN file holds (its schema's ``maxItems``)."""
UNKNOWN: Final = "Xx"
"""EGN's card of unknown rank and suit."""
_INDEX: Final = {seat: index for index, seat in enumerate(SEATS)}


class EgnError(ValueError):
    """A game EGN cannot hold (more than :data:`MAX_DEALS` hands)."""


class Egn(NamedTuple):
    """One game as EGN: the JSON object and the one line of what it leaves out
    (empty when nothing is)."""

    document: dict[str, Any]
    note: str

    def text(self) -> str:
        return json.dumps(self.document, ensure_ascii=False, indent=2) + "\n"


def print_egn(egn: Egn) -> None:
    """An export on the command line: the EGN on standard output, the one line
    of what it leaves out (if any) on standard error."""
    import sys

    sys.stdout.write(egn.text())
    if egn.note:
        print(f"euchre-referee: EGN: {egn.note}", file=sys.stderr)


def card_text(card: Card) -> str:
    """EGN's spelling of a card: rank, then the suit in lower case (``Jh``, ``Ts``)."""
    text = str(card)
    return text[0] + text[1].lower()


def _suit_letter(suit: Suit) -> str:
    return str(suit).lower()


def ruleset(rules: Rules) -> tuple[dict[str, Any], list[str]]:
    """EGN's ``ruleset`` for ``rules``, and the settings EGN has no word for."""
    out: dict[str, Any] = {
        "std": rules.stick_the_dealer,
        "winning_score": rules.target,
        "canadian": rules.canadian_loner,
        "loner_lead": "LEFT_OF_LONER" if rules.lone_lead == "maker-left" else "LEFT_OF_DEALER",
        "loner_march_score": 4,
        "loner_euchred_score": 2,
        "defend_alone": rules.defend_alone,
    }
    standard = Rules()
    missing = []
    if rules.win_by_two:
        missing.append("the house rule win-by-two=on")
    if rules.defenders_sweep != standard.defenders_sweep:
        missing.append(f"the house rule defenders-sweep={rules.defenders_sweep}")
    if rules.defend_alone and rules.lone_defender_euchre != standard.lone_defender_euchre:
        missing.append(f"the house rule lone-defender-euchre={rules.lone_defender_euchre}")
    if rules.renege_penalty != standard.renege_penalty:
        missing.append(f"the house rule renege-penalty={rules.renege_penalty}")
    if rules.renege_vs_loner != standard.renege_vs_loner:
        missing.append(f"the house rule renege-vs-loner={rules.renege_vs_loner}")
    return out, missing


class _Hand:
    """What the log says of one hand, gathered entry by entry."""

    def __init__(self, dealer: Seat, misdeals: int = 0) -> None:
        self.dealer = dealer
        self.upcard: Card | None = None
        self.up_suit: Suit | None = None
        self.passes = 0
        self.bid: Order | Call | Make | None = None
        self.trump: Suit | None = None
        self.defender: Seat | None = None
        self.discard: Card | None = None
        self.deal: Deal | None = None
        self.tricks: list[list[str]] = []
        self.trick: list[str] = []
        self.winners: list[Seat] = []
        self.claim: int | None = None
        self.reneger: Seat | None = None
        self.misdeals = misdeals
        """Misdeals before this deal (the same dealer dealt again)."""

    @property
    def active(self) -> int:
        """Players in each trick."""
        sitting = (self.bid is not None and self.bid.alone) + (self.defender is not None)
        return 4 - sitting


def _round_of(hand: _Hand) -> int:
    """The bidding round the call was made in (a ``make`` line does not say it)."""
    bid = hand.bid
    if isinstance(bid, Order):
        return 1
    if isinstance(bid, Call):
        return 2
    assert bid is not None
    if hand.passes >= 4:
        return 2
    if hand.up_suit is not None:
        return 1 if bid.suit is hand.up_suit else 2
    return 1  # not recorded: written as an order of an unknown card of trump's suit


def _deal(number: int, hand: _Hand, result: HandResult, names: dict[Seat, str],
          rules: Rules, notes: set[str]) -> dict[str, Any]:
    dealer = _INDEX[hand.dealer]
    bid = hand.bid
    bidding: dict[str, Any] = {"phaseNumber": 0, "type": "EUCHRE_BIDDING"}
    call_notes: dict[str, list[str]] = {}
    if hand.misdeals:
        call_notes["0"] = [f"misdeal: dealt again ({hand.misdeals}x)"]
    if bid is None:  # thrown in
        bidding["calls"] = ["Pass"] * 8
        upcard = (card_text(hand.upcard) if hand.upcard is not None else
                  "X" + _suit_letter(hand.up_suit) if hand.up_suit is not None else UNKNOWN)
        if hand.up_suit is None:
            notes.add("the upcard")
    else:
        trump = hand.trump
        assert trump is not None
        offset = (_INDEX[bid.seat] - dealer - 1) % 4
        round_ = _round_of(hand)
        if round_ == 1:
            bidding["calls"] = ["Pass"] * offset + ["Order"]
            upcard = (card_text(hand.upcard) if hand.upcard is not None
                      else "X" + _suit_letter(trump))
            if hand.up_suit is None:
                notes.add("the upcard")
                if isinstance(bid, Make):
                    notes.add("the round of a 'make' call (written as an order of trump's suit)")
        else:
            bidding["calls"] = ["Pass"] * (4 + offset) + [_suit_letter(trump)]
            upcard = (card_text(hand.upcard) if hand.upcard is not None else
                      "X" + _suit_letter(hand.up_suit) if hand.up_suit is not None else UNKNOWN)
            if hand.up_suit is None:
                notes.add("the upcard")
        bidding["isAlone"] = bid.alone
        if rules.defend_alone and bid.alone:
            bidding["aloneDefender"] = -1 if hand.defender is None else _INDEX[hand.defender]
        if hand.discard is not None:
            bidding["discard"] = card_text(hand.discard)
    if call_notes:
        bidding["callAnnotations"] = call_notes
    initial: dict[str, Any] = {"dealer": dealer, "upCard": upcard}
    if hand.deal is not None:
        initial["playerCards"] = [[card_text(card) for card in cards]
                                  for cards in hand.deal.hands]
    deal: dict[str, Any] = {"dealNumber": number, "initialState": initial,
                            "phases": [bidding]}
    if bid is None:
        return deal
    plays: dict[str, list[str]] = {}
    tricks = [list(trick) for trick in hand.tricks]
    if hand.trick:  # a renege ended the hand inside a trick
        tricks.append(list(hand.trick))
    played = sum(len(trick) for trick in tricks)
    if hand.winners:  # winner level: the cards are not known, only who won
        notes.add("the cards (winner-level hands: written Xx, each trick's winner annotated)")
        for winner in hand.winners:
            tricks.append([UNKNOWN] * hand.active)
            played += hand.active
            plays[str(played - 1)] = [f"trick won by {names[winner]} ({winner})"]
    last = str(max(played - 1, 0))
    if hand.claim is not None:
        plays.setdefault(last, []).append(
            f"the makers claimed: {hand.claim} tricks in all")
        notes.add("the tricks a claim did not play")
    if hand.reneger is not None:
        plays.setdefault(last, []).append(
            f"renege by {names[hand.reneger]} ({hand.reneger}): {result.team} +{result.points}")
        notes.add("!a renege (annotated)")
    phase: dict[str, Any] = {"phaseNumber": 1, "type": "TRICK_PLAY", "tricks": tricks,
                             "isAlone": bid.alone}
    if plays:
        phase["playAnnotations"] = plays
    deal["phases"].append(phase)
    return deal


def to_egn(game: Game, *, game_id: str | None = None, created: float | None = None,
           title: str | None = None) -> Egn:
    """The first game of the replayed log ``game`` as EGN 1.4.

    ``created``: Unix time the game was kept (EGN's ``date``, in UTC)."""
    shadow = Game()  # as replay() starts
    names = dict(shadow.names)
    hand: _Hand | None = None
    deals: list[dict[str, Any]] = []
    notes: set[str] = set()
    start: tuple[int, int] = (0, 0)
    rules = shadow.rules
    started = False
    for entry in game.entries:
        if isinstance(entry, NewGame) and started:
            notes.add("!more than one game a file (the games after the first left out)")
            break
        results = len(shadow.results)
        check = isinstance(entry, Trick) and shadow.pending_trick is not None
        shadow.push(entry)
        if check:  # a card-level trick's winner, checked: EGN works it out itself
            continue
        if isinstance(entry, NewGame):
            started = True
            start, rules, names = (entry.ns, entry.ew), shadow.rules, dict(shadow.names)
            hand = _Hand(entry.dealer)
            continue
        if isinstance(entry, Players) and started:
            notes.add("a change of names during the game (the names at its start kept)")
        if hand is None:
            continue
        if isinstance(entry, Misdeal):  # the hand so far is void: dealt again
            hand = _Hand(hand.dealer, hand.misdeals + 1)
            continue
        _take(hand, entry)
        if isinstance(entry, (Order, Call, Make)):
            hand.trump = shadow.hand.trump
        if len(shadow.results) > results:
            if len(deals) == MAX_DEALS:
                raise EgnError(f"EGN holds at most {MAX_DEALS} deals; this game has more")
            deals.append(_deal(len(deals), hand, shadow.results[-1], names, rules, notes))
            hand = _Hand(shadow.dealer) if shadow.dealer is not None else None
    if hand is not None and (hand.bid is not None or hand.passes or hand.deal is not None):
        notes.add(f"hand {len(deals) + 1}, not finished")
    rule_set, unsaid = ruleset(rules)
    metadata: dict[str, Any] = {
        "players": [names[seat] for seat in SEATS],
        "initialScore": list(start),
        "ruleset": rule_set,
    }
    if game_id is not None:
        metadata["gameId"] = game_id[:64]
    if title is not None:
        metadata["title"] = title[:128]
    if created is not None:
        metadata["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(created))
    if started:
        metadata["finalScore"] = [shadow.score[Team.NS], shadow.score[Team.EW]]
    unsaid += sorted(note[1:] for note in notes if note.startswith("!"))
    note = note_line(unsaid, sorted(note for note in notes if not note.startswith("!")))
    if note:
        metadata["description"] = note[:1024]
    document = {"fileType": FILE_TYPE, "version": EGN_VERSION, "metadata": metadata,
                "deals": deals}
    return Egn(document, note)


def note_line(unsaid: list[str], missing: list[str]) -> str:
    """The one line of what an export leaves out."""
    parts = []
    if unsaid:
        parts.append("EGN cannot express " + ", ".join(unsaid))
    if missing:
        parts.append("the log does not hold " + "; ".join(missing))
    return "; ".join(parts)


def _take(hand: _Hand, entry: object) -> None:
    """Note one (accepted) entry of the hand."""
    if isinstance(entry, Deal):
        hand.deal = entry
    elif isinstance(entry, Upcard):
        hand.upcard, hand.up_suit = entry.card, entry.suit
    elif isinstance(entry, Pass):
        hand.passes += 1
    elif isinstance(entry, (Order, Call, Make)):
        hand.bid = entry
    elif isinstance(entry, Defend):
        hand.defender = entry.seat
    elif isinstance(entry, Discard):
        hand.discard = entry.card
    elif isinstance(entry, Play):
        hand.trick.append(card_text(entry.card))
        if len(hand.trick) == hand.active:
            hand.tricks.append(hand.trick)
            hand.trick = []
    elif isinstance(entry, Trick):  # a winner-level trick
        hand.winners.append(entry.seat)
    elif isinstance(entry, Tricks):
        hand.claim = entry.count
    elif isinstance(entry, Renege):
        hand.reneger = entry.seat


def log_to_egn(text: str) -> list[Egn]:
    """Every game of a log as EGN (ValueError naming the line if it does not replay)."""
    from .journal import games_of

    result = replay(text)
    if result.error is not None:
        raise ValueError(f"line {result.error.line}: {result.error.reason}")
    out = []
    for lines in games_of(result.game):
        one = replay("euchre-log 1\n" + "\n".join(lines) + "\n")
        if any(isinstance(entry, NewGame) for entry in one.game.entries):
            out.append(to_egn(one.game))
    return out


# --- import: an EGN file as a game log -----------------------------------------

_UNSUPPORTED: Final = ("farmers", "partners_best", "go_under", "joker", "allow_no_trump",
                       "fast_break", "four_trick_tokens")
"""EGN ruleset switches with no house rule here: a file that turns one on is refused."""
_ORDER_CALLS: Final = ("Order", "PickUp", "Alone", "Call")
"""Round-1 calls that take the upcard's suit (as EGN's baseline engine reads them)."""


def _rules_of(ruleset: dict[str, Any]) -> Rules:
    for key in _UNSUPPORTED:
        if ruleset.get(key):
            raise ValueError(f"ruleset {key}: not a house rule the referee plays")
    for key, usual in (("num_players", 4), ("min_rank", 9), ("loner_march_score", 4),
                       ("loner_euchred_score", 2), ("num_deals", 0)):
        if ruleset.get(key, usual) != usual:
            raise ValueError(f"ruleset {key}={ruleset[key]}: the referee plays only {usual}")
    lead = ruleset.get("loner_lead", "LEFT_OF_DEALER")
    return Rules(target=int(ruleset.get("winning_score", 10)),
                 stick_the_dealer=bool(ruleset.get("std", True)),
                 canadian_loner=bool(ruleset.get("canadian", False)),
                 lone_lead="maker-left" if lead == "LEFT_OF_LONER" else "dealer-left",
                 defend_alone=bool(ruleset.get("defend_alone", False)))


def _card_of(text: str, trump: Suit | None) -> str:
    """Our spelling of an EGN card (``Nc`` a nine, ``R``/``L`` the bowers)."""
    if text in ("R", "L"):
        if trump is None:
            raise ValueError(f"card {text}: a bower before trump is made")
        return f"J{trump if text == 'R' else trump.sister}"
    if len(text) != 2 or text[0] in "X78" or text[1] not in "shdcSHDC":
        raise ValueError(f"card {text}: not a card the referee can check (24 known cards)")
    return ("9" if text[0] == "N" else text[0]) + text[1].upper()


def from_egn(document: dict[str, Any]) -> Game:
    """An EGN game replayed by the engine, entry by entry: every call and card
    checked as the referee checks a card-level log.  ValueError naming the deal
    and what is wrong, for what the engine refuses or the referee cannot check
    (unknown cards, a ruleset it does not play, a final score that differs)."""
    if document.get("fileType") != FILE_TYPE:
        raise ValueError("not an EGN file (fileType is not 'Euchre Game Notation')")
    metadata = document.get("metadata") or {}
    game = Game()

    def enter(line: str, where: str) -> None:
        from euchre_core import LogSyntaxError, parse_event

        try:
            event = parse_event(line)
        except LogSyntaxError as error:
            raise ValueError(f"{where}: {line}: {error}") from None
        reason = game.offer(event)  # type: ignore[arg-type]
        if reason is not None:
            raise ValueError(f"{where}: {line}: {reason}")

    rules = _rules_of(metadata.get("ruleset") or {})
    if rules != Rules():
        enter(SetRules(rules).line(), "ruleset")
    players = [p if isinstance(p, str) else p.get("name", "") for p in metadata["players"]]
    if len(players) == 4:
        enter(Players(tuple(zip(SEATS, players))).line(), "players")
    deals = document.get("deals") or []
    if not deals or isinstance(deals[0], str):
        raise ValueError("no deals (or condensed ones, which are not read here)")
    ns, ew = (list(metadata.get("initialScore") or []) + [0, 0])[:2]
    first = SEATS[deals[0]["initialState"]["dealer"] % 4]
    enter(NewGame(first, ns, ew).line(), "the start")
    for index, deal in enumerate(deals):
        if isinstance(deal, str):
            raise ValueError("condensed deals are not read here")
        where = f"deals[{index}]"
        _enter_deal(deal, game, lambda line, w=where: enter(line, w), where)
    final = metadata.get("finalScore")
    if final and final != [game.score[Team.NS], game.score[Team.EW]]:
        raise ValueError(f"finalScore {final}: the deals replay to NS {game.score[Team.NS]}, "
                         f"EW {game.score[Team.EW]}")
    return game


def _enter_deal(deal: dict[str, Any], game: Game, enter: Any, where: str) -> None:
    state = deal["initialState"]
    dealer = SEATS[state["dealer"] % 4]
    if game.winner is not None:
        raise ValueError(f"{where}: the game was won before it ({game.game_over_text()})")
    if len(game.entries) != game.hand.start:
        raise ValueError(f"{where}: the deal before it did not finish")
    if game.dealer is not dealer:
        raise ValueError(f"{where}: dealer {dealer}, but the deal passes to {game.dealer}")
    hands = state.get("playerCards")
    if hands and len(hands) == 4 and all(len(h) == 5 for h in hands):
        enter("deal " + " ".join(f"{seat}={','.join(_card_of(c, None) for c in hand)}"
                                 for seat, hand in zip(SEATS, hands)))
    up = state["upCard"]
    if up[0] != "X" or up[1] in "shdcSHDC":
        enter(f"upcard {up[1].upper() if up[0] == 'X' else _card_of(up, None)}")
    phases = {phase["type"]: phase for phase in deal.get("phases", [])}
    bidding = phases.get("EUCHRE_BIDDING")
    if bidding is None:
        raise ValueError(f"{where}: no bidding")
    seat = dealer
    alone = " alone" if bidding.get("isAlone") else ""
    for index, call in enumerate(bidding["calls"]):
        seat = SEATS[(SEATS.index(seat) + 1) % 4]
        if call == "Pass":
            enter(f"pass {seat}")
        elif index < 4 and call in _ORDER_CALLS:
            enter(f"order {seat}{alone}")
        elif index >= 4 and call in ("s", "h", "d", "c"):
            enter(f"call {seat} {call.upper()}{alone}")
        else:
            raise ValueError(f"{where}: call {call!r} (call {index + 1}) is not one the "
                             "referee plays")
    defender = bidding.get("aloneDefender", -1)
    if isinstance(defender, int) and defender >= 0:
        enter(f"defend {SEATS[defender % 4]}")
    if bidding.get("discard") and game.hand.maker is not None:
        enter(f"discard {_card_of(bidding['discard'], game.hand.trump)}")
    play = phases.get("TRICK_PLAY")
    for trick in (play or {}).get("tricks", []):
        for card in trick:
            enter(f"play {game.hand.to_play} {_card_of(card, game.hand.trump)}")


def egn_log(document: dict[str, Any]) -> str:
    """An EGN game as a clean game log (:func:`from_egn`, then the log writer)."""
    from euchre_core import write_log

    return write_log(from_egn(document))
