-- The distinct phone numbers (activation_distinct_phones) the engine reads itself, as libphonenumber
-- reads them (shared.audiences.phones.read_phone): those written with ASCII digits, spaces, dots,
-- hyphens and brackets only, a '+' only first, 3 to 17 digits. Such a number has no extension, no
-- letters and no other script's digits, so parse sees exactly its digits; the rest (and anything a
-- later step cannot decide) is left to the Python normaliser. Per number: the plan's region
-- (phone_regions: a region libphonenumber has a plan for, else NULL) and where each stands:
-- intl, digits that start with a country calling code (written with '+', or without a plan, which
-- read_phone reads as '+' and its digits without leading zeros); national, digits read by the
-- region's plan (of a region with at least $least such numbers: Python reads a few numbers sooner
-- than the engine runs a query for their plan); reason, a number already decided (without a plan, a
-- national number: one leading 0). activation_phone_idd and activation_phone_country_codes go on.
CREATE OR REPLACE TABLE phone_steps AS
WITH written AS MATERIALIZED (
    -- each number's digits worked out once (the engine would otherwise repeat the expression)
    SELECT
        numbers.n,
        regions.region,
        starts_with(numbers.phone_text, '+') AS plus,
        -- only digits and these are left (the WHERE below): plain replaces are the cheapest way
        replace(replace(replace(replace(replace(replace(
            numbers.phone_text, ' ', ''), '(', ''), ')', ''), '.', ''), '-', ''), '+', '') AS digits
    FROM distinct_phones AS numbers
    LEFT JOIN phone_regions AS regions ON regions.region = upper(numbers.plan)
    WHERE length(numbers.phone_text) <= 64 AND regexp_full_match(numbers.phone_text, '\+?[0-9 ().-]*')
),
forms AS (
    SELECT
        n,
        region,
        plus,
        digits,
        starts_with(digits, '0') AND NOT starts_with(digits, '00') AS national_zero
    FROM written
    WHERE length(digits) BETWEEN 3 AND 17
),
counted AS (
    SELECT region, count(*) AS nationals FROM forms WHERE NOT plus AND region IS NOT NULL GROUP BY region
)
SELECT
    forms.n,
    forms.region,
    CASE
        WHEN forms.plus THEN forms.digits
        WHEN forms.region IS NULL AND NOT forms.national_zero THEN ltrim(forms.digits, '0')
    END AS intl,
    CASE WHEN NOT forms.plus AND counted.nationals >= $least THEN forms.digits END AS national,
    CASE WHEN NOT forms.plus AND forms.region IS NULL AND forms.national_zero THEN 'unknown_country_code' END AS reason,
    false AS idd
FROM forms
LEFT JOIN counted ON counted.region = forms.region
WHERE forms.plus OR forms.region IS NOT NULL OR forms.national_zero OR length(ltrim(forms.digits, '0')) >= 3
