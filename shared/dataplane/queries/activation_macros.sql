-- Helpers of the activation queries (docs/platform-notes.md §3.7), as macros so every query applies
-- them alike. py_strip is Python's str.strip(): it trims every character str.isspace() calls white
-- space (by code point, as comparisons: an IN list of this length becomes a join; a unit test checks
-- the list against Python), and is_blank says nothing
-- else is there; both look at the first and last characters first, as most values have no white
-- space to trim. is_ascii (as many bytes as characters): the bulk path lower-cases only ASCII text,
-- where the engine's lower() and Python's agree; other text goes to the Python normaliser.
-- is_hex64: an identifier that is already a SHA-256 digest.
CREATE OR REPLACE MACRO is_space(code) AS CASE
    WHEN code <= 32 THEN code BETWEEN 9 AND 13 OR code >= 28
    WHEN code < 133 THEN false
    ELSE code = 133 OR code = 160 OR code = 5760 OR code BETWEEN 8192 AND 8202 OR code = 8232 OR code = 8233
        OR code = 8239 OR code = 8287 OR code = 12288
END;
CREATE OR REPLACE MACRO py_strip(x) AS CASE
    WHEN is_space(ascii(x)) OR is_space(ascii(right(x, 1)))
        THEN regexp_replace(x, '^[\x{9}\x{a}\x{b}\x{c}\x{d}\x{1c}\x{1d}\x{1e}\x{1f}\x{20}\x{85}\x{a0}\x{1680}\x{2000}\x{2001}\x{2002}\x{2003}\x{2004}\x{2005}\x{2006}\x{2007}\x{2008}\x{2009}\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]+|[\x{9}\x{a}\x{b}\x{c}\x{d}\x{1c}\x{1d}\x{1e}\x{1f}\x{20}\x{85}\x{a0}\x{1680}\x{2000}\x{2001}\x{2002}\x{2003}\x{2004}\x{2005}\x{2006}\x{2007}\x{2008}\x{2009}\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]+$', '', 'g')
    ELSE x
END;
CREATE OR REPLACE MACRO is_blank(x) AS CASE
    WHEN x = '' THEN true
    WHEN is_space(ascii(x)) THEN regexp_matches(x, '^[\x{9}\x{a}\x{b}\x{c}\x{d}\x{1c}\x{1d}\x{1e}\x{1f}\x{20}\x{85}\x{a0}\x{1680}\x{2000}\x{2001}\x{2002}\x{2003}\x{2004}\x{2005}\x{2006}\x{2007}\x{2008}\x{2009}\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]*$')
    ELSE false
END;
CREATE OR REPLACE MACRO is_ascii(x) AS strlen(x) = length(x);
CREATE OR REPLACE MACRO is_hex64(x) AS CASE WHEN length(x) = 64 THEN regexp_matches(x, '^[0-9a-fA-F]{64}$') ELSE false END;
CREATE OR REPLACE MACRO blank_as_null(x) AS CASE WHEN is_blank(x) THEN NULL ELSE x END;
-- A snapshot cell (shared.audiences.snapshot.csv_safe_text): a text a spreadsheet would run as a formula
-- gets a leading quote, unless it is a sign and nothing but digits, spaces and phone punctuation.
CREATE OR REPLACE MACRO csv_safe(x) AS CASE
    WHEN x IS NULL THEN ''
    WHEN (
        starts_with(x, '=') OR starts_with(x, '+') OR starts_with(x, '-') OR starts_with(x, '@')
        OR starts_with(x, chr(9)) OR starts_with(x, chr(13))
    ) AND NOT regexp_matches(x, '^[+-][\p{Nd} ().\-/]*$') THEN '''' || x
    ELSE x
END;
-- A CSV field as Python's csv module writes it (QUOTE_MINIMAL, '"' doubled): quoted when it holds a
-- comma, a quote or a line break.
CREATE OR REPLACE MACRO csv_field(x) AS CASE
    WHEN regexp_matches(x, '[",\r\n]') THEN '"' || replace(x, '"', '""') || '"'
    ELSE x
END
