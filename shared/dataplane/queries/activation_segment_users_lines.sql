-- The users file's lines of a segment's uploaded users (segment_users, not held) ranked $first to
-- $last, best first, as shared.activation.users_files.users_csv writes them with Python's csv module:
-- the columns of USERS_CSV_COLUMNS, then the Limited Data Use pair ($limited_data_use), the other keys
-- some user has ($state, $city, ...; the state among them only without the pair), and the predicted
-- value ($with_value); a score of 0 is written blank (`score or ""`), a float as Python's repr. A
-- range of ranks a query: one sort of millions of lines does not fit the engine's memory.
SELECT
    csv_field(user_id) || ','
    || csv_field(coalesce(email, '')) || ','
    || csv_field(coalesce(first_name, '')) || ','
    || csv_field(coalesce(last_name, '')) || ','
    || csv_field(coalesce(phone, '')) || ','
    || CASE WHEN score IS NULL OR score = 0 THEN '' ELSE CAST(score AS VARCHAR) END || ','
    || csv_field(coalesce(country, ''))
    || CASE WHEN $limited_data_use THEN
        ',' || CASE WHEN limited_data_use THEN 'true' WHEN NOT limited_data_use THEN 'false' ELSE '' END
        || ',' || csv_field(coalesce(state, ''))
    ELSE '' END
    || CASE WHEN $state AND NOT $limited_data_use THEN ',' || csv_field(coalesce(state, '')) ELSE '' END
    || CASE WHEN $city THEN ',' || csv_field(coalesce(city, '')) ELSE '' END
    || CASE WHEN $postcode THEN ',' || csv_field(coalesce(postcode, '')) ELSE '' END
    || CASE WHEN $date_of_birth THEN ',' || csv_field(coalesce(date_of_birth, '')) ELSE '' END
    || CASE WHEN $gender THEN ',' || csv_field(coalesce(gender, '')) ELSE '' END
    || CASE WHEN $external_id THEN ',' || csv_field(coalesce(external_id, '')) ELSE '' END
    || CASE WHEN $madid THEN ',' || csv_field(coalesce(madid, '')) ELSE '' END
    || CASE WHEN $with_value THEN ',' || coalesce(CAST(value AS VARCHAR), '') ELSE '' END AS line
FROM segment_users
WHERE NOT held AND rank BETWEEN $first AND $last
ORDER BY rank
