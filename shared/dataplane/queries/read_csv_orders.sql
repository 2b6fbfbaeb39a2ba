-- An orders CSV file into `raw`: every cell as text (NULL for an empty cell), the record's position in
-- the file (`record`, 1 for the first record after the header), every service column present (NULL
-- where the file has none). The file's columns are named by the mapping ($columns: position -> service
-- column). As the csv module reads a row: missing cells are empty (null_padding, which needs the
-- serial reader when a quoted cell holds a line break) and cells past the header's are ignored
-- (strict_mode off). A line the parser cannot read at all goes to the rejects table. Text after a
-- closing quote and a quote after a field's one leading space it reads otherwise than the csv module:
-- the sync refuses a file holding one, but for two spaced shapes it reads as the writer meant
-- (sync._check_quotes, list_chunks.first_misread_quote).
CREATE OR REPLACE TABLE raw AS
SELECT * FROM (
    SELECT
        CAST(NULL AS BIGINT) AS record,
        CAST(NULL AS VARCHAR) AS order_id,
        CAST(NULL AS VARCHAR) AS user_id,
        CAST(NULL AS VARCHAR) AS product_id,
        CAST(NULL AS VARCHAR) AS quantity,
        CAST(NULL AS VARCHAR) AS amount,
        CAST(NULL AS VARCHAR) AS "timestamp"
    LIMIT 0
)
UNION ALL BY NAME
SELECT ordinality AS record, * EXCLUDE (ordinality)
FROM read_csv(
    $path,
    delim = $delimiter,
    quote = $quote,
    escape = $escape,
    encoding = $encoding,
    header = true,
    auto_detect = false,
    columns = $columns,
    strict_mode = false,
    null_padding = true,
    parallel = false,
    store_rejects = true,
    rejects_table = 'parser_rejects',
    rejects_scan = 'parser_scans'
) WITH ORDINALITY
