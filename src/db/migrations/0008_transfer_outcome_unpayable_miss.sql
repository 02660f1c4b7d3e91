-- A HIGH transfer the account cannot pay whose creditorDocument is not the key owner's: refused
-- for its amount, as one with the right document is, and its look-up charged as a miss.
ALTER TYPE transfer_create_outcome ADD VALUE 'insufficient_funds_miss';
