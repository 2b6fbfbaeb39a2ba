-- Which users are uploaded, and in which batch: of the users with a usable e-mail or phone, the first
-- of each user_id in file order (a later one is a duplicate), numbered in file order into batches of
-- $batch_size from batch $first_batch (batch n always holds the same rows, so an upload resumes after
-- the last acknowledged one). The engine de-duplicates, spilling to disk past its memory limit; no
-- set of ids in Python.
CREATE OR REPLACE TABLE kept AS
SELECT pos, (row_number() OVER (ORDER BY pos) - 1) // $batch_size + $first_batch AS batch
FROM (
    SELECT pos, row_number() OVER (PARTITION BY user_id ORDER BY pos) AS nth
    FROM normalised
    WHERE usable
) AS usable
WHERE nth = 1
