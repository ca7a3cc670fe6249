"""The TravelAPI calls the round 12 BFCL worker tests make on one of ``long_context``'s extension
cards (shared by reference in BFCL's data module)."""

from __future__ import annotations

CARD = "1234567812345678"  # one of long_context's extension cards, balance 5000.0
BOOKING = {
    "access_token": "abc123xyz",
    "card_id": CARD,
    "travel_date": "2026-11-10",
    "travel_from": "SFO",
    "travel_to": "LAX",
    "travel_class": "business",
}
BALANCE = {"access_token": "secureAccessToken12345", "card_id": CARD}
