/* The distinct country cells of the loaded customers (`raw`) that are not a two-letter code, for the */
/* sync to look up as country names (shared.datasources.sync._country_codes). */
SELECT DISTINCT
  country
FROM raw
WHERE
  NOT country IS NULL AND NOT REGEXP_LIKE(country, '^(?:[A-Za-z]{2})$')
