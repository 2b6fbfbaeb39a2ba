-- The national significant number of each number read by plan $key, as parse leaves it (into
-- phone_nsn): a national prefix ($prefix, anchored; '' for none) goes, unless the number matched the
-- plan's general pattern ($general, in full; '' for none) and would no longer, or the number left would
-- have a length the plan does not strip to ($strip_lengths). A plan that rewrites its prefix
-- ($transforms) does so when the pattern's last group ($last_group, never empty when it takes part)
-- matched: such a number is left to the Python normaliser (no row); otherwise the prefix goes.
INSERT INTO phone_nsn
SELECT n, CASE WHEN list_contains($strip_lengths, length(kept)) THEN kept ELSE national END
FROM (
    SELECT
        n,
        national,
        CASE
            WHEN stripped IS NULL THEN national
            WHEN $general <> '' AND regexp_full_match(national, $general) AND NOT regexp_full_match(stripped, $general)
                THEN national
            ELSE stripped
        END AS kept
    FROM (
        SELECT
            n,
            national,
            CASE
                WHEN $prefix <> '' AND regexp_matches(national, $prefix)
                    THEN substr(national, length(regexp_extract(national, $prefix)) + 1)
            END AS stripped
        FROM phone_numbers
        WHERE key = $key AND reason IS NULL
    ) AS matched
    WHERE stripped IS NULL OR NOT $transforms OR regexp_extract(national, $prefix, $last_group) = ''
) AS read
