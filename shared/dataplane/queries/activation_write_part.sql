-- Part $part of $parts of the loaded users file, for the caller to write as Parquet: the rows whose
-- user_id hashes to it (every row of one user_id in one part, so a part is de-duplicated on its own),
-- with their position in the file and the cells NormaliseAndHash reads.
SELECT pos, user_id, email, phone, first_name, last_name, country, limited_data_use, state, value
FROM users_input
WHERE hash(user_id) % $parts = $part
