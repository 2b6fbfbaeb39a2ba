-- The distinct country cells of the loaded customers (`raw`) that are not a two-letter code, for the
-- sync to look up as country names (shared.datasources.sync._country_codes).
SELECT DISTINCT country
FROM raw
WHERE country IS NOT NULL AND NOT regexp_matches(country, '^(?:[A-Za-z]{2})$')
