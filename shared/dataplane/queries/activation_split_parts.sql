-- The loaded users file with the part each row goes to ($parts parts, by a hash of user_id: every row of
-- one user_id in one part, so a part is de-duplicated on its own), hashed once for all the parts
-- (hashing in each part's query cost the whole file's hashing once per part: quadratic in users at
-- a fixed part size). Positions count on from $pos_before (a chunk of a list read in chunks numbers its
-- rows after the chunks before it). users_input goes: the engine keeps one copy of the list, on disk past its limit.
CREATE OR REPLACE TABLE users_parted AS
SELECT hash(user_id) % $parts AS part, pos + $pos_before AS pos, user_id, email, phone, first_name, last_name, country,
    limited_data_use, state, value, city, postcode, date_of_birth, gender, external_id, madid
FROM users_input;
DROP TABLE users_input
