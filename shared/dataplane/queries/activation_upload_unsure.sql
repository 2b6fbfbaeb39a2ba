-- How many rows of an uploaded list the bulk path cannot vouch for (uploads.plainly_valid): without a
-- user_id, with a score that is not a plain decimal number, or with a value that is not a customer
-- value (uploads.customer_value). The Python path checks such a file row by row and names the line of
-- each bad row.
SELECT count(*) AS unsure
FROM users_input
WHERE user_id IS NULL
    OR (score IS NOT NULL AND NOT regexp_matches(score, '^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$'))
    OR (
        value IS NOT NULL AND NOT (
            regexp_matches(py_strip(value), '^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$')
            AND coalesce(isfinite(TRY_CAST(py_strip(value) AS DOUBLE)), false)
            AND TRY_CAST(py_strip(value) AS DOUBLE) >= 0
        )
    )
