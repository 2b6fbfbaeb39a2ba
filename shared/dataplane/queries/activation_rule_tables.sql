-- The tables of what the rules decide once per distinct value (see activation_normalised): value is
-- the final (hashed) value, '' when dropped, reason the DropReason. country_rules by the country
-- cell (raw; key is raw or '' for none, what users.country_key joins on), the Python normaliser's;
-- name_rules by the name (ASCII ones decided in SQL, the rest in Python) and email_rules by the
-- address (those not ASCII, in Python); phone_shapes by users.phone_shape, and phone_numbers by
-- shape and digits for the numbers whose shape does not decide them.
CREATE OR REPLACE TABLE country_rules (raw VARCHAR, key VARCHAR, value VARCHAR, reason VARCHAR, code VARCHAR, plan VARCHAR);
CREATE OR REPLACE TABLE name_rules (raw VARCHAR, value VARCHAR, reason VARCHAR);
CREATE OR REPLACE TABLE email_rules (raw VARCHAR, value VARCHAR, reason VARCHAR);
CREATE OR REPLACE TABLE phone_shapes (shape VARCHAR, decided BOOLEAN, cut BIGINT, prefix VARCHAR, reason VARCHAR);
CREATE OR REPLACE TABLE phone_numbers (shape VARCHAR, digits VARCHAR, cut BIGINT, prefix VARCHAR, reason VARCHAR)
