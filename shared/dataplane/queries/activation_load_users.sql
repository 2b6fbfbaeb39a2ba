-- An activation's users file (an uploaded list, or the tests' files) as the table users_input: one
-- row per data line, in file order (pos from 1), every cell text, a blank cell (white space only)
-- NULL, as Python's csv module and the Python path read it: "," and '"' (doubled to escape), a UTF-8
-- byte order mark skipped, blank lines skipped, a short line padded with NULLs, cells past the header
-- ignored. $columns names each column of the file in order (the canonical name of a column the
-- pipeline reads, another name for the rest); the canonical columns the file lacks are NULL (the
-- empty select names them all: UNION ALL BY NAME fills what the file has not). Text after a closing
-- quote and a quote after a field's one leading space it reads otherwise: an uploaded list holding
-- one is refused (list_chunks.first_misread_quote).
CREATE OR REPLACE TABLE users_input AS
SELECT
    pos,
    blank_as_null(user_id) AS user_id,
    blank_as_null(email) AS email,
    blank_as_null(phone) AS phone,
    blank_as_null(first_name) AS first_name,
    blank_as_null(last_name) AS last_name,
    blank_as_null(country) AS country,
    blank_as_null(limited_data_use) AS limited_data_use,
    blank_as_null(state) AS state,
    blank_as_null(value) AS value,
    blank_as_null(score) AS score,
    blank_as_null(city) AS city,
    blank_as_null(postcode) AS postcode,
    blank_as_null(date_of_birth) AS date_of_birth,
    blank_as_null(gender) AS gender,
    blank_as_null(external_id) AS external_id,
    blank_as_null(madid) AS madid
FROM (
    SELECT
        NULL::BIGINT AS pos, NULL::VARCHAR AS user_id, NULL::VARCHAR AS email, NULL::VARCHAR AS phone,
        NULL::VARCHAR AS first_name, NULL::VARCHAR AS last_name, NULL::VARCHAR AS country,
        NULL::VARCHAR AS limited_data_use, NULL::VARCHAR AS state, NULL::VARCHAR AS value,
        NULL::VARCHAR AS score, NULL::VARCHAR AS city, NULL::VARCHAR AS postcode,
        NULL::VARCHAR AS date_of_birth, NULL::VARCHAR AS gender, NULL::VARCHAR AS external_id,
        NULL::VARCHAR AS madid
    WHERE false
    UNION ALL BY NAME
    SELECT row_number() OVER () AS pos, *
    FROM read_csv(
        $csv,
        header = true,
        delim = ',',
        quote = '"',
        escape = '"',
        null_padding = true,
        strict_mode = false,
        auto_detect = false,
        parallel = false,
        columns = $columns
    )
) AS file
