-- The tables of what the rules decide once per distinct value (see activation_normalised): value is
-- the final (hashed) value, '' when dropped, reason the DropReason. country_rules by the country
-- cell (raw; key is raw or '' for none, what users.country_key joins on), the Python normaliser's;
-- name_rules by the name (ASCII ones decided in SQL, the rest in Python) and email_rules by the
-- address (those not ASCII, in Python); phone_rules by the user's country key and the trimmed
-- number (read in the engine where it can, activation_phone_*, the rest in Python).
CREATE OR REPLACE TABLE country_rules (raw VARCHAR, key VARCHAR, value VARCHAR, reason VARCHAR, code VARCHAR, plan VARCHAR);
CREATE OR REPLACE TABLE name_rules (raw VARCHAR, value VARCHAR, reason VARCHAR);
CREATE OR REPLACE TABLE email_rules (raw VARCHAR, value VARCHAR, reason VARCHAR);
CREATE OR REPLACE TABLE phone_rules (country_key VARCHAR, text VARCHAR, value VARCHAR, reason VARCHAR);
-- The other match keys (CT, ST, ZIP, the date of birth as DOBY, DOBM and DOBD, GEN, MADID), every
-- distinct value decided by the Python normaliser: per key, the user's country key where the rules
-- depend on the country (ST, ZIP; '' for the others), the raw cell and its final value.
CREATE OR REPLACE TABLE key_rules (key VARCHAR, country_key VARCHAR, raw VARCHAR, value VARCHAR, reason VARCHAR)
