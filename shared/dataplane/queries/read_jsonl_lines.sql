-- A JSON Lines file into `raw_lines`, one row per physical line: `record` is the line number, `line`
-- its text (NULL when blank). No quote applies; the delimiter is \x01, which JSON never holds unescaped.
CREATE OR REPLACE TABLE raw_lines AS
SELECT ordinality AS record, line
FROM read_csv(
    $path,
    columns = {'line': 'VARCHAR'},
    header = false,
    delim = $delimiter,
    quote = '',
    escape = '',
    auto_detect = false,
    strict_mode = false
) WITH ORDINALITY
