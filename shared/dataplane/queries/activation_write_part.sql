-- Part $part of the users activation_split_parts split, for the caller to write as Parquet: its rows,
-- with their position in the file and the cells NormaliseAndHash reads.
SELECT
    pos, user_id, email, phone, first_name, last_name, country, limited_data_use, state, value,
    city, postcode, date_of_birth, gender, external_id, madid
FROM users_parted
WHERE part = $part
