-- The numbers the engine read (phone_numbers) into phone_rules, as the Python normaliser decides them:
-- a national number of 2 to 17 digits of a possible length by its calling code's main plan
-- (phone_lengths) is hashed as the calling code and the number (E.164 without '+'); otherwise
-- '' and why not. The numbers left (phones_left, numbered from 1) are the Python normaliser's.
INSERT INTO phone_rules
SELECT
    numbers.country_key,
    numbers.phone_text,
    CASE WHEN decided.reason IS NULL THEN sha256(decided.country_code || decided.nsn) ELSE '' END,
    decided.reason
FROM (
    SELECT
        read.n,
        read.country_code,
        national.nsn,
        CASE
            WHEN read.reason IS NOT NULL THEN read.reason
            WHEN length(national.nsn) < 2 THEN 'phone_too_short'
            WHEN length(national.nsn) > 17 THEN 'phone_too_long'
            ELSE lengths.reason
        END AS reason
    FROM phone_numbers AS read
    LEFT JOIN phone_nsn AS national ON national.n = read.n
    LEFT JOIN phone_codes AS codes ON codes.cc = read.country_code
    LEFT JOIN phone_lengths AS lengths ON lengths.key = codes.key AND lengths.length = length(national.nsn)
    WHERE read.reason IS NOT NULL OR national.nsn IS NOT NULL
) AS decided
JOIN distinct_phones AS numbers ON numbers.n = decided.n;
CREATE OR REPLACE TABLE phones_left AS
SELECT row_number() OVER () AS n, numbers.country_key, numbers.plan, numbers.phone_text
FROM distinct_phones AS numbers
ANTI JOIN (SELECT n FROM phone_numbers WHERE reason IS NOT NULL UNION ALL SELECT n FROM phone_nsn) AS read
    ON read.n = numbers.n
