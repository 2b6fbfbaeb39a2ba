-- Each number of phone_steps with its calling code and national number, as parse extracts them: the
-- digits after '+' or an international prefix start with a calling code (phone_codes; calling codes
-- are prefix-free and none starts with 0, so at most one of the first one to three digits is one),
-- read by that code's main plan (key); a national number by its region's plan and code. Decided here:
-- too short after the international prefix or the code, and an unknown calling code after an
-- international prefix or without a plan (after '+' with a plan, parse reads the number again
-- nationally: Python's). Rows with neither reason nor national are the Python normaliser's.
CREATE OR REPLACE TABLE phone_numbers AS
SELECT n, key, country_code, CASE WHEN reason IS NULL THEN national END AS national, reason
FROM (
    SELECT
        n,
        coalesce(code_key, region_key) AS key,
        coalesce(code, region_code) AS country_code,
        CASE WHEN intl IS NOT NULL THEN substr(intl, length(code) + 1) ELSE national END AS national,
        CASE
            WHEN reason IS NOT NULL THEN reason
            WHEN intl IS NOT NULL AND length(intl) <= 2 THEN 'phone_too_short'
            WHEN intl IS NOT NULL AND code IS NULL AND (idd OR region_key IS NULL) THEN 'unknown_country_code'
            WHEN intl IS NOT NULL AND code IS NOT NULL AND length(intl) - length(code) < 2 THEN 'phone_too_short'
        END AS reason
    FROM (
        SELECT
            steps.n,
            steps.intl,
            steps.national,
            steps.reason,
            steps.idd,
            steps.region AS region_key,
            regions.cc AS region_code,
            coalesce(one.cc, two.cc, three.cc) AS code,
            coalesce(one.key, two.key, three.key) AS code_key
        FROM phone_steps AS steps
        LEFT JOIN phone_regions AS regions ON regions.region = steps.region
        LEFT JOIN phone_codes AS one ON one.cc = substr(steps.intl, 1, 1)
        LEFT JOIN phone_codes AS two ON two.cc = substr(steps.intl, 1, 2)
        LEFT JOIN phone_codes AS three ON three.cc = substr(steps.intl, 1, 3)
    ) AS coded
) AS read
WHERE reason IS NOT NULL OR (national IS NOT NULL AND country_code IS NOT NULL);
CREATE OR REPLACE TABLE phone_nsn (n BIGINT, nsn VARCHAR)
