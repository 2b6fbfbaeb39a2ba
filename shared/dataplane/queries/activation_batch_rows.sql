-- Batches $first to $last of the upload as JSON documents: per batch, its rows in file order, each a
-- JSON array in the upload's schema (identifiers.SCHEMA, then with $limited_data_use the three data
-- processing options of §3.8, then with $with_value LOOKALIKE_VALUE), "" for a key without a value.
-- Values are hashed here, batch by batch: the whole audience is never hashed at once.
SELECT
    kept.batch,
    '[' || string_agg(
        CASE
            WHEN $limited_data_use AND $with_value THEN json_array(
                extern_id, email, phone, first_name, last_name, country,
                options, options_country, options_state, value_cell
            )
            WHEN $limited_data_use THEN json_array(
                extern_id, email, phone, first_name, last_name, country,
                options, options_country, options_state
            )
            WHEN $with_value THEN json_array(extern_id, email, phone, first_name, last_name, country, value_cell)
            ELSE json_array(extern_id, email, phone, first_name, last_name, country)
        END::VARCHAR,
        ','
        ORDER BY kept.pos
    ) || ']' AS document
FROM kept
JOIN (
    SELECT
        pos,
        extern_id,
        CASE WHEN email_value IS NULL THEN '' WHEN email_hash_it THEN sha256(email_value) ELSE email_value END AS email,
        CASE WHEN phone_value IS NULL THEN '' WHEN phone_hash_it THEN sha256(phone_value) ELSE phone_value END AS phone,
        CASE WHEN first_name_value IS NULL THEN '' WHEN first_name_hash_it THEN sha256(first_name_value) ELSE first_name_value END
            AS first_name,
        CASE WHEN last_name_value IS NULL THEN '' WHEN last_name_hash_it THEN sha256(last_name_value) ELSE last_name_value END
            AS last_name,
        coalesce(country_value, '') AS country,
        CASE WHEN coalesce(limited_data_use, false) THEN '["LDU"]' ELSE '[]' END::JSON AS options,
        CASE WHEN coalesce(limited_data_use, false) AND californian THEN 1 ELSE 0 END AS options_country,
        CASE WHEN coalesce(limited_data_use, false) AND californian THEN 1000 ELSE 0 END AS options_state,
        CASE WHEN value IS NULL THEN to_json('') ELSE to_json(value) END AS value_cell
    FROM normalised
    WHERE pos BETWEEN $first_pos AND $last_pos
) AS rows ON rows.pos = kept.pos
WHERE kept.batch BETWEEN $first AND $last
GROUP BY kept.batch
ORDER BY kept.batch
