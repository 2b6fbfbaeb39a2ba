/* Countries written as names or common forms in the loaded customers (`raw`) replaced by their ISO */
/* 3166 alpha-2 codes (`country_codes_found`: raw cell, upper-case code, from the sync's lookup). */
UPDATE raw SET country = country_codes_found.code
FROM country_codes_found
WHERE
  raw.country = country_codes_found.raw
