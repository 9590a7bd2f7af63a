"""Constants of the case memory (the similarity weights and threshold are in ``similarity``)."""

CAUSE_MAX_CHARS = 500
TICKET_MAX_CHARS = 200
CONFIRM_BY_MAX_CHARS = 300
NOTE_MAX_CHARS = 5000
#: similar cases shown on a page, in an e-mail and in the API
SIMILAR_CASES_SHOWN = 3
