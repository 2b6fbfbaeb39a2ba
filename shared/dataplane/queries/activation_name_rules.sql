-- Every distinct ASCII first or last name, decided once (names repeat across a list): a digest
-- (64 hex digits once trimmed) is sent lower-cased as it is; any other name as the SHA-256 of its
-- lower-cased letters a-z, or dropped as invalid_name when it has none. The names that are not ASCII
-- are decided by the Python normaliser (activation_distinct_names).
INSERT INTO name_rules
SELECT
    raw,
    CASE WHEN digest THEN lower(stripped) WHEN letters <> '' THEN sha256(letters) ELSE '' END AS value,
    CASE WHEN NOT digest AND letters = '' THEN 'invalid_name' END AS reason
FROM (
    SELECT
        raw,
        py_strip(raw) AS stripped,
        is_hex64(py_strip(raw)) AS digest,
        regexp_replace(lower(raw), '[^a-z]', '', 'g') AS letters
    FROM (
        SELECT first_name AS raw FROM users
        UNION
        SELECT last_name FROM users
    ) AS names
    WHERE raw IS NOT NULL AND is_ascii(raw)
) AS decided
